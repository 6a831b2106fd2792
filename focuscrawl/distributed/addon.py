"""The distributed-mode add-on: one crawl shared by many workers through Redis, in any project.

    ADDONS = {"focuscrawl.addon.FocusCrawl": 0,
              "focuscrawl.distributed.addon.Distributed": 10}      # settings/distributed.py
    scrapy crawl topic -s 'ADDONS={"focuscrawl.distributed.addon.Distributed": 10}' ...

The second form is how a Scrapyd job (which cannot choose the settings module) becomes a worker:
pass the same ``-d setting=ADDONS=...`` to schedule.json.  ``-s ADDONS`` replaces the project's
whole dict, so this add-on applies ``FocusCrawl`` first when ``ADDONS`` does not name it.  It sets
the Redis scheduler, puts the Redis politeness middleware in PolitenessMiddleware's place, the
cluster's robots.txt middleware in RobotsTxtMiddleware's (if that is on) and the extension that
owns the worker's link to Redis (``RedisServices``) in FocusServices' place, adds the spider
middleware that tells the worker when a page's outlinks are all there
(``PageOutputMiddleware``), and gives the ``FOCUS_REDIS_*``, ``REDIS_URL`` and
``CONCURRENT_ITEMS`` defaults and the distributed values of other settings (a default feed per
worker, best-first) declared in ``focuscrawl.config``; anything given explicitly on the command
line (``-s``) wins.  After ``FocusCrawl`` (a larger number).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.settings import get_settings_priority

from focuscrawl import config
from focuscrawl.seam.addon import FocusCrawl, apply_default_feed, enabled
from focuscrawl.seam.middlewares.politeness import PolitenessMiddleware
from focuscrawl.seam.middlewares.robots import RobotsTxtMiddleware
from focuscrawl.seam.services import FocusServices

from .connection import RedisServices
from .frontier import DEFAULT_STRATEGY
from .frontier import STRATEGIES as DISTRIBUTED_STRATEGIES
from .pagemw import PageOutputMiddleware
from .politeness import RedisPolitenessMiddleware
from .robots import RedisRobotsTxtMiddleware

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

SCHEDULER: str = config.OPTIONS["SCHEDULER"].distributed
POLITENESS_ORDER = 950
SERVICES_ORDER = 0
PAGE_OUTPUT_ORDER = 2
#: REDIS_URL, FOCUS_REDIS_*, FEED_URI_PARAMS, CONCURRENT_ITEMS (declared in focuscrawl.config)
DEFAULTS: dict[str, Any] = config.defaults("distributed")
#: the settings whose distributed value differs (SCHEDULER and FOCUS_STRATEGY: see below)
OTHER_VALUES: dict[str, Any] = {
    name: option.distributed for name, option in config.OPTIONS.items()
    if option.distributed is not None and name not in ("SCHEDULER", "FOCUS_STRATEGY")}


class Distributed:
    def __init__(self, crawler: Crawler | None = None) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Distributed:
        return cls(crawler)

    def update_settings(self, settings: BaseSettings) -> None:
        if not enabled(settings):  # -s ADDONS={...Distributed...} replaced the project's dict
            FocusCrawl(self.crawler).update_settings(settings)
        for name, value in {**DEFAULTS, **OTHER_VALUES}.items():
            settings.set(name, value, priority="addon")
        apply_default_feed(settings, getattr(self.crawler, "spidercls", None))  # per worker
        # a settings module's SCHEDULER (project priority) gives way; a -s SCHEDULER does not
        if (settings.getpriority("SCHEDULER") or 0) <= get_settings_priority("project"):
            settings.set("SCHEDULER", SCHEDULER, priority="project")
        # the learned order is single-process: a worker defaults to best-first unless told
        if ((settings.getpriority("FOCUS_STRATEGY") or 0) <= get_settings_priority("project")
                and settings.get("FOCUS_STRATEGY") not in DISTRIBUTED_STRATEGIES):
            settings.set("FOCUS_STRATEGY", DEFAULT_STRATEGY, priority="project")
        try:
            settings.replace_in_component_priority_dict(
                "DOWNLOADER_MIDDLEWARES", PolitenessMiddleware, RedisPolitenessMiddleware)
        except KeyError:  # not there (or switched off): add ours at its usual place
            settings.set_in_component_priority_dict(
                "DOWNLOADER_MIDDLEWARES", RedisPolitenessMiddleware, POLITENESS_ORDER)
        try:  # robots.txt once per cluster; switched off or left out, it stays so
            settings.replace_in_component_priority_dict(
                "DOWNLOADER_MIDDLEWARES", RobotsTxtMiddleware, RedisRobotsTxtMiddleware)
        except KeyError:
            pass
        settings.set_in_component_priority_dict("SPIDER_MIDDLEWARES", PageOutputMiddleware,
                                                PAGE_OUTPUT_ORDER)
        try:
            settings.replace_in_component_priority_dict("EXTENSIONS", FocusServices, RedisServices)
        except KeyError:
            settings.set_in_component_priority_dict("EXTENSIONS", RedisServices, SERVICES_ORDER)

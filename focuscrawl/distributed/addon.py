"""The distributed-mode add-on: ``settings.distributed``'s switches for any settings module.

    ADDONS = {"focuscrawl.distributed.addon.Distributed": 10}      # a project's settings
    scrapy crawl topic -s 'ADDONS={"focuscrawl.distributed.addon.Distributed": 10}' ...

This is how a Scrapyd job (which cannot choose the settings module) becomes a worker: pass the
same ``-d setting=ADDONS=...`` to schedule.json.  It sets the Redis scheduler, puts the Redis
politeness middleware in PolitenessMiddleware's place, the cluster's robots.txt middleware in
RobotsTxtMiddleware's (if that is on) and the extension that owns the worker's
link to Redis (``RedisServices``) in FocusServices' place, adds the spider middleware that
tells the worker when a page's outlinks are all there (``PageOutputMiddleware``), and gives
the ``FOCUS_REDIS_*``, ``REDIS_URL`` and ``CONCURRENT_ITEMS`` defaults of
``focuscrawl.config`` (as ``settings.distributed`` does); anything given explicitly on the
command line (``-s``) wins.  After
``focuscrawl.seam.addon.FocusCrawl`` if both are used (a larger number).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.settings import get_settings_priority

from focuscrawl import config
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
    from scrapy.settings import BaseSettings

SCHEDULER: str = config.OPTIONS["SCHEDULER"].distributed
POLITENESS_ORDER = 950
SERVICES_ORDER = 0
PAGE_OUTPUT_ORDER = 2
#: REDIS_URL, FOCUS_REDIS_*, FEED_URI_PARAMS, CONCURRENT_ITEMS (declared in focuscrawl.config)
DEFAULTS: dict[str, Any] = config.defaults("distributed")


class Distributed:
    def update_settings(self, settings: BaseSettings) -> None:
        for name, value in DEFAULTS.items():
            settings.set(name, value, priority="addon")
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

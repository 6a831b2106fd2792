"""The focuscrawl Scrapy add-on: the one way focuscrawl is switched on, in any Scrapy project.

    # settings.py of any Scrapy project (focuscrawl's own settings/ says the same)
    ADDONS = {"focuscrawl.addon.FocusCrawl": 0}

applies everything focuscrawl needs, from ``focuscrawl.config``: ``FocusScheduler``, every
focuscrawl downloader/spider middleware, item pipeline and extension, every ``FOCUS_*``
default, the Scrapy settings that would fight focuscrawl's politeness (a second delay, a second
per-domain cap, a throttle, a second robots.txt check), the download handlers (http(s) by the
handler that re-sends nothing behind the politeness, no other scheme) and the crash-safe feeds
(JSON lines, Parquet).  Everything is set at Scrapy's ``addon`` priority: a value the project's
settings, a spider or ``-s`` gives explicitly wins, a component the project maps to ``None``
stays off, and in a dict setting (``DOWNLOAD_HANDLERS``, ``FEED_EXPORTERS``, ...) an entry the
project names itself wins over ours.  JavaScript rendering (``FOCUS_RENDER``,
``FOCUS_RENDER_DOMAINS``, ``-a render=js``), replay (``FOCUS_REPLAY``) and the default feed of a
spider that asks for one (``focus_default_feed = True``: the topic spider) are configured here
too, once the spider exists (Scrapy builds it before it loads add-ons).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.misc import load_object

from focuscrawl import config
from focuscrawl.seam.render import configure_rendering, spider_mode
from focuscrawl.seam.replay import configure_replay

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

SCHEDULER: str = config.default("SCHEDULER")
COMPONENT_SETTINGS = tuple(config.COMPONENTS)
DICT_SETTINGS = tuple(name for name, option in config.OPTIONS.items()
                      if option.kind == "dict" and "addon" in option.scope)


def focus_defaults() -> dict[str, Any]:
    """The settings the add-on applies: name -> value (component dicts: focuscrawl's).

    All from ``focuscrawl.config``; no module named ``settings`` is read (in a user's project
    that name is their own).
    """
    return config.addon_defaults()


def merge_dict_setting(settings: BaseSettings, name: str, ours: dict[str, Any]) -> None:
    """``name`` = ours, with every entry given explicitly (project, spider, ``-s``) kept."""
    merged = {**ours, **settings.getdict(name)}
    priority = max(settings.getpriority(name) or 0, SETTINGS_PRIORITIES["addon"])
    settings.set(name, merged, priority=priority)


def apply_default_feed(settings: BaseSettings, spidercls: type | None) -> None:
    """A spider that asks for it writes JSON lines to FOCUS_DEFAULT_FEED when the crawl names
    no feed (-o/-O/FEEDS); called again by the distributed add-on with its own file name."""
    if not getattr(spidercls, "focus_default_feed", False):
        return
    if (settings.getpriority("FEEDS") or 0) > SETTINGS_PRIORITIES["addon"]:
        return  # the crawl names its feeds (-o, -O, FEEDS), even none
    path = config.get(settings, "FOCUS_DEFAULT_FEED")
    settings.set("FEEDS", {path: {"format": "jsonlines"}} if path else {}, priority="addon")


class FocusCrawl:
    """``ADDONS = {"focuscrawl.addon.FocusCrawl": 0}``: see the module docstring."""

    def __init__(self, crawler: Crawler | None = None) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FocusCrawl:
        return cls(crawler)

    def update_settings(self, settings: BaseSettings) -> None:
        for name, value in focus_defaults().items():
            if name in COMPONENT_SETTINGS:
                for path, order in value.items():
                    settings.setdefault_in_component_priority_dict(name, load_object(path), order)
            elif name in DICT_SETTINGS:
                merge_dict_setting(settings, name, value)
            else:
                settings.set(name, value, priority="addon")
        scheduler = settings.get("SCHEDULER")
        if load_object(scheduler) is not load_object(SCHEDULER):
            logger.warning("focuscrawl add-on: SCHEDULER is %s, set explicitly; the focused "
                           "frontier and per-server politeness are off", scheduler)
        crawler = self.crawler
        spider = getattr(crawler, "spider", None) if crawler is not None else None
        configure_rendering(settings, spider_mode(spider))  # -a render=js, FOCUS_RENDER*
        configure_replay(settings)  # FOCUS_REPLAY: answer from a WARC
        apply_default_feed(settings, getattr(crawler, "spidercls", None))


def enabled(settings: BaseSettings) -> bool:
    """Whether ``ADDONS`` switches FocusCrawl on."""
    return any(order is not None and load_object(path) is FocusCrawl
               for path, order in settings.getdict("ADDONS").items())

"""The focuscrawl Scrapy add-on: the focused scheduler and its components in any Scrapy project.

    # settings.py of any Scrapy project
    ADDONS = {"focuscrawl.seam.addon.FocusCrawl": 0}

switches on what focuscrawl's own project switches on -- ``FocusScheduler`` (and any other
setting naming a focuscrawl class), every ``focuscrawl.*`` downloader/spider middleware, item
pipeline and extension, every ``FOCUS_*`` default and the Scrapy settings that would fight
focuscrawl's politeness (a second delay, a second per-domain cap, a throttle, a second
robots.txt check), and the http(s) download handler that re-sends nothing behind the
politeness (unless the project names its own) -- taken from ``focuscrawl.config``, as the
project's own settings module does, so that the add-on and the project never disagree.
Everything is set at Scrapy's ``addon`` priority: a value the project's settings, a spider or
``-s`` gives explicitly wins, and a component the project maps to ``None`` stays off.
JavaScript rendering is switched on exactly as in the project (``FOCUS_RENDER``,
``FOCUS_RENDER_DOMAINS``, ``-a render=js``).
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


def focus_defaults() -> dict[str, Any]:
    """The settings the add-on applies: name -> value (component dicts: focuscrawl's).

    Every ``FOCUS_*`` default, the Scrapy settings focuscrawl needs (``SCHEDULER``,
    ``DOWNLOAD_DELAY``, ...) and the component dicts, all from ``focuscrawl.config``:
    the project's settings module takes the same, and no module named ``settings`` is read
    (in a user's project that name is their own).
    """
    values = config.defaults("addon")
    values.update({name: dict(paths) for name, paths in config.COMPONENTS.items()})
    return values


class FocusCrawl:
    """``ADDONS = {"focuscrawl.seam.addon.FocusCrawl": 0}``: see the module docstring."""

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
            else:
                settings.set(name, value, priority="addon")
        handlers = settings.getdict("DOWNLOAD_HANDLERS")
        for scheme in ("http", "https"):
            handlers.setdefault(scheme, config.HTTP_HANDLER)  # a project's own one is kept
        priority = max(settings.getpriority("DOWNLOAD_HANDLERS") or 0,
                       SETTINGS_PRIORITIES["addon"])
        settings.set("DOWNLOAD_HANDLERS", handlers, priority=priority)
        scheduler = settings.get("SCHEDULER")
        if load_object(scheduler) is not load_object(SCHEDULER):
            logger.warning("focuscrawl add-on: SCHEDULER is %s, set explicitly; the focused "
                           "frontier and per-server politeness are off", scheduler)
        # the spider already exists (Scrapy builds it before it loads add-ons): its -a render
        spider = getattr(self.crawler, "spider", None) if self.crawler is not None else None
        configure_rendering(settings, spider_mode(spider))
        configure_replay(settings)  # FOCUS_REPLAY: answer from a WARC, as the topic spider does

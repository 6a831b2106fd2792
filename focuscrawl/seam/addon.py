"""The focuscrawl Scrapy add-on: the focused scheduler and its components in any Scrapy project.

    # settings.py of any Scrapy project
    ADDONS = {"focuscrawl.seam.addon.FocusCrawl": 0}

switches on what focuscrawl's own project switches on -- ``FocusScheduler`` (and any other
setting naming a focuscrawl class), every ``focuscrawl.*`` downloader/spider middleware, item
pipeline and extension, and every ``FOCUS_*`` default -- read from focuscrawl's settings module
(``settings/__init__.py``), so that the add-on and the project never disagree as components are
added there.  Everything is set at Scrapy's ``addon`` priority: a value the project's settings,
a spider or ``-s`` gives explicitly wins,
and a component the project maps to ``None`` stays off.  JavaScript rendering is switched on
exactly as in the project (``FOCUS_RENDER``, ``FOCUS_RENDER_DOMAINS``, ``-a render=js``).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import logging
import os
import sys
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from scrapy.utils.misc import load_object

from focuscrawl.seam.render import configure_rendering, spider_mode
from focuscrawl.seam.replay import configure_replay

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

SCHEDULER = "focuscrawl.seam.scheduler.FocusScheduler"
COMPONENT_SETTINGS = ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "ITEM_PIPELINES",
                      "EXTENSIONS")
# Scrapy settings that would fight focuscrawl's politeness (a second delay, a second per-domain
# cap, a throttle that moves the delay, a second robots.txt check): focuscrawl's values, unless
# the project sets them explicitly.
SCRAPY_SETTINGS = ("CONCURRENT_REQUESTS_PER_DOMAIN", "DOWNLOAD_DELAY", "AUTOTHROTTLE_ENABLED",
                   "ROBOTSTXT_OBEY")


@lru_cache(maxsize=1)
def focus_settings() -> ModuleType:
    """focuscrawl's settings module, found beside the ``focuscrawl`` package.

    Not ``import settings``: in a user's project that name may well be their own module.  The
    lookup goes through sys.path's import machinery, so it also works from a zipped egg
    (Scrapyd).
    """
    import focuscrawl

    base = os.path.dirname(os.path.dirname(os.path.abspath(focuscrawl.__file__)))
    spec = importlib.machinery.PathFinder.find_spec("settings", [base])
    if spec is None or spec.loader is None:
        raise ImportError(f"focuscrawl's settings module was not found in {base}")
    loaded = sys.modules.get("settings")
    if loaded is not None and getattr(loaded, "__file__", None) == spec.origin:
        return loaded
    if loaded is None:
        found = importlib.util.find_spec("settings")
        if found is not None and found.origin == spec.origin:  # `import settings` is ours
            return importlib.import_module("settings")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not put in sys.modules: it must not shadow the user's
    return module


def focus_defaults() -> dict[str, Any]:
    """The settings the add-on applies: name -> value (component dicts: only focuscrawl's).

    Every ``FOCUS_*`` setting, every setting naming a focuscrawl class (``SCHEDULER``, ...),
    the focuscrawl entries of the component dicts, and :data:`SCRAPY_SETTINGS`.
    """
    module = focus_settings()
    values: dict[str, Any] = {}
    for name in dir(module):
        value = getattr(module, name)
        if (name.startswith("FOCUS_") or name in SCRAPY_SETTINGS
                or (name.isupper() and isinstance(value, str)
                    and value.startswith("focuscrawl."))):
            values[name] = value
    values["SCHEDULER"] = getattr(module, "SCHEDULER", SCHEDULER)
    for name in COMPONENT_SETTINGS:
        components = getattr(module, name, None) or {}
        values[name] = {path: order for path, order in components.items()
                        if isinstance(path, str) and path.startswith("focuscrawl.")}
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
        scheduler = settings.get("SCHEDULER")
        if load_object(scheduler) is not load_object(SCHEDULER):
            logger.warning("focuscrawl add-on: SCHEDULER is %s, set explicitly; the focused "
                           "frontier and per-server politeness are off", scheduler)
        # the spider already exists (Scrapy builds it before it loads add-ons): its -a render
        spider = getattr(self.crawler, "spider", None) if self.crawler is not None else None
        configure_rendering(settings, spider_mode(spider))
        configure_replay(settings)  # FOCUS_REPLAY: answer from a WARC, as the topic spider does

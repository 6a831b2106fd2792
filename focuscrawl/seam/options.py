"""The crawl order's and politeness options, read once from Scrapy settings and the spider's
arguments.

Both schedulers and the priority queue build their frontier from :func:`frontier_options`, so
a setting means the same everywhere and its default is the one ``focuscrawl.config``
declares.  Spider arguments (``-a strategy=... -a n=...``, validated by the spider as
``focus_options``) win over settings.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.settings import get_settings_priority

from focuscrawl import config
from focuscrawl.core.learned import examples_defaults
from focuscrawl.seam.arguments import arguments_of

#: FOCUS_FRONTIER_MEMORY's default (docs/benchmarks.md has the measurement behind it)
FRONTIER_MEMORY: int = config.default("FOCUS_FRONTIER_MEMORY")
#: ... and its default before: a JOBDIR crawl started under that default resumes under it
FRONTIER_MEMORY_BEFORE = 2_000_000
#: FOCUS_EXPLORE's default without examples before it became the learned order's ``EXPLORE``
#: (2.0): likewise
EXPLORE_BEFORE = 1.0

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

#: frontier option -> the setting it is read from (make_frontier's keyword arguments; the
#: learned order's are :class:`config.LearnedOptions`' fields)
FRONTIER_SETTINGS = {
    "strategy": "FOCUS_STRATEGY", "max_pages": "FOCUS_MAX_PAGES", "n": "FOCUS_BEST_N",
    "max_buffer": "FOCUS_MAX_BUFFER", "seed": "FOCUS_RANDOM_SEED",
    "distance_limit": "FOCUS_HOT_DISTANCE", "reorder": "FOCUS_REORDER",
    "weight": "FOCUS_DISTILLER_WEIGHT", "every": "FOCUS_DISTILLER_EVERY",
    "round_robin": "FOCUS_ROUND_ROBIN", "frontier_memory": "FOCUS_FRONTIER_MEMORY",
    "same_across_schemes": "FOCUS_SAME_ACROSS_SCHEMES",
    **{f.name: f.metadata["setting"] for f in dataclasses.fields(config.LearnedOptions)},
    "revisit": "FOCUS_REVISIT",
}


def frontier_options(settings: BaseSettings, spider: Any = None) -> dict[str, Any]:
    """``strategy``, ``max_pages``, ``keywords`` (when known) and the strategies' options."""
    options = {key: config.get(settings, name) for key, name in FRONTIER_SETTINGS.items()}
    # the papers' sequential crawler keeps Pant's batch barrier exactly
    options["work_conserving"] = not (config.get(settings, "FOCUS_STRICT_ORDER")
                                      or config.get(settings, "FOCUS_BEST_N_BARRIER"))
    published = arguments_of(spider)
    args = published.parsed if published is not None else None
    if args is not None:
        options["keywords"] = list(args.keywords)
    elif config.get(settings, "FOCUS_KEYWORDS"):
        options["keywords"] = config.get(settings, "FOCUS_KEYWORDS")
    if published is not None:
        options.update(published.frontier)
    # the learned order's defaults, stated where the user said whether the seeds are examples
    # (a JOBDIR compares the options it started with); else the order decides them, and a
    # JOBDIR keeps its verdict
    if options["examples"] is not None:
        for name, value in examples_defaults(bool(options["examples"])).items():
            if options[name] is None:
                options[name] = value
    return options


def strategy_without_keywords(settings: BaseSettings, spider: Any = None) -> str:
    """The crawl order when the default learned one has no keywords to learn from.

    A spider that reported bad arguments stops the crawl itself (breadth-first meanwhile); a
    spider of another project that has no keywords (and did not ask for the learned order)
    gets best-first, with a warning; asking for it without keywords is an error
    (NotConfigured)."""
    published = arguments_of(spider)
    if published is not None and published.error:
        return "breadth-first"  # nothing is fetched: the spider closes at start
    chosen = ("strategy" in (published.frontier if published is not None else {})
              or (settings.getpriority("FOCUS_STRATEGY") or 0) > get_settings_priority("project"))
    if chosen:
        raise NotConfigured("the learned strategy needs keywords: give the spider "
                            "-a keywords=... or set FOCUS_KEYWORDS")
    logger.warning("focuscrawl: no keywords (FOCUS_KEYWORDS) for the default learned "
                   "strategy; crawling best-first")
    return "best-first"


def politeness_options(settings: BaseSettings) -> dict[str, Any]:
    """Per-server limits (HostPolicy's arguments; the Redis frontier's too)."""
    return config.PolitenessOptions.from_settings(settings).as_dict()

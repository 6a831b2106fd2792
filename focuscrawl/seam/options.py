"""The crawl order's and politeness options, read once from Scrapy settings and the spider's
arguments.

Both schedulers and the priority queue build their frontier from :func:`frontier_options`, so
a setting means the same everywhere and its default is the one ``settings/__init__.py``
documents.  Spider arguments (``-a strategy=... -a n=...``, validated by the spider as
``focus_options``) win over settings.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.settings import get_settings_priority

from focuscrawl.core.frontier import DEFAULT_STRATEGY
from focuscrawl.core.frontier.learned import RERANK_BATCH, RERANK_MAX, examples_defaults

#: FOCUS_FRONTIER_MEMORY's default (see settings/__init__.py for the measurement behind it)
FRONTIER_MEMORY = 500_000
#: ... and its default before: a JOBDIR crawl started under that default resumes under it
FRONTIER_MEMORY_BEFORE = 2_000_000
#: FOCUS_EXPLORE's default without examples before it became the learned order's ``EXPLORE``
#: (2.0): likewise
EXPLORE_BEFORE = 1.0

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)


def frontier_options(settings: BaseSettings, spider: Any = None) -> dict[str, Any]:
    """``strategy``, ``max_pages``, ``keywords`` (when known) and the strategies' options."""
    s = settings
    options: dict[str, Any] = {
        "strategy": s.get("FOCUS_STRATEGY", DEFAULT_STRATEGY),
        "max_pages": s.getint("FOCUS_MAX_PAGES", 2000),
        "n": s.getint("FOCUS_BEST_N", 256),
        "max_buffer": s.getint("FOCUS_MAX_BUFFER", 0),
        "seed": s.getint("FOCUS_RANDOM_SEED", 0),
        "distance_limit": s.getint("FOCUS_HOT_DISTANCE", 3),
        "reorder": s.get("FOCUS_REORDER", "none"),
        "weight": s.getfloat("FOCUS_DISTILLER_WEIGHT", 0.5),
        "every": s.getint("FOCUS_DISTILLER_EVERY", 50),
        "round_robin": s.getint("FOCUS_ROUND_ROBIN", 0),
        "frontier_memory": s.getint("FOCUS_FRONTIER_MEMORY", FRONTIER_MEMORY),
        "same_across_schemes": s.getbool("FOCUS_SAME_ACROSS_SCHEMES", True),
        "relevant_score": s.getfloat("FOCUS_RELEVANT_SCORE", 0.1),
        "explore": _float_or_none(s.get("FOCUS_EXPLORE")),
        "explore_hosts": _float_or_none(s.get("FOCUS_EXPLORE_HOSTS")),
        "discount": s.getfloat("FOCUS_LEARN_DISCOUNT", 0.5),
        "profile_score": _float_or_none(s.get("FOCUS_PROFILE_SCORE")),
        "memory": s.getint("FOCUS_LEARN_MEMORY", 5000),
        "learn_every": s.getint("FOCUS_LEARN_EVERY", 25),
        "rerank_max": s.getint("FOCUS_LEARN_RERANK", RERANK_MAX),
        "rerank_batch": s.getint("FOCUS_LEARN_RERANK_BATCH", RERANK_BATCH),
        "sibling": s.getfloat("FOCUS_SIBLING", 2.0),
        "sibling_window": _int_or_none(s.get("FOCUS_SIBLING_WINDOW")),
        "hub": _float_or_none(s.get("FOCUS_HUB")),
        "examples": s.getbool("FOCUS_EXAMPLES", False),
        # the papers' sequential crawler keeps Pant's batch barrier exactly
        "work_conserving": not (
            s.getbool("FOCUS_STRICT_ORDER", False) or s.getbool("FOCUS_BEST_N_BARRIER", False)
        ),
    }
    args = getattr(spider, "args", None)
    if args is not None:
        options["keywords"] = list(args.keywords)
    elif s.get("FOCUS_KEYWORDS"):
        options["keywords"] = s.get("FOCUS_KEYWORDS")
    options.update(getattr(spider, "focus_options", None) or {})
    # the learned order's defaults, stated (a JOBDIR compares the options it started with)
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
    if getattr(spider, "argument_error", None):
        return "breadth-first"  # nothing is fetched: the spider closes at start
    chosen = ("strategy" in (getattr(spider, "focus_options", None) or {})
              or (settings.getpriority("FOCUS_STRATEGY") or 0) > get_settings_priority("project"))
    if chosen:
        raise NotConfigured("the learned strategy needs keywords: give the spider "
                            "-a keywords=... or set FOCUS_KEYWORDS")
    logger.warning("focuscrawl: no keywords (FOCUS_KEYWORDS) for the default learned "
                   "strategy; crawling best-first")
    return "best-first"


def _float_or_none(value: Any) -> float | None:
    """A number, or None where the setting is unset (the strategy's own default applies)."""
    return None if value is None or value == "" else float(value)


def _int_or_none(value: Any) -> int | None:
    return None if value is None or value == "" else int(value)


def politeness_options(settings: BaseSettings) -> dict[str, Any]:
    """Per-server limits (HostPolicy's arguments; the Redis frontier's too)."""
    s = settings
    return {
        "concurrency": s.getint("FOCUS_CONCURRENCY_PER_SERVER", 1),
        "delay": s.getfloat("FOCUS_DELAY", 1.0),
        "slow_seconds": s.getfloat("FOCUS_SLOW_SECONDS", 5.0),
        "slow_factor": s.getfloat("FOCUS_SLOW_FACTOR", 2.0),
        "max_delay": s.getfloat("FOCUS_MAX_DELAY", 30.0),
    }

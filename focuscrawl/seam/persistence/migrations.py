"""JOBDIR snapshots written by older focuscrawl versions, brought up to today's shape.

One place for every compatibility rule: :func:`upgrade` runs on a loaded snapshot before the
crawl state is restored from it, and :func:`adopt` makes the live crawl take over the settings
an old crawl must resume under.  A rule goes when no JOBDIR of the version it serves is left.
"""

from __future__ import annotations

import logging
from typing import Any, cast

from focuscrawl.core.frontier import LocalFrontier
from focuscrawl.core.frontier.stores import StoreError
from focuscrawl.core.learned import EXPLORE, Learned, examples_defaults
from focuscrawl.core.learned.seeds import apply_examples_defaults
from focuscrawl.seam import options

logger = logging.getLogger(__name__)

#: the snapshot layout this focuscrawl writes and reads
STATE_VERSION = 1


def upgrade(state: dict[str, Any], current: dict[str, Any], where: str) -> dict[str, Any]:
    """Upgrade ``state`` (a snapshot read from ``where``) in place; the crawl-order options
    this run (asking ``current``) must take over from it.  StoreError for a snapshot of
    another layout."""
    if state.get("version") != STATE_VERSION:
        raise StoreError(f"{where} holds state version {state.get('version')}, this "
                         f"focuscrawl reads {STATE_VERSION}; use a new JOBDIR")
    saved = state.get("order_options")
    if saved is None:
        return {}
    # options that did not exist when the crawl began: it resumes under today's value, or
    # the value it in fact ran with
    saved.setdefault("frontier_memory", current.get("frontier_memory"))  # never spilled
    saved.setdefault("examples", False)
    saved.setdefault("explore_hosts", current.get("explore_hosts"))
    saved.setdefault("parent_expert", current.get("parent_expert"))
    saved.setdefault("earned_optimism", current.get("earned_optimism"))
    saved.setdefault("bandit_backlinks", current.get("bandit_backlinks"))
    # the bounded re-rank gives the same order while its frontier is under the bound
    saved.setdefault("rerank_max", current.get("rerank_max"))
    saved.setdefault("rerank_batch", current.get("rerank_batch"))
    taken: dict[str, Any] = {}
    # whether the seeds are examples: before the learned order could decide it from the
    # seeds, unsaid meant not, with the options that follow from it stated
    if saved["examples"] is False and current.get("examples") is None:
        taken["examples"] = False
        for name in examples_defaults(False):
            if current.get(name) is None and saved.get(name) is not None:
                taken[name] = saved[name]
    if "same_across_schemes" not in saved:  # as it began
        saved["same_across_schemes"] = taken["same_across_schemes"] = False
    # a default that changed: a crawl started under the old one resumes under it when this
    # run leaves the setting at today's (FOCUS_FRONTIER_MEMORY: its journal replays only under
    # the limit it spilled at), so an upgrade does not strand a crawl
    if (saved.get("frontier_memory") == options.FRONTIER_MEMORY_BEFORE
            and current.get("frontier_memory") == options.FRONTIER_MEMORY):
        taken["frontier_memory"] = options.FRONTIER_MEMORY_BEFORE
    # FOCUS_EXPLORE without examples (with examples the default is still 1.0; one saved with
    # them and resumed without them is refused by the options check)
    if saved.get("explore") == options.EXPLORE_BEFORE and current.get("explore") == EXPLORE:
        taken["explore"] = options.EXPLORE_BEFORE
    return taken


#: the options :func:`adopt` sets on the live frontier, and the setting each is read from
ADOPTED = {"frontier_memory": "FOCUS_FRONTIER_MEMORY", "explore": "FOCUS_EXPLORE",
           "examples": "FOCUS_EXAMPLES"}


def adopt(frontier: LocalFrontier, current: dict[str, Any], taken: dict[str, Any],
          where: str) -> None:
    """Make the live ``frontier`` and its options (``current``, changed in place) run under
    the settings an old crawl began with (:func:`upgrade`)."""
    learned = cast(Learned, frontier.valuation) if frontier.capabilities.learns else None
    for name, value in taken.items():
        current[name] = value
        if name == "same_across_schemes":
            frontier.same_across_schemes = value
        elif name == "frontier_memory":
            frontier.set_memory_limit(value)
        elif name == "examples" and learned is not None:
            learned.seeds.told = True  # the verdict it began with: not examples
            learned.seeds.examples = value
            apply_examples_defaults(learned, value, learned.auto_options)
        elif name == "explore" and learned is not None:
            learned.explore = value
        if name in ADOPTED:
            logger.info("JOBDIR %s: this crawl started under %s=%s (the default then) and "
                        "resumes under it", where, ADOPTED[name], value)

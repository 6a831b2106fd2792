"""The crawl orders by name: the seed papers' strategies and the learned one.  No Scrapy import.

Each order is a valuation (how a link is valued) and a queue policy (which URL goes out next),
composed by a :class:`QueueFrontier`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from typing import Any

from ..config import LearnedOptions, default
from .frontier.link import Capabilities
from .frontier.policies import Batches
from .frontier.queued import QueueFrontier
from .frontier.strategies import BestFirst, BreadthFirst, Cho, Distiller
from .frontier.valuation import Valuation
from .learned import Learned, learned_frontier


def _best_n_first(*, n: int = default("FOCUS_BEST_N"), work_conserving: bool = False,
                  seed: int = default("FOCUS_RANDOM_SEED"), **kw: Any) -> QueueFrontier:
    """Best-first's valuation, its top ``n`` URLs handed out as a batch (N=1: best-first)."""
    if n == 1:
        return QueueFrontier(BestFirst(), **kw)
    return QueueFrontier(BestFirst(), Batches(n, work_conserving=work_conserving, seed=seed),
                         name="best-n-first", **kw)


def _compose(valuation: Callable[..., Valuation], own: tuple[str, ...] = ()
             ) -> Callable[..., QueueFrontier]:
    """An order of ``valuation`` (given its ``own`` options) and the frontier's best-of
    policy (given the rest)."""
    def make(**kw: Any) -> QueueFrontier:
        mine = {name: kw.pop(name) for name in own if name in kw}
        return QueueFrontier(valuation(**mine), **kw)
    return make


STRATEGIES: dict[str, Callable[..., QueueFrontier]] = {
    "breadth-first": _compose(BreadthFirst),
    "cho": _compose(Cho, ("reorder",)),
    "cho-distance": _compose(partial(Cho, distance=True), ("reorder",)),
    "best-first": _compose(BestFirst),
    "best-n-first": _best_n_first,
    "distiller": _compose(Distiller, ("weight", "every")),
    "learned": learned_frontier,
}
#: each name's valuation (its declared capabilities), and whether it hands out batches
VALUATIONS: dict[str, tuple[type[Valuation], bool]] = {
    "breadth-first": (BreadthFirst, False), "cho": (Cho, False), "cho-distance": (Cho, False),
    "best-first": (BestFirst, False), "best-n-first": (BestFirst, True),
    "distiller": (Distiller, False), "learned": (Learned, False),
}
assert VALUATIONS.keys() == STRATEGIES.keys()
DEFAULT_STRATEGY = "learned"
# the options every order takes (the frontier's), and each one's own
_COMMON = {"max_buffer", "round_robin", "distance_limit", "frontier_memory",
           "same_across_schemes"}
_OPTIONS = {
    "cho": {"reorder"},
    "cho-distance": {"reorder"},
    "best-n-first": {"n", "work_conserving", "seed"},
    "distiller": {"weight", "every"},
    "learned": {"keywords"},
}
#: the learned order's options (one :class:`LearnedOptions`, not keyword arguments)
LEARNED_OPTIONS = frozenset(f.name for f in dataclasses.fields(LearnedOptions))


def make_frontier(name: str, **options: Any) -> QueueFrontier:
    """Build a strategy by name, passing only the options it understands (the learned
    order's as one :class:`LearnedOptions`)."""
    try:
        factory = STRATEGIES[name]
    except KeyError:
        raise ValueError(
            f"unknown strategy {name!r}; choose one of: {', '.join(STRATEGIES)}"
        ) from None
    allowed = _COMMON | _OPTIONS.get(name, set())
    kw = {k: v for k, v in options.items() if k in allowed and v is not None}
    if name == "learned":
        # None is a value here (the order decides); absent options take the declared defaults
        kw["options"] = LearnedOptions(**{k: v for k, v in options.items()
                                          if k in LEARNED_OPTIONS})
    return factory(**kw)


def register(name: str, make: Callable[..., QueueFrontier], valuation: type[Valuation], *,
             options: frozenset[str] = frozenset(), batches: bool = False) -> None:
    """An order of one's own, by ``name`` (``-a strategy=name``): ``make`` builds its frontier
    from the options every order takes and its own ``options`` (settings it reads)."""
    STRATEGIES[name] = make
    VALUATIONS[name] = (valuation, batches)
    _OPTIONS[name] = set(options)


def capabilities(name: str | None) -> Capabilities:
    """What the order named ``name`` does beyond the common interface (none if unknown)."""
    known = VALUATIONS.get(name or "")
    if known is None:
        return Capabilities()
    valuation, batches = known
    return dataclasses.replace(valuation.capabilities, batches=batches)

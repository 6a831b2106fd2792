"""The crawl orders by name: the seed papers' strategies and the learned one.  No Scrapy import."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..config import LearnedOptions
from .frontier.protocol import Capabilities, LocalFrontier
from .frontier.strategies import (
    BestFirst,
    BestNFirst,
    BreadthFirst,
    Cho,
    Distiller,
    QueueFrontier,
)
from .learned import Learned

STRATEGIES: dict[str, Callable[..., QueueFrontier]] = {
    "breadth-first": BreadthFirst,
    "cho": Cho,
    "cho-distance": lambda **kw: Cho(distance=True, **kw),
    "best-first": BestFirst,
    "best-n-first": BestNFirst,
    "distiller": Distiller,
    "learned": Learned,
}
#: the class behind each name (its declared capabilities)
CLASSES: dict[str, type[QueueFrontier]] = {
    "breadth-first": BreadthFirst, "cho": Cho, "cho-distance": Cho, "best-first": BestFirst,
    "best-n-first": BestNFirst, "distiller": Distiller, "learned": Learned,
}
assert CLASSES.keys() == STRATEGIES.keys()
DEFAULT_STRATEGY = "learned"
# the options each strategy understands, beyond the common ones
_COMMON = {"max_buffer", "round_robin", "seed", "distance_limit", "frontier_memory",
           "same_across_schemes"}
_OPTIONS = {
    "cho": {"reorder"},
    "cho-distance": {"reorder"},
    "best-n-first": {"n", "work_conserving"},
    "distiller": {"weight", "every"},
    "learned": {"keywords"},
}
#: the learned order's options (one :class:`LearnedOptions`, not keyword arguments)
LEARNED_OPTIONS = frozenset(f.name for f in dataclasses.fields(LearnedOptions))


def make_frontier(name: str, **options: Any) -> LocalFrontier:
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


def capabilities(name: str | None) -> Capabilities:
    """What the order named ``name`` does beyond the common interface (none if unknown)."""
    cls = CLASSES.get(name or "")
    return cls.capabilities if cls is not None else Capabilities()

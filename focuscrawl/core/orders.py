"""The crawl orders by name: the seed papers' strategies and the learned one.  No Scrapy import."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
    "learned": {"keywords", "relevant_score", "learn_every", "explore", "discount", "profile_score",
                "keyword_scale", "explore_split", "explore_hosts",
                "bits", "memory", "sibling", "sibling_window", "hub", "examples",
                "rerank_max", "rerank_batch", "parent_expert", "earned_optimism",
                "bandit_backlinks"},
}


def make_frontier(name: str, **options: Any) -> LocalFrontier:
    """Build a strategy by name, passing only the options it understands."""
    try:
        factory = STRATEGIES[name]
    except KeyError:
        raise ValueError(
            f"unknown strategy {name!r}; choose one of: {', '.join(STRATEGIES)}"
        ) from None
    allowed = _COMMON | _OPTIONS.get(name, set())
    return factory(**{k: v for k, v in options.items() if k in allowed and v is not None})


def capabilities(name: str | None) -> Capabilities:
    """What the order named ``name`` does beyond the common interface (none if unknown)."""
    cls = CLASSES.get(name or "")
    return cls.capabilities if cls is not None else Capabilities()

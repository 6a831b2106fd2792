"""A :class:`~.queued.QueueFrontier`'s snapshot and its restore (no Scrapy): plain, picklable
data, the policy's and the valuation's parts added by their own hooks."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Protocol

from ..fingerprints import FingerprintMap, FingerprintSet
from .linkgraph import LinkGraph
from .queues import Entry

if TYPE_CHECKING:
    from .bound import Bound
    from .policies import BestOf
    from .queues import ServerQueues
    from .spill import Spilled
    from .valuation import Valuation


class Kept(Protocol):
    """What a snapshot holds of a ``QueueFrontier``."""

    name: str
    seq: int
    entries: dict[str, Entry]
    done: FingerprintSet
    scores: FingerprintMap
    graph: LinkGraph | None
    stats: Counter[str]
    queues: ServerQueues
    bound: Bound | None
    policy: BestOf
    valuation: Valuation

    @property
    def spilled(self) -> Spilled | None: ...


def snapshot_frontier(f: Kept) -> dict[str, Any]:
    spilled = f.spilled
    state: dict[str, Any] = {
        "strategy": f.name,
        "seq": f.seq,
        "entries": [(*e.fields(), e.queued)
                    for e in sorted(f.entries.values(), key=lambda e: e.seq)],
        "done": f.done.to_bytes(),
        "scores": f.scores.to_state(),
        "graph": f.graph.snapshot() if f.graph is not None else None,
        "stats": dict(f.stats),
        "cursor": f.queues.cursor,  # round-robin: the queue read next
        "spilled": spilled.snapshot() if spilled is not None else None,
    }
    f.policy.snapshot(state)
    f.valuation.snapshot(state)
    return state


def restore_frontier(f: Kept, state: dict[str, Any]) -> None:
    if state["strategy"] != f.name:
        raise ValueError(f"saved frontier is {state['strategy']!r}, this crawl uses {f.name!r}")
    f.valuation.before_restore(state)
    f.seq = state["seq"]
    done = state["done"]  # fingerprints; a list of URLs in snapshots before them
    f.done = (FingerprintSet.from_bytes(done) if isinstance(done, bytes)
              else FingerprintSet(done))
    f.scores = FingerprintMap.from_state(state["scores"])  # a dict before
    if state["graph"] is not None:
        f.graph = LinkGraph.restore(state["graph"])
    f.stats = Counter(state["stats"])
    key, bound = f.valuation.key, f.bound
    for *fields, queued in state["entries"]:
        entry = Entry.from_fields(tuple(fields))
        f.entries[entry.url] = entry
        if queued:
            f.queues.push(entry, key(entry))
            if bound is not None:
                bound.push(entry)
    f.queues.cursor = state.get("cursor", 0)
    spilled = state.get("spilled")
    if spilled is not None:
        if f.spilled is None:
            raise ValueError("the saved frontier has URLs on disk; set "
                             "FOCUS_FRONTIER_MEMORY to resume it")
        f.spilled.restore(spilled)
    f.policy.after_restore(state)
    f.valuation.after_restore(state)

"""The learned order's state beyond the common frontier's (no Scrapy): what a snapshot keeps and
how a restore rebuilds the indexes from it, what a spilled link keeps of its features, and the
feature rows renumbered or re-scored."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fingerprints import FingerprintMap, fingerprint
from ..frontier.queues import Entry
from .seeds import apply_examples_defaults
from .slots import QueuedSlots


def snapshot_learned(order: Any) -> dict[str, Any]:
    """The ``"learned"`` part of a snapshot.  Links not scored yet stay pending (no flush: a
    snapshot must not change the state, or a crawl with JOBDIR would order differently from
    one without)."""
    scorer, trainer = order.scorer, order.trainer
    return {
        "store": scorer.store.snapshot(),
        "model": scorer.model.snapshot(),
        "profile": scorer.profile.snapshot(),
        "hosts": scorer.hosts.snapshot(),
        "dirs": scorer.dirs.snapshot(),
        "hubs": scorer.hubs.snapshot(),
        "mixture": scorer.mixture.snapshot(),
        "children": {k: list(v) for k, v in trainer.children.items()},
        "labels": trainer.labels.to_state(),
        "parents": trainer.parents.to_state(),
        "fetching": dict(order.fetching),
        "reached": dict(order.bandit.reached),
        "pending": [(e.url, slot) for e, slot in order.pending],
        "examples": (list(trainer.ex_slot), list(trainer.ex_label), list(trainer.ex_dyn),
                     dict(trainer.ex_of), trainer.ex_base),
        "rerank_cursor": order.reranker.queued.cursor,
        "seeds": order.seeds.snapshot(),
    }


def restore_store(order: Any, learned: dict[str, Any]) -> None:
    """Before the entries come back (their rows are in the store)."""
    order.scorer.store.restore(learned["store"])


def restore_learned(order: Any, learned: dict[str, Any]) -> None:
    """After the entries came back: the rest of the state, and the indexes rebuilt."""
    scorer, trainer = order.scorer, order.trainer
    scorer.model.restore(learned["model"])
    scorer.profile.restore(learned["profile"])
    scorer.project()
    scorer.hosts.restore(learned["hosts"])
    scorer.dirs.restore(learned["dirs"])
    scorer.hubs.restore(learned["hubs"])
    scorer.mixture.restore(learned.get("mixture"))  # not in snapshots before it
    # snapshots before the fingerprint maps kept URL strings as keys (and as parents)
    # kept as each page's URLs in page order (an older state may list a URL twice: its first
    # place stands)
    trainer.children = {_fp(k): {u: i for i, u in enumerate(dict.fromkeys(v))}
                        for k, v in learned["children"].items()}
    trainer.labels = FingerprintMap.from_state(learned["labels"])
    parents = learned["parents"]
    trainer.parents = FingerprintMap.from_state(
        {u: fingerprint(p) for u, p in parents.items()} if isinstance(parents, dict)
        else parents, "Q")
    order.fetching = dict(learned["fetching"])
    # not in snapshots made before the host bandit
    order.bandit.reached = dict(learned.get("reached", {}))
    order.bandit.reset()  # the index is built again at the next bandit turn
    entries = order.frontier.entries
    order.pending = [(entries[url], slot) for url, slot in learned["pending"]]
    slots, labels, dyn, ex_of, base = learned["examples"]
    trainer.ex_slot, trainer.ex_label, trainer.ex_dyn = list(slots), list(labels), list(dyn)
    trainer.ex_of, trainer.ex_base = {_fp(k): i for k, i in ex_of.items()}, base
    index = order.reranker.queued = QueuedSlots(max(256, scorer.store.rows))
    for entry in entries.values():
        if entry.queued and entry.extra is not None:
            index.set(entry.extra, entry, entry.score)
    index.cursor = learned.get("rerank_cursor", 0)  # not in snapshots before it
    seeds = learned.get("seeds")  # a crawl from before the verdict: see .migrations
    if seeds is not None:
        order.seeds.restore(seeds)
        if not order.seeds.told and not order.seeds.pending:
            apply_examples_defaults(order, bool(order.seeds.examples), order.auto_options,
                                    restoring=True)
    bound = order.frontier.bound
    if bound is not None:
        bound.rebuild(e for e in entries.values() if e.queued)


def _fp(key: int | str) -> int:
    """A key of a snapshot's map: a fingerprint, or a URL in snapshots from before them."""
    return fingerprint(key) if isinstance(key, str) else key


def pack_row(order: Any, entry: Entry) -> Any:
    """A spilled link keeps its feature row, not its text: exact (featurising again would see
    newer parent labels), smaller and much quicker to queue again.  Its slot is freed for the
    next compaction."""
    slot = entry.extra
    if slot is None:
        return None
    store = order.scorer.store
    row = store.row(slot)
    order.reranker.queued.clear(slot)
    store.free(slot)
    return row


def compact_rows(order: Any) -> None:
    """Compact the feature store: every holder of a slot number follows the renumbering."""
    mapping = order.scorer.store.compact()
    order.reranker.queued.remap(np.fromiter(mapping, dtype=np.int64, count=len(mapping)),
                                len(mapping))
    for entry in order.frontier.entries.values():
        if entry.extra is not None:
            entry.extra = mapping[entry.extra]
    order.trainer.remap(mapping)
    order.fetching = {u: mapping[s] for u, s in order.fetching.items()}


def rescore_reloaded(order: Any, entries: list[Entry]) -> None:
    """A batch back from disk is scored by today's model, not its frozen value (the frontier
    queues it right after this, and the order's index follows, ``Learned.queued``)."""
    live = [e for e in entries if e.extra is not None]
    if live:
        slots = np.fromiter((e.extra for e in live), dtype=np.int64, count=len(live))
        set_score = order.frontier.set_score
        for entry, value in zip(live, order.scorer.values(slots).tolist(), strict=True):
            set_score(entry, value)

"""Bounded memory for a frontier: its lowest-priority part spilled to SQLite (no Scrapy).

A crawl of a million pages discovers tens of millions of URLs, most of which it will never
fetch: they wait at the bottom of the frontier.  With ``frontier_memory`` set, a frontier keeps
at most that many URLs queued in memory; past it, the lowest-priority ones leave for a
:class:`SpillStore` (down to :data:`SPILL_TO` of the limit, in batches of :data:`BATCH_SHARE` of
it: a spill is one pass over the queue and a few writes, not per-link work), and when the
in-memory part falls under :data:`LOW_WATER` of the limit the best spilled batch comes back,
before the frontier could run dry.

The approximation, documented where the setting is: a spilled URL's priority is frozen at
spill time until it comes back.  Re-ranks (the learned order's, the distiller's hub weights,
Cho's promotions) do not see it, a link found again to it does not improve it (it counts as a
duplicate), and batches come back by the best priority they had when they left.  On its
return a URL is keyed again by the strategy's current rule (the learned order re-scores the
batch with today's model).

:class:`Spilling` is the component a frontier owns for this (``QueueFrontier.spilling``, None
without a limit); the order's valuation says what a spilled entry keeps and how it comes back
(``Valuation.pack``, ``unpack``, ``reloaded``, ``spilled``).

Where the batches live:

* :class:`TempSpill` -- without JOBDIR: SQLite's private temporary database (``$SQLITE_TMPDIR``,
  ``$TMPDIR`` or /var/tmp), which SQLite unlinks as it opens it, so nothing is left behind,
  even after kill -9 (small spills stay in its 2 MB page cache);
* ``stores.JournalSpill`` -- with JOBDIR: a table of the crawl's state database.  A batch is
  written when it spills and a resumed crawl's journal replay spills it again, identically; a
  batch that came back is deleted only by the next snapshot (its transaction), so the state a
  kill leaves always finds the batches it refers to.
"""

from __future__ import annotations

import heapq
import pickle
import sqlite3
import sys
from collections.abc import Iterable
from operator import attrgetter
from typing import Any, Protocol

from ..fingerprints import FingerprintSet, fingerprint
from ..memory import trim_heap
from .queues import FIELDS, Entry, Key

#: a spill brings the URLs queued in memory down to this share of the limit (it looks at every
#: queued URL once, so it moves a quarter of them: about 4 URLs looked at per URL spilled) ...
SPILL_TO = 0.75
#: ... in batches of this share of the limit
BATCH_SHARE = 0.125
#: the best spilled batch comes back when fewer URLs than this share of the limit are queued
#: (below SPILL_TO by more than a batch: a reload never causes a spill)
LOW_WATER = 0.5


class SpillStore(Protocol):
    """Where spilled batches are kept, by batch number."""

    def put(self, batch: int, data: bytes) -> None: ...

    def get(self, batch: int) -> bytes: ...

    def release(self, batch: int) -> None:
        """The batch came back: it may be deleted (now, or when that is safe)."""

    def close(self) -> None: ...


#: the table spilled batches live in, in a temporary database or the JOBDIR's
SPILL_TABLE = "CREATE TABLE IF NOT EXISTS spill (batch INTEGER PRIMARY KEY, data BLOB)"


def write_batch(db: sqlite3.Connection, batch: int, data: bytes) -> None:
    """Store a batch (a replayed spill writes the same number again: replace it)."""
    db.execute("INSERT OR REPLACE INTO spill (batch, data) VALUES (?, ?)", (batch, data))


def read_batch(db: sqlite3.Connection, batch: int) -> bytes | None:
    row = db.execute("SELECT data FROM spill WHERE batch = ?", (batch,)).fetchone()
    return None if row is None else row[0]


class TempSpill:
    """Batches in SQLite's private temporary database: on disk, gone when closed or killed."""

    def __init__(self) -> None:
        # "": a temporary on-disk database, deleted by SQLite itself (it is never reopened)
        self._db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=OFF")  # nothing here survives the process
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute(SPILL_TABLE)

    def put(self, batch: int, data: bytes) -> None:
        write_batch(self._db, batch, data)

    def get(self, batch: int) -> bytes:
        data = read_batch(self._db, batch)
        if data is None:
            raise KeyError(f"spilled batch {batch} is missing")
        return data

    def release(self, batch: int) -> None:
        self._db.execute("DELETE FROM spill WHERE batch = ?", (batch,))

    def close(self) -> None:
        self._db.close()


class Spilled:
    """The spilled part of a frontier: batch index, URL fingerprints, counters.

    ``index`` is a heap of (best key at spill time, batch number, URLs); ``urls`` answers "is
    this URL queued on disk?" in 8 bytes a URL, so that a link found again is a duplicate.
    """

    __slots__ = ("limit", "keep", "batch", "low", "index", "urls", "next", "disk_bytes",
                 "store")

    def __init__(self, limit: int) -> None:
        self.set_limit(limit)
        self.index: list[tuple[Key, int, int]] = []
        self.urls = FingerprintSet()
        self.next = 0  # number of the next batch
        self.disk_bytes = 0  # pickled bytes of the batches on disk
        self.store: SpillStore | None = None  # made at the first spill unless attached

    def set_limit(self, limit: int) -> None:
        """URLs queued in memory at most (a resumed crawl's, before anything spills)."""
        self.limit = limit
        self.keep = int(limit * SPILL_TO)
        self.batch = max(1, int(limit * BATCH_SHARE))
        self.low = max(1, int(limit * LOW_WATER))  # 0 would never reload: a stalled crawl

    def __len__(self) -> int:
        return len(self.urls)

    def write(self, columns: tuple[list, ...], best: Key, count: int) -> None:
        """Spill one batch of ``count`` packed entries, as columns (one list a field), whose
        best key is ``best``."""
        if self.store is None:
            self.store = TempSpill()
        data = pickle.dumps(columns, protocol=pickle.HIGHEST_PROTOCOL)
        number = self.next
        self.next += 1
        self.store.put(number, data)
        heapq.heappush(self.index, (best, number, count))
        self.disk_bytes += len(data)

    def read(self) -> Iterable[tuple]:
        """Take the best batch back: its packed entries, one tuple each."""
        assert self.store is not None, "a spilled batch without a store"
        _, number, _ = heapq.heappop(self.index)
        data = self.store.get(number)
        self.store.release(number)
        self.disk_bytes -= len(data)
        batch = pickle.loads(data)  # noqa: S301 - the crawl's own batches
        # columns; a list of rows from a crawl spilled before batches were columns
        return zip(*batch, strict=True) if isinstance(batch, tuple) else batch

    def batches(self) -> list[int]:
        """The numbers of the batches on disk."""
        return [number for _, number, _ in self.index]

    def snapshot(self) -> dict[str, Any]:
        return {"index": list(self.index), "urls": self.urls.to_bytes(), "next": self.next,
                "disk_bytes": self.disk_bytes}

    def restore(self, state: dict[str, Any]) -> None:
        self.index = [tuple(item) for item in state["index"]]
        heapq.heapify(self.index)
        self.urls = FingerprintSet.from_bytes(state["urls"])
        self.next = state["next"]
        self.disk_bytes = state["disk_bytes"]

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


class Spilling:
    """FOCUS_FRONTIER_MEMORY for one frontier: moves its worst queued URLs to disk past the
    limit and brings the best batch back under the low-water mark.

    The order keeps its say through its valuation: ``key`` (a URL back is keyed by today's
    rule), ``pack``/``unpack`` (what a spilled entry keeps of ``entry.extra``), ``reloaded``
    (a batch back, before it is queued) and ``spilled`` (after every spill, so that an order
    may reclaim what the spilled entries held).
    """

    def __init__(self, frontier: Any, limit: int) -> None:
        self.frontier = frontier
        self.spilled = Spilled(limit)

    def balance(self) -> bool:
        """Spill past the limit, or reload below the low-water mark; whether URLs moved."""
        spilled, queues = self.spilled, self.frontier.queues
        moved = len(queues) > spilled.limit
        if moved:
            self.spill()
        while spilled.index and len(queues) < spilled.low:
            self.reload()
            moved = True
        if moved:
            trim_heap()  # a batch's temporaries: megabytes the C heap would otherwise keep
        return moved

    def spill(self) -> None:
        """Move the lowest-priority queued URLs to disk: down to SPILL_TO of the limit,
        in batches of the spill size, each with what it takes to queue its URLs again."""
        frontier, spilled = self.frontier, self.spilled
        queues, stats = frontier.queues, frontier.stats
        out = queues.spill_worst(len(queues) - spilled.keep)
        for start in range(0, len(out), spilled.batch):
            chunk = out[start:start + spilled.batch]
            spilled.write(self.pack_batch(chunk), chunk[0].key, len(chunk))
            stats["spills"] += 1
        add = spilled.urls.add
        entries = frontier.entries
        for entry in out:
            entry.queued = False
            entry.item = None  # its item pointed back at it: a cycle for the GC (see _take)
            del entries[entry.url]
            add(entry.url)
        stats["spilled"] += len(out)
        if frontier.bound is not None:
            frontier.bound.prune()
        frontier.valuation.spilled()

    def reload(self) -> None:
        """Queue the best spilled batch again, keyed by today's rule."""
        frontier, spilled = self.frontier, self.spilled
        back = []
        urls, done, entries, unpack = spilled.urls, frontier.done, frontier.entries, self.unpack
        for row in spilled.read():
            entry = unpack(row)
            fp = fingerprint(entry.url)
            urls.discard_fp(fp)
            if entry.url in entries or done.has_fp(fp):
                continue  # cannot happen (a spilled URL is never queued twice); never fatal
            entries[entry.url] = entry
            back.append(entry)
        valuation, bound = frontier.valuation, frontier.bound
        valuation.reloaded(back)
        push, key = frontier.queues.push, valuation.key
        for entry in back:
            push(entry, key(entry))
            valuation.queued(entry)
            if bound is not None:
                bound.push(entry)
        frontier.stats["reloads"] += 1
        frontier.stats["reloaded"] += len(back)

    def pack_batch(self, chunk: list[Entry]) -> tuple[list, ...]:
        """A spilled batch as columns (plain, picklable values): :meth:`Entry.fields` with the
        extra as the frontier's ``pack_extra`` keeps it, one list a field, not a tuple a URL
        (which the GC would track while the batch is written, and again, unpickled, while it
        is read back).  :meth:`unpack` takes one row of it."""
        return (*(list(map(attrgetter(name), chunk)) for name in FIELDS[:-1]),
                list(map(self.frontier.valuation.pack, chunk)))

    def unpack(self, row: tuple) -> Entry:
        entry = Entry.from_fields((*row[:-1], None))
        self.frontier.valuation.unpack(entry, row[-1])
        return entry


# per queued URL beyond its Entry, strings and heap item: its share of the entries dict (a
# slot of 3 words at 1/3 .. 2/3 load)
_OVERHEAD = 8 * 3 * 2


def entry_bytes(entry: Entry) -> int:
    """Bytes a queued entry holds in memory (shared strings, like the host, left out)."""
    size = (sys.getsizeof(entry) + sys.getsizeof(entry.url) + sys.getsizeof(entry.item or ())
            + _OVERHEAD)
    if entry.anchor:
        size += sys.getsizeof(entry.anchor)
    return size


def memory_stats(frontier: Any) -> dict[str, int | float]:
    """URLs queued in memory and on disk, spills and reloads, and bytes a URL: an estimate
    in memory (the first entries, see :func:`entry_bytes`), exact on disk."""
    spilled = frontier.spilled
    on_disk = len(spilled) if spilled is not None else 0
    stats: dict[str, int | float] = {
        "memory": len(frontier.entries), "disk": on_disk,
        "spills": frontier.stats.get("spills", 0), "reloads": frontier.stats.get("reloads", 0),
        "bytes_per_url": _bytes_per_url(frontier),
    }
    if on_disk:
        assert spilled is not None
        stats["disk_bytes_per_url"] = round(spilled.disk_bytes / on_disk, 1)
    return stats


def _bytes_per_url(frontier: Any, sample: int = 64) -> int:
    """Estimated bytes a URL queued in memory costs: the entry, its strings and key, its
    heap item and dict slot (and its extra, by the valuation's ``extra_bytes``), over the
    first ``sample`` entries."""
    total = n = 0
    for entry in frontier.entries.values():
        total += entry_bytes(entry) + frontier.valuation.extra_bytes(entry)
        n += 1
        if n == sample:
            break
    return round(total / n) if n else 0

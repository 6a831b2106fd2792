"""Priority queues split by server, so politeness can skip busy servers without losing order.

A crawl-ordering strategy gives each queued URL a priority *key* (a tuple, smallest first).  With
one global heap, a polite crawler would have to pop and push back every URL of a server that may
not be contacted yet.  :class:`ServerQueues` keeps one heap per server plus a heap of servers keyed
by their best URL, and :meth:`ServerQueues.pop` returns the best URL among the servers that
``ready(server)`` accepts: the global order is kept as far as politeness allows.

``round_robin > 0`` reproduces WebBase's load balancing instead (Cho et al., section 5.1): servers
are hashed into that many queues, read one URL per queue in turn, so a server is hit at most once
per ``round_robin`` URLs when all queues are busy.

Re-keying (decrease-key) is lazy: a heap item is the key's fields followed by the entry, one
flat tuple (``(*key, entry)``: 64 bytes for a two-field key, against 128 for a key tuple inside
a ``(key, tick, seq, entry)`` item and 28 more for the tick), and the entry points at its one
live item (``entry.item``); an item the entry no longer points at, or whose entry left the
queue, is skipped.  Keys end with the URL's unique sequence number, so two items' keys tie
only for the same URL (see :meth:`Entry.__lt__`).
Push and pop are O(log n).  Stale items are dropped once they may outnumber the live ones
(re-keying many queued URLs, as the learned order's bounded re-rank does, would otherwise
leave one behind per re-key for good, most never reaching a heap's top):
:meth:`ServerQueues.compact`, amortised O(1) a re-key.
A re-rank of the whole queue by score (:meth:`ServerQueues.rebuild_ranked`) makes an item only
for each server's best entry; the others wait in key order and are dealt into the heap a few
at a time, when the best may be among them.
"""

from __future__ import annotations

import heapq
import zlib
from collections.abc import Callable, Iterator
from operator import attrgetter
from typing import Any

import numpy as np

Key = tuple
# stale heap items tolerated before a count (and, past as many as there are live ones, a
# compaction): a small queue is not compacted over and over
_STALE_MIN = 1024


class Entry:
    """A queued URL: a compact record, never a whole Request."""

    __slots__ = (
        "url", "host", "item", "queued", "score", "keyword", "depth", "parent",
        "anchor", "payload", "seq", "extra",
    )

    def __init__(
        self, url: str, host: str, seq: int, *, score: float = 0.0, keyword: bool = False,
        depth: int = 0, parent: str | None = None, anchor: str = "", payload: Any = None,
    ) -> None:
        self.url = url
        self.host = host
        self.seq = seq
        self.score = score
        self.keyword = keyword
        self.depth = depth
        self.parent = parent
        self.anchor = anchor
        self.payload = payload
        self.item: tuple | None = None  # its heap item, (*key, self), live while queued
        self.queued = False
        self.extra: Any = None

    @property
    def key(self) -> Key:
        """The key it was last queued under (``()`` before it ever was, or while it waits
        among a server's ranked entries: :meth:`ServerQueues.rebuild_ranked`)."""
        item = self.item
        return () if item is None else item[:-1]

    def __lt__(self, other: Entry) -> bool:
        """Never first: two heap items compare down to their entries only when their keys are
        equal, which is the same URL twice (a stale item of an entry spilled to disk beside its
        reloaded copy's, same sequence number); either may come first, one is skipped."""
        return False

    def __repr__(self) -> str:
        return f"Entry({self.url!r}, key={self.key!r})"

    def fields(self) -> tuple:
        """What a saved entry keeps (snapshots, JOBDIR leases, spilled batches), in the order
        of :data:`FIELDS`."""
        return _FIELDS(self)

    @classmethod
    def from_fields(cls, fields: tuple) -> Entry:
        url, host, seq, score, keyword, depth, parent, anchor, payload, extra = fields
        entry = cls(url, host, seq, score=score, keyword=keyword, depth=depth, parent=parent,
                    anchor=anchor, payload=payload)
        entry.extra = extra
        return entry


#: the fields an entry is saved by, in order (:meth:`Entry.fields`, :meth:`Entry.from_fields`)
FIELDS = ("url", "host", "seq", "score", "keyword", "depth", "parent", "anchor", "payload",
          "extra")
_FIELDS = attrgetter(*FIELDS)
_SEQ = attrgetter("seq")
_HOST = attrgetter("host")


class _Ranked:
    """A server's queued entries not in its heap yet, best first (after
    :meth:`ServerQueues.rebuild_ranked`): ``entries[pos:end]`` keyed ``(negs[i], seqs[i])``.

    An entry here has no item (``entry.item`` is None) until it is dealt into the heap; one
    that has an item by then was re-keyed since (or left and came back) and is skipped."""

    __slots__ = ("negs", "seqs", "entries", "pos", "end")

    def __init__(self, negs: list[float], seqs: list[int], entries: list[Entry], pos: int,
                 end: int) -> None:
        self.negs, self.seqs, self.entries = negs, seqs, entries
        self.pos, self.end = pos, end

    def before(self, item: tuple) -> bool:
        """Whether the next entry's key comes before ``item``'s."""
        pos = self.pos
        neg = self.negs[pos]
        return neg < item[0] or neg == item[0] and self.seqs[pos] < item[1]

    def deal(self, items: list[tuple], count: int) -> None:
        """Push the next ``count`` entries still waiting here onto the heap ``items``."""
        pos, stop = self.pos, min(self.pos + count, self.end)
        for item in zip(self.negs[pos:stop], self.seqs[pos:stop], self.entries[pos:stop],
                        strict=True):
            entry = item[2]
            if entry.queued and entry.item is None:
                entry.item = item
                heapq.heappush(items, item)
        self.pos = stop


# entries a server's heap takes from its ranked ones at a time (see ServerQueues.rebuild_ranked)
_DEAL = 32


class _Heap:
    """A lazily-cleaned heap of ``(*key, entry)`` items, and the entries still to be dealt
    into it (``ranked``, after :meth:`ServerQueues.rebuild_ranked`)."""

    __slots__ = ("items", "stamp", "ranked")

    def __init__(self) -> None:
        self.items: list[tuple] = []
        self.stamp = 0
        self.ranked: _Ranked | None = None

    def top(self) -> Entry | None:
        items = self.items
        while True:
            item = None
            while items:
                item = items[0]
                if item[-1].queued and item[-1].item is item:
                    break
                heapq.heappop(items)
                item = None
            ranked = self.ranked
            if ranked is None or item is not None and not ranked.before(item):
                return None if item is None else item[-1]
            ranked.deal(items, _DEAL)  # the best may wait there: deal some, look again
            if ranked.pos >= ranked.end:
                self.ranked = None

    def settle(self) -> None:
        """Deal every ranked entry into the heap (before a pass over its items)."""
        ranked = self.ranked
        if ranked is not None:
            ranked.deal(self.items, ranked.end - ranked.pos)
            self.ranked = None


class ServerQueues:
    """Per-server heaps and a heap of servers, or WebBase's hashed round-robin queues."""

    def __init__(self, round_robin: int = 0) -> None:
        self.round_robin = round_robin
        self._queues: dict[Any, _Heap] = {}
        # (its best item, stamp, server) in per-server mode
        self._servers: list[tuple] = []
        self._cursor = 0
        self._len = 0
        # at least the heap items no longer live (a re-key, a discard add one; a stale item
        # popped at a heap's top is not counted off, :meth:`_check_stale` counts exactly)
        self._stale = 0
        # per-server mode, once :meth:`watch` is called: the servers whose best entry may have
        # moved up since the last :meth:`risen`, and whether every server's may have (a rebuild)
        self._risen: set[Any] | None = None
        self._risen_all = False
        # server -> called with each entry newly queued there (:meth:`follow`)
        self._followers: dict[Any, Callable[[Entry], None]] = {}

    def __len__(self) -> int:
        return self._len

    @property
    def cursor(self) -> int:
        """Round-robin mode: the queue read next (a snapshot keeps it)."""
        return self._cursor

    @cursor.setter
    def cursor(self, value: int) -> None:
        self._cursor = value

    def _bucket(self, host: str) -> Any:
        if self.round_robin:
            return zlib.crc32(host.encode()) % self.round_robin
        return host

    def push(self, entry: Entry, key: Key) -> None:
        """Queue ``entry`` with ``key``, or re-key it if it is queued already."""
        bucket = self._bucket(entry.host)
        if not entry.queued:
            self._len += 1
            entry.queued = True
            if self._followers and (follower := self._followers.get(bucket)) is not None:
                follower(entry)
        else:
            self._stale += 1  # its previous item stays behind in its heap
        item = (*key, entry)
        entry.item = item
        heap = self._queues.get(bucket)
        if heap is None:
            heap = self._queues[bucket] = _Heap()
        items = heap.items
        # (inline for an empty heap: a new server's)
        top = heap.top() if items or heap.ranked is not None else None
        top_item = None if top is None else top.item  # a heap's top is live: it has an item
        heapq.heappush(items, item)
        if not self.round_robin and (top_item is None or item < top_item):
            heap.stamp += 1
            heapq.heappush(self._servers, (item, heap.stamp, bucket))
            if self._risen is not None:
                self._risen.add(bucket)
        if self._stale > self._len and self._stale > _STALE_MIN:
            self._check_stale()

    def discard(self, entry: Entry) -> None:
        """Remove ``entry`` (eviction, or handed out by another path)."""
        if entry.queued:
            entry.queued = False
            self._len -= 1
            self._stale += 1

    def _check_stale(self) -> None:
        """Count the stale items exactly (O(servers)); compact when they are more than half
        as many as the live ones: the next count then comes only after that many re-keys."""
        stale = sum(len(heap.items) + (heap.ranked.end - heap.ranked.pos if heap.ranked else 0)
                    for heap in self._queues.values()) - self._len
        if stale > max(self._len, _STALE_MIN) // 2:
            self.compact()
        else:
            self._stale = stale

    def compact(self) -> None:
        """Drop every stale heap item (the queued URLs and their order do not change)."""
        queues = self._queues
        self._settle()
        servers: list[tuple] = []
        for bucket, heap in list(queues.items()):
            items = [item for item in heap.items
                     if item[-1].queued and item[-1].item is item]
            if not items:
                del queues[bucket]  # as _take leaves an emptied server (pop skips it)
                continue
            if len(items) != len(heap.items):
                heapq.heapify(items)
                heap.items = items
            if not self.round_robin:
                heap.stamp += 1
                servers.append((items[0], heap.stamp, bucket))
        if not self.round_robin:
            heapq.heapify(servers)
            self._servers = servers
        self._stale = 0

    def take(self, entry: Entry) -> None:
        """Remove ``entry`` as if :meth:`pop` had returned it (replaying a journal).

        Same logical state afterwards: the entry leaves its heap (lazily) and, with
        round-robin queues, the cursor moves past its bucket as :meth:`pop` moves it.
        """
        self.discard(entry)
        if self.round_robin:
            self._cursor = (self._bucket(entry.host) + 1) % self.round_robin

    def _take(self, bucket: Any, heap: _Heap, entry: Entry | None = None) -> Entry:
        """Take the heap's top (``entry``, when the caller has it already)."""
        if entry is None:
            entry = heap.top()
            assert entry is not None
        heapq.heappop(heap.items)
        entry.queued = False
        # the item pointed back at the entry: a reference cycle that only the cyclic GC would
        # free, for every URL handed out (a third of a spilling run's CPU went on collecting
        # them); the key of an entry no longer queued is never asked for
        entry.item = None
        self._len -= 1
        if not self.round_robin:
            heap.stamp += 1
            nxt = heap.top()
            if nxt is not None:
                heapq.heappush(self._servers, (nxt.item, heap.stamp, bucket))
            else:
                del self._queues[bucket]
        return entry

    def pop(
        self,
        ready: Callable[[str], bool] | None = None,
        accept: Callable[[Entry, Entry], bool] | None = None,
        held: Callable[[str], bool] | None = None,
    ) -> Entry | None:
        """The best queued entry whose server ``ready`` accepts (any server if ready is None).

        ``accept(candidate, best)``: whether a ready server's best entry may be taken while a
        better one (``best``, the best of all) waits on a server that is not ready; when it
        refuses, nothing is handed out (worse candidates would be refused too).  A server
        ``held`` says is held (its robots.txt unreachable) waits too long to set that bar.
        """
        if self.round_robin:
            return self._pop_round_robin(ready)
        skipped: list[tuple] = []
        found: Entry | None = None
        best: Entry | None = None
        servers = self._servers
        while servers:
            item = heapq.heappop(servers)
            best_item, stamp, bucket = item
            heap = self._queues.get(bucket)
            if heap is None or heap.stamp != stamp:
                continue  # stale
            top = heap.top()
            if top is None:
                del self._queues[bucket]
                continue
            if top.item is not best_item:  # the top was re-keyed or discarded: re-file
                heap.stamp += 1
                heapq.heappush(servers, (top.item, heap.stamp, bucket))
                continue
            if best is None and (held is None or not held(top.host)):
                best = top
            if ready is not None and not ready(top.host):
                skipped.append(item)
                continue
            if (accept is not None and best is not None and top is not best
                    and not accept(top, best)):
                skipped.append(item)
                break
            found = self._take(bucket, heap, top)
            break
        for item in skipped:
            heapq.heappush(servers, item)
        return found

    def _pop_round_robin(self, ready: Callable[[str], bool] | None) -> Entry | None:
        n = self.round_robin
        for step in range(n):
            bucket = (self._cursor + step) % n
            heap = self._queues.get(bucket)
            if heap is None:
                continue
            top = heap.top()
            if top is None or (ready is not None and not ready(top.host)):
                continue
            self._cursor = (bucket + 1) % n
            return self._take(bucket, heap, top)
        return None

    def rebuild(self, entries: list[Entry], key: Callable[[Entry], Key]) -> None:
        """Queue exactly ``entries``, each under a fresh ``key(entry)``: a re-rank in O(n).

        Every entry queued before must be in ``entries``; heaps are rebuilt with heapify, not
        by n pushes.
        """
        self.rebuild_items([(*key(entry), entry) for entry in entries])

    def rebuild_items(self, items: list[tuple]) -> None:
        """:meth:`rebuild` from the heap items, ``(*key, entry)`` each, made by the caller (the
        learned order's re-rank builds them in the loop that sets the scores)."""
        groups: dict[Any, list[tuple]] = {}
        hashed = self._bucket if self.round_robin else None
        for item in items:
            entry = item[-1]
            entry.item = item
            entry.queued = True
            bucket = entry.host if hashed is None else hashed(entry.host)
            group = groups.get(bucket)
            if group is None:
                groups[bucket] = [item]
            else:
                group.append(item)
        self._queues = {}
        self._servers = []
        for bucket, group in groups.items():
            heapq.heapify(group)
            heap = self._queues[bucket] = _Heap()
            heap.items = group
            heap.stamp = 1
            if not self.round_robin:
                self._servers.append((group[0], 1, bucket))
        heapq.heapify(self._servers)
        self._len = len(items)
        self._stale = 0
        self._risen_all = True

    def rebuild_ranked(self, entries: list[Entry], primary: np.ndarray) -> None:
        """:meth:`rebuild` under the keys ``(primary[i], entry.seq)`` (an order ranked by one
        number, the learned order's ``-value``): a re-rank of the whole queue that makes a
        heap item only for each server's best few entries.

        A heap item is a tuple the GC tracks, made for every queued URL at every re-rank
        (a few thousand every 25 pages) and freed at the next, most never near a heap's top;
        here the entries are sorted by server and key with numpy, each server's heap gets
        its best and the rest wait, in order, in its ``ranked`` entries, dealt into the heap
        :data:`_DEAL` at a time when the best may be among them (:meth:`_Heap.top`).  Same
        keys, same order; the servers in the order first met.
        """
        n = len(entries)
        if self.round_robin or not n or np.isnan(primary).any():
            self.rebuild_items(list(zip(primary.tolist(), map(_SEQ, entries), entries,
                                        strict=True)))
            return
        self._queues, servers = _ranked_heaps(entries, primary)
        heapq.heapify(servers)
        self._servers = servers
        self._len = n
        self._stale = 0
        self._risen_all = True

    def _settle(self) -> None:
        for heap in self._queues.values():
            heap.settle()

    def worst(self, count: int) -> list[Entry]:
        """The ``count`` queued entries with the largest keys, best first (one pass)."""
        self._settle()
        live = (item for heap in self._queues.values() for item in heap.items
                if item[-1].queued and item[-1].item is item)
        items = heapq.nlargest(count, live)  # keys are unique: entries are never compared
        items.reverse()
        return [item[-1] for item in items]

    def drop(self, entries: list[Entry]) -> None:
        """Remove ``entries`` and compact the heaps now: a lazy :meth:`discard` would keep
        them (and every stale item) in memory until they reached a heap's top."""
        for entry in entries:
            self.discard(entry)
        self.compact()

    def spill_worst(self, count: int) -> list[Entry]:
        """:meth:`worst` then :meth:`drop` in one sort, for a spill: the entries with the
        ``count`` largest keys leave the queue (best first), the rest stay in the same order.

        The live items are sorted by numpy (their key columns as arrays: C, not a Python
        comparison per step); the kept ones come out sorted, and a sorted list is a heap, so
        each server's heap is rebuilt without a heapify.  Keys that are not all plain numbers
        of one width, or that numpy could order otherwise than Python (NaN, integers past
        2**53, equal keys), go the Python way, :meth:`worst` and :meth:`drop`.
        """
        queues = self._queues
        self._settle()
        buckets = list(queues)
        live: list[tuple] = []
        sizes: list[int] = []
        for bucket in buckets:
            before = len(live)
            live.extend([item for item in queues[bucket].items
                         if item[-1].queued and item[-1].item is item])
            sizes.append(len(live) - before)
        order = _key_order(live)
        if order is None:
            out = self.worst(count)
            self.drop(out)
            return out
        n = len(live)
        count = max(0, min(count, n))
        gone = order[n - count:].tolist()
        kept = order[:n - count]
        out = [live[i][-1] for i in gone]
        for entry in out:
            entry.queued = False
        self._len -= count
        # the kept items by server (a stable sort keeps each server's in key order)
        owner = np.repeat(np.arange(len(buckets), dtype=np.intp), sizes)[kept]
        kept = kept[np.argsort(owner, kind="stable")].tolist()
        counts = np.bincount(owner, minlength=len(buckets)).tolist()
        servers: list[tuple] = []
        start = 0
        for bucket, size in zip(buckets, counts, strict=True):
            if not size:
                del queues[bucket]  # as compact() leaves a server emptied
                continue
            heap = queues[bucket]
            heap.items = [live[i] for i in kept[start:start + size]]
            start += size
            if not self.round_robin:
                heap.stamp += 1
                servers.append((heap.items[0], heap.stamp, bucket))
        if not self.round_robin:
            heapq.heapify(servers)
            self._servers = servers
        self._stale = 0
        return out

    def has_ready(self, ready: Callable[[str], bool]) -> bool:
        """Whether some server that ``ready`` accepts has a queued URL (nothing moves)."""
        self._settle()
        for heap in self._queues.values():
            for item in heap.items:
                entry = item[-1]
                if entry.queued and entry.item is item and ready(entry.host):
                    return True
                if not self.round_robin:
                    break  # one host per heap: its first live item tells
        return False

    def entries(self) -> Iterator[Entry]:
        """Every queued entry (any order)."""
        for bucket in list(self._queues):
            yield from self.entries_of(bucket)

    def entries_of(self, bucket: Any) -> list[Entry]:
        """A server's (or hashed queue's) queued entries, any order."""
        heap = self._queues.get(bucket)
        if heap is None:
            return []
        heap.settle()
        return [item[-1] for item in heap.items if item[-1].queued and item[-1].item is item]

    def watch(self) -> None:
        """Record, from now on, the servers whose best entry may move up (see :meth:`risen`):
        an index over the servers' best entries (the learned order's host bandit) then only
        has to look again at those, not at every server."""
        if not self.round_robin:
            self._risen = set()
            self._risen_all = True

    def risen(self) -> tuple[bool, set[Any]]:
        """Since the last call (or :meth:`watch`): whether every server's best entry may have
        changed any way (a rebuild; the first call), else the servers whose best entry may have
        moved up (a new best pushed, or the best re-keyed); resets.  A best entry that moves
        down (taken, discarded, re-keyed lower) is not reported: an index finds it stale."""
        if self._risen is None:
            raise RuntimeError("risen() before watch()")
        everything, risen = self._risen_all, self._risen
        self._risen_all, self._risen = False, set()
        return everything, risen

    def buckets(self) -> list[Any]:
        """The servers (or hashed queues) that may have queued URLs, in the order first queued."""
        return list(self._queues)

    def top_of(self, bucket: Any) -> Entry | None:
        """A server's best queued entry, or None (nothing moves)."""
        heap = self._queues.get(bucket)
        return None if heap is None else heap.top()

    def follow(self, bucket: Any, arrived: Callable[[Entry], None]) -> None:
        """Call ``arrived(entry)`` with each entry newly queued on ``bucket`` from now on (not
        a re-key): an index over some of a server's entries need not look at its whole queue
        again."""
        self._followers[bucket] = arrived

    def unfollow(self, bucket: Any | None = None) -> None:
        """Stop following ``bucket`` (every server with None)."""
        if bucket is None:
            self._followers = {}
        else:
            self._followers.pop(bucket, None)

    def hosts_with_work(self) -> int:
        return sum(1 for h in self._queues.values() if h.top() is not None)


def _ranked_heaps(entries: list[Entry], negated: np.ndarray
                  ) -> tuple[dict[Any, _Heap], list[tuple]]:
    """:meth:`ServerQueues.rebuild_ranked`'s heaps: the entries sorted by server and key
    (``negated``, then the sequence number) with numpy, each server's heap holding its best
    (the rest in its ``ranked`` entries), and the servers' items, in the order the servers are
    first met."""
    n = len(entries)
    for entry in entries:
        entry.item = None
        entry.queued = True
    hosts = list(map(_HOST, entries))
    buckets = list(dict.fromkeys(hosts))  # in the order first met, as rebuild_items
    code = {bucket: i for i, bucket in enumerate(buckets)}
    codes = np.fromiter(map(code.__getitem__, hosts), dtype=np.int64, count=n)
    seqs = np.fromiter(map(_SEQ, entries), dtype=np.int64, count=n)
    # keys are unique (the sequence number): numpy's order is Python's
    order = np.lexsort((seqs, negated, codes))
    ranked = np.empty(n, dtype=object)
    ranked[:] = entries
    ranked = ranked[order].tolist()
    negs = negated[order].tolist()
    seq_list = list(map(_SEQ, ranked))
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]]).tolist()
    ends = [*starts[1:], n]
    queues: dict[Any, _Heap] = {}
    servers: list[tuple] = []
    for bucket, start, end in zip(buckets, starts, ends, strict=True):
        heap = queues[bucket] = _Heap()
        heap.stamp = 1
        best = ranked[start]
        best.item = item = (negs[start], seq_list[start], best)
        heap.items.append(item)
        if end - start > 1:
            heap.ranked = _Ranked(negs, seq_list, ranked, start + 1, end)
        servers.append((heap.items[0], 1, bucket))
    return queues, servers


#: integers beyond this may not survive float64: their column goes the Python way
_EXACT = float(2**53)


def _key_order(items: list[tuple]) -> np.ndarray | None:
    """Indices of ``items`` (``(*key, entry)`` each) in key order, by ``np.lexsort``; None
    unless numpy's order is certainly Python's: every key the same width, plain numbers
    (ints, floats, bools), no NaN, integers exact in float64 where a column mixes them with
    floats, and no two keys equal (Python would then compare the entries)."""
    if not items:
        return np.empty(0, dtype=np.intp)
    width = len(items[0])
    if any(len(item) != width for item in items):
        return None  # keys of different widths
    arrays = []
    for j in range(width - 1):
        # a column by a list comprehension, not zip(*items): zip's iterator a row would be
        # an object for the GC to track, and to count towards its next full collection
        column = [item[j] for item in items]
        array = np.array(column)  # strings, None, big ints: a dtype that is not a number
        if array.dtype.kind == "f":
            if np.isnan(array).any() or (array.size and np.abs(array).max() >= _EXACT):
                return None
        elif array.dtype.kind not in "biu":
            return None
        arrays.append(array)
    order = np.lexsort(arrays[::-1])
    if len(order) > 1:
        same = np.ones(len(order) - 1, dtype=bool)
        for array in arrays:
            ranked = array[order]
            same &= ranked[1:] == ranked[:-1]
        if same.any():
            return None
    return order


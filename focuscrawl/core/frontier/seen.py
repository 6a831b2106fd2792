"""The seen-set as 64-bit URL fingerprints in an open-addressing table (no Scrapy).

A Python ``set`` of URL strings costs about 150 bytes a URL (the string object and its slot);
a crawl that hands out millions of URLs spends hundreds of megabytes on remembering them.
:class:`FingerprintSet` keeps only each URL's 64-bit fingerprint (xxh3_64 of its UTF-8: stable
across processes and runs, unlike ``hash()``, so a snapshot restores into another process) in
a linear-probing table of unsigned 64-bit slots, 0 marking an empty slot.  The table grows by
1.5x beyond 3/4 full, so it holds 8 / 0.75 .. 8 / 0.5 = 10.7 .. 16 bytes a URL.

Two URLs with the same fingerprint are one URL to this set: with n URLs the chance that any
two collide is about n^2 / 2^65 (3e-6 for ten million), and its cost is one page not fetched.

Lookups and inserts probe in Python over an ``array('Q')`` (plain ints, no numpy scalars);
growing and restoring place every fingerprint at once with numpy: fingerprints sorted, the
home slot ``(fp >> 32) * capacity >> 32`` is monotonic in the fingerprint, so linear probing
in that order is a running maximum (``np.maximum.accumulate``), no Python loop per entry.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

import numpy as np
from xxhash import xxh3_64_intdigest

_MIN_CAPACITY = 1024
_MAX_LOAD = 0.75  # linear probing stays short below this (expected miss: ~8.5 probes at 0.75)
_GROWTH = 1.5


def fingerprint(url: str) -> int:
    """A URL's stable 64-bit fingerprint; never 0 (the empty slot's mark)."""
    return xxh3_64_intdigest(url.encode("utf-8", "surrogatepass")) or 1


class FingerprintSet:
    """A set of URLs stored as 8-byte fingerprints: ``add``, ``discard``, ``in``, ``len``.

    Not iterable (the URLs are not kept); :meth:`to_bytes` / :meth:`from_bytes` persist it.
    """

    __slots__ = ("_table", "_capacity", "_len", "_limit")

    def __init__(self, urls: Iterable[str] = ()) -> None:
        self._len = 0
        self._alloc(_MIN_CAPACITY)
        fps = np.fromiter((fingerprint(u) for u in urls), dtype=np.uint64)
        if fps.size:
            self._load(np.unique(fps))

    # -- the set interface ---------------------------------------------------------------
    def __len__(self) -> int:
        return self._len

    def __contains__(self, url: object) -> bool:
        if not isinstance(url, str):
            return False
        return self.has_fp(fingerprint(url))

    # by fingerprint: a caller asking two sets about one URL hashes it once
    def has_fp(self, fp: int) -> bool:
        return self._table[self._probe(fp)] != 0

    def _probe(self, fp: int) -> int:
        """The slot holding ``fp``, or the empty slot where it would go (linear probing)."""
        table, capacity = self._table, self._capacity
        i = ((fp >> 32) * capacity) >> 32
        while True:
            value = table[i]
            if value == fp or not value:
                return i
            i += 1
            if i == capacity:
                i = 0

    def add(self, url: str) -> None:
        self.add_fp(fingerprint(url))

    def add_fp(self, fp: int) -> None:
        i = self._probe(fp)
        if self._table[i]:
            return
        self._table[i] = fp
        self._len += 1
        if self._len > self._limit:
            self._grow()

    def discard(self, url: str) -> None:
        """Remove ``url`` if present (backward-shift deletion: no tombstones)."""
        self.discard_fp(fingerprint(url))

    def discard_fp(self, fp: int) -> None:
        i = self._probe(fp)
        if not self._table[i]:
            return
        table, capacity = self._table, self._capacity
        self._len -= 1
        j = i
        while True:  # pull back every later entry of the run that may sit in the hole
            j = j + 1 if j + 1 < capacity else 0
            value = table[j]
            if not value:
                break
            home = ((value >> 32) * capacity) >> 32
            if (j - home) % capacity >= (j - i) % capacity:
                table[i] = value
                i = j
        table[i] = 0

    @property
    def nbytes(self) -> int:
        """Bytes of the table (the object around it is a few dozen more)."""
        return self._capacity * 8

    # -- persistence -----------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The fingerprints, sorted, as little-endian uint64: 8 bytes a URL."""
        view = np.frombuffer(self._table, dtype=np.uint64)
        return np.sort(view[view != 0]).astype("<u8").tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> FingerprintSet:
        s = cls()
        fps = np.frombuffer(data, dtype="<u8").astype(np.uint64)
        if fps.size:
            s._load(np.sort(fps))
        return s

    # -- the table ---------------------------------------------------------------------------
    def _alloc(self, capacity: int) -> None:
        self._table = array("Q", bytes(8 * capacity))
        self._capacity = capacity
        self._limit = int(capacity * _MAX_LOAD)

    def _grow(self) -> None:
        view = np.frombuffer(self._table, dtype=np.uint64)
        fps = np.sort(view[view != 0])
        del view  # the array's buffer is exported while a view exists
        self._len = 0
        self._alloc(int(self._capacity * _GROWTH))
        self._load(fps)

    def _load(self, fps: np.ndarray) -> None:
        """Insert distinct, sorted fingerprints into an empty table, vectorised."""
        n = int(fps.size)
        capacity = max(_MIN_CAPACITY, self._capacity)
        while n > capacity * _MAX_LOAD:
            capacity = int(capacity * _GROWTH)
        if capacity != self._capacity:
            self._alloc(capacity)
        home = ((fps >> np.uint64(32)) * np.uint64(capacity)) >> np.uint64(32)
        # linear probing in home order: slot[k] = max(home[k], slot[k-1] + 1)
        steps = np.arange(n, dtype=np.int64)
        slots = np.maximum.accumulate(home.astype(np.int64) - steps) + steps
        fit = slots < capacity
        table = np.frombuffer(self._table, dtype=np.uint64)
        table[slots[fit]] = fps[fit]
        del table
        self._len = int(fit.sum())
        for fp in fps[~fit].tolist():  # runs past the end wrap to the start: a few at most
            self._insert_fp(fp)

    def _insert_fp(self, fp: int) -> None:
        table, capacity = self._table, self._capacity
        i = ((fp >> 32) * capacity) >> 32
        while table[i] and table[i] != fp:
            i = i + 1 if i + 1 < capacity else 0
        if not table[i]:
            table[i] = fp
            self._len += 1

"""URL fingerprints (no Scrapy): the seen-set, and maps keyed by fingerprint.

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
from typing import Any, Generic, Literal, TypeVar, cast, overload

import numpy as np
from xxhash import xxh3_64_intdigest

_MIN_CAPACITY = 1024
_MAX_LOAD = 0.75  # linear probing stays short below this (expected miss: ~8.5 probes at 0.75)
_GROWTH = 1.5

V = TypeVar("V", int, float)  # a FingerprintMap's values: int for typecodes "q" and "Q"
TypeCode = Literal["d", "q", "Q"]


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
        _, fit = self._place(fps)
        for fp in fps[~fit].tolist():  # runs past the end wrap to the start: a few at most
            self._insert_fp(fp)

    def _place(self, fps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Size the empty table for distinct, sorted ``fps`` and place those whose probe run
        does not wrap past the end; their slots, and which ones were placed."""
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
        return slots, fit

    def _insert_fp(self, fp: int) -> None:
        table, capacity = self._table, self._capacity
        i = ((fp >> 32) * capacity) >> 32
        while table[i] and table[i] != fp:
            i = i + 1 if i + 1 < capacity else 0
        if not table[i]:
            table[i] = fp
            self._len += 1


class FingerprintMap(FingerprintSet, Generic[V]):
    """URL -> number, keyed by the URL's 8-byte fingerprint: no URL string is kept.

    What a crawl remembers of every page it fetched (its score, its relevance label, the page
    it was reached from) was a dict keyed by URL strings: ~100-150 bytes a page each, for the
    whole crawl (bench/scale.py's census: ~380 bytes a page fetched in six of them).  Here a
    page costs its fingerprint and its value in two parallel tables, 16 bytes at most at the
    table's load: 21-32 bytes.  ``typecode`` is the values' ``array`` type ("d": a float,
    "Q": another URL's fingerprint, "q": an integer): a ``FingerprintMap[float]`` for "d",
    a ``FingerprintMap[int]`` for the other two.  Same collision caveat as the set.
    """

    __slots__ = ("_values", "_typecode")
    _values: array[V]

    @overload
    def __init__(self: FingerprintMap[float], typecode: Literal["d"] = "d",
                 items: Iterable[tuple[str, float]] = ()) -> None: ...
    @overload
    def __init__(self: FingerprintMap[int], typecode: Literal["q", "Q"],
                 items: Iterable[tuple[str, int]] = ()) -> None: ...
    def __init__(self, typecode: TypeCode = "d", items: Iterable[tuple[str, Any]] = ()) -> None:
        self._typecode = typecode
        super().__init__()
        for url, value in items:
            self[url] = value

    @overload
    def get(self, url: str, default: None = None) -> V | None: ...
    @overload
    def get(self, url: str, default: V) -> V: ...
    def get(self, url: str, default: V | None = None) -> V | None:
        return self.get_fp(fingerprint(url), default)

    @overload
    def get_fp(self, fp: int, default: None = None) -> V | None: ...
    @overload
    def get_fp(self, fp: int, default: V) -> V: ...
    def get_fp(self, fp: int, default: V | None = None) -> V | None:
        i = self._probe(fp)
        return self._values[i] if self._table[i] else default

    def __getitem__(self, url: str) -> V:
        value = self.get(url)
        if value is None:
            raise KeyError(url)
        return value

    def __setitem__(self, url: str, value: V) -> None:
        self.set_fp(fingerprint(url), value)

    def set_fp(self, fp: int, value: V) -> None:
        i = self._probe(fp)
        self._values[i] = value
        if not self._table[i]:
            self._table[i] = fp
            self._len += 1
            if self._len > self._limit:
                self._grow()

    def add_fp(self, fp: int) -> None:
        raise TypeError("a FingerprintMap is set by key and value")

    def discard_fp(self, fp: int) -> None:
        raise TypeError("a FingerprintMap does not remove keys")

    @property
    def nbytes(self) -> int:
        return self._capacity * (8 + self._values.itemsize)

    # -- persistence -----------------------------------------------------------------------
    def to_state(self) -> tuple[TypeCode, bytes, bytes]:
        """(typecode, fingerprints, values): the keys sorted, each with its value."""
        keys, values = self._items()
        return (self._typecode, keys.astype("<u8").tobytes(), values.tobytes())

    @overload
    @classmethod
    def from_state(cls, state: tuple[str, bytes, bytes] | dict[str, float],
                   typecode: Literal["d"] = "d") -> FingerprintMap[float]: ...
    @overload
    @classmethod
    def from_state(cls, state: tuple[str, bytes, bytes] | dict[str, int],
                   typecode: Literal["q", "Q"]) -> FingerprintMap[int]: ...
    @classmethod
    def from_state(cls, state: tuple[str, bytes, bytes] | dict[str, Any],
                   typecode: TypeCode = "d") -> FingerprintMap[Any]:
        """A map from :meth:`to_state`, or from a dict of URLs (a snapshot from before).

        ``typecode``: the values' type, that of the dict; a state from :meth:`to_state`
        carries its own (the same: its map was made by the same caller)."""
        if isinstance(state, dict):
            return cls(typecode, state.items())
        code, keys, values = state
        m = cls(cast(TypeCode, code))  # to_state wrote a map's own typecode
        fps = np.frombuffer(keys, dtype="<u8").astype(np.uint64)
        if fps.size:
            m._load_items(fps, np.frombuffer(values, dtype=m._values.typecode))
        return m

    # -- the table ---------------------------------------------------------------------------
    def _items(self) -> tuple[np.ndarray, np.ndarray]:
        """The fingerprints, sorted, and their values (copies: the table may be replaced)."""
        table = np.frombuffer(self._table, dtype=np.uint64)
        held = np.frombuffer(self._values, dtype=self._typecode)
        full = table != 0
        keys, values = table[full], held[full]
        del table, held  # the arrays' buffers are exported while a view exists
        order = np.argsort(keys)
        return keys[order], values[order]

    def _alloc(self, capacity: int) -> None:
        super()._alloc(capacity)
        self._values = array(self._typecode, bytes(array(self._typecode).itemsize * capacity))

    def _grow(self) -> None:
        keys, values = self._items()
        self._len = 0
        self._alloc(int(self._capacity * _GROWTH))
        self._load_items(keys, values)

    def _load_items(self, fps: np.ndarray, values: np.ndarray) -> None:
        """Insert distinct, sorted fingerprints and their values into an empty table."""
        slots, fit = self._place(fps)
        held = np.frombuffer(self._values, dtype=self._typecode)
        held[slots[fit]] = values[fit]
        del held
        for fp, value in zip(fps[~fit].tolist(), values[~fit].tolist(), strict=True):
            self.set_fp(fp, value)  # runs past the end wrap to the start: a few at most

    def _load(self, fps: np.ndarray) -> None:
        raise TypeError("a FingerprintMap loads keys with their values")

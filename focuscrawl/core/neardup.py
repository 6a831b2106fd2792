"""Near-duplicate pages (no Scrapy): MinHash signatures of a text's word shingles, and an index
that tells whether a page is a near-copy of one already in it, adding it if it is not.

A text is cut into w-shingles (:data:`SHINGLE` consecutive words, Broder's resemblance), each
hashed to 32 bits from its words' xxh32; its MinHash signature (datasketch's: :data:`NUM_PERM`
permutations of its ``affine32`` scheme, computed here in numpy, see :meth:`Signer.minhash`)
estimates the Jaccard similarity of two texts' shingle sets as the share of positions where
their signatures agree.  Locality-sensitive hashing finds the candidates:
the signature's values in ``bands`` bands of ``rows``; two pages with one band alike are
candidates, and a candidate is a near-copy when the signatures agree on at least the
threshold's share.  :meth:`Layout.for_threshold` chooses the bands so that a pair *at* the
threshold is a candidate with probability :data:`CANDIDATE_RECALL` at least: datasketch's own
optimum weighs a false candidate as much as a missed one and finds a pair at 0.9 a third of
the time; here the check on the signatures removes the false candidates.

An index keeps distinct pages only: a page found to be a near-copy is not added, so a
``duplicate_of`` always names a page that is itself no copy.  A page is never a copy of the
page at its own URL (the same page fetched again after a crash or a lost lease).  Two
implementations answer :class:`NearDuplicateIndex`: :class:`MemoryIndex` here and
``focuscrawl.distributed.neardup.RedisIndex`` (one Lua script a page: atomic across workers).
Both find candidates with :func:`band_keys`, so they give the same answers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np
from xxhash import xxh3_64_intdigest, xxh32_intdigest

#: words in a shingle
SHINGLE = 5
#: MinHash permutations: the estimate's standard error at a similarity of 0.9 is 0.027
NUM_PERM = 128
#: datasketch's permutation scheme and seed: every worker and every resumed crawl must sign a
#: text alike (datasketch 2.0 changed its default scheme; naming it keeps a stored index valid)
SCHEME = "affine32"
SEED = 1
#: a text of fewer words is not compared: too short to tell a copy from a page that shares a
#: heading or a sentence with another
MIN_WORDS = 2 * SHINGLE
#: a pair exactly at the threshold is a candidate with at least this probability
CANDIDATE_RECALL = 0.99
#: pages remembered in one band's bucket at most: a bucket full of pages alike on a band but
#: distinct (one template) bounds the candidates a page is checked against
MAX_BUCKET = 64
#: shingles a step of the signature: its (permutations x shingles) temporaries stay small
#: enough for the allocator's heap instead of a fresh mapping faulted in for every page
_CHUNK = 200
_WORD = re.compile(r"\w+")
#: a shingle's hash: its words' hashes as the digits of a number in this base, modulo 2^64,
#: folded to 32 bits
_BASE = np.uint64(0x100000001B3)
#: MurmurHash3's 32-bit finalizer: how datasketch's affine32 scheme mixes a value first
_FMIX = (np.uint32(16), np.uint32(0x85EBCA6B), np.uint32(13), np.uint32(0xC2B2AE35),
         np.uint32(16))


@lru_cache(maxsize=1 << 15)
def _word_hash(word: str) -> int:
    """A word's xxh32 (cached: a crawl's words recur from page to page)."""
    return xxh32_intdigest(word.encode("utf-8", "surrogatepass"))


def shingle_hashes(text: str, shingle: int = SHINGLE) -> np.ndarray | None:
    """The distinct 32-bit hashes of the text's shingles (lower-cased words), or None for a
    text of fewer than :data:`MIN_WORDS` words."""
    words = _WORD.findall(text.lower())
    if len(words) < max(MIN_WORDS, shingle):
        return None
    hashes = np.fromiter(map(_word_hash, words), dtype=np.uint64, count=len(words))
    n = len(hashes) - shingle + 1
    acc = hashes[:n].copy()
    for j in range(1, shingle):
        acc *= _BASE
        acc += hashes[j:j + n]
    acc ^= acc >> np.uint64(32)
    return np.unique(acc.astype(np.uint32))  # astype keeps the low 32 bits


def _rows_bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """(rows, bands): the most rows a band (the fewest false candidates) with which a pair at
    ``threshold`` is a candidate with probability CANDIDATE_RECALL."""
    for rows in range(num_perm, 0, -1):
        bands = num_perm // rows
        if 1.0 - (1.0 - threshold ** rows) ** bands >= CANDIDATE_RECALL:
            return rows, bands
    return 1, num_perm


@dataclass(frozen=True)
class Layout:
    """How signatures are made and banded: every index and worker of a crawl uses one."""

    threshold: float
    rows: int
    bands: int
    num_perm: int = NUM_PERM
    shingle: int = SHINGLE

    @classmethod
    def for_threshold(cls, threshold: float, num_perm: int = NUM_PERM) -> Layout:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"a near-duplicate threshold is in (0, 1], not {threshold}")
        rows, bands = _rows_bands(threshold, num_perm)
        return cls(threshold, rows, bands, num_perm)

    @property
    def need(self) -> int:
        """Signature positions that must agree: the threshold's share, rounded up."""
        return math.ceil(self.threshold * self.num_perm - 1e-9)

    def describe(self) -> str:
        """The layout as a string, stored beside a shared index so that a worker signing
        otherwise is refused instead of silently finding nothing."""
        return f"{self.signing()}/b{self.bands}x{self.rows}/need{self.need}"

    def signing(self) -> str:
        """How a text is signed: signatures made otherwise cannot be compared."""
        return f"minhash/{SCHEME}/seed{SEED}/p{self.num_perm}/w{self.shingle}-xxh32-poly"


def permutations(num_perm: int, seed: int = SEED) -> np.ndarray:
    """datasketch's ``affine32`` permutations for ``seed`` (``MinHash(num_perm, seed,
    scheme="affine32").permutations``, a test checks), drawn here: importing datasketch takes
    in scipy, which cost every crawl's start more than the rest of the spider."""
    gen = np.random.RandomState(seed)
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    return np.array([a, b])


class Signer:
    """Signatures of texts under one layout (the permutations made once)."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.permutations = permutations(layout.num_perm)
        a, b = self.permutations
        self._a, self._b = a[:, None], b[:, None]

    def signature(self, text: str) -> np.ndarray | None:
        """The text's MinHash values (uint32), or None for a text too short to compare."""
        hashes = shingle_hashes(text, self.layout.shingle)
        return None if hashes is None else self.minhash(hashes)

    def minhash(self, values: np.ndarray) -> np.ndarray:
        """datasketch's MinHash of these 32-bit values: what ``MinHash(hashfunc=int,
        permutations=self.permutations, scheme="affine32").update_batch(values)`` gives (a
        test checks), without its Python call per value, which cost a crawl more than the
        rest of the check together."""
        s1, m1, s2, m2, s3 = _FMIX
        v = values.astype(np.uint32)
        v ^= v >> s1
        v *= m1
        v ^= v >> s2
        v *= m2
        v ^= v >> s3
        out = np.full(self.layout.num_perm, 0xFFFFFFFF, dtype=np.uint32)
        for i in range(0, len(v), _CHUNK):
            np.minimum(out, (self._a * v[i:i + _CHUNK] + self._b).min(axis=1), out=out)
        return out


def band_keys(signature: np.ndarray, layout: Layout) -> list[int]:
    """One 64-bit key per band: two signatures with a band alike share that band's key."""
    rows = layout.rows
    data = np.ascontiguousarray(signature[:rows * layout.bands], dtype="<u4").tobytes()
    step = 4 * rows
    return [xxh3_64_intdigest(data[b * step:(b + 1) * step], seed=b)
            for b in range(layout.bands)]


def check_values(signature: np.ndarray) -> np.ndarray:
    """What an index keeps to check a candidate: each value's low 16 bits (two values agree
    on them by chance once in 65,536: the estimate moves by less than 0.0001), half the
    memory of the whole values."""
    return (np.asarray(signature, dtype=np.uint32) & 0xFFFF).astype("<u2")


class IndexUnavailable(Exception):
    """A shared index cannot be asked now (its server is away): the page goes unchecked."""


class NearDuplicateIndex(Protocol):
    """The pages exported so far, by signature (module docstring)."""

    layout: Layout

    def add(self, url: str, signature: np.ndarray) -> str | None:
        """The URL of an indexed page of which this one is a near-copy (the most similar;
        the first indexed of equals), else None and the page is indexed.  May raise
        :class:`IndexUnavailable`."""
        ...

    def __len__(self) -> int:
        """Distinct pages indexed."""
        ...


class MemoryIndex:
    """:class:`NearDuplicateIndex` in this process: per page its URL and check values, per
    band key the pages that have it (plain dicts and one growing array)."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.urls: list[str] = []
        self._checks = np.zeros((64, layout.num_perm), dtype="<u2")
        self._buckets: dict[int, list[int]] = {}

    def __len__(self) -> int:
        return len(self.urls)

    def add(self, url: str, signature: np.ndarray) -> str | None:
        keys = band_keys(signature, self.layout)
        checks = check_values(signature)
        candidates: set[int] = set()
        for key in keys:
            candidates.update(self._buckets.get(key, ()))
        if candidates:
            ids = np.fromiter(sorted(candidates), dtype=np.intp, count=len(candidates))
            agree = np.count_nonzero(self._checks[ids] == checks, axis=1)
            best = int(np.argmax(agree))  # the first of equals: the earliest indexed
            if agree[best] >= self.layout.need:
                found = self.urls[ids[best]]
                return None if found == url else found
        self._insert(url, keys, checks)
        return None

    def insert(self, url: str, signature: np.ndarray) -> None:
        """Index a page known to be distinct (a resumed crawl's pages)."""
        self._insert(url, band_keys(signature, self.layout), check_values(signature))

    def _insert(self, url: str, keys: list[int], checks: np.ndarray) -> None:
        n = len(self.urls)
        if n == len(self._checks):
            self._checks = np.concatenate([self._checks, np.zeros_like(self._checks)])
        self._checks[n] = checks
        self.urls.append(url)
        for key in keys:
            bucket = self._buckets.get(key)
            if bucket is None:
                self._buckets[key] = [n]
            elif len(bucket) < MAX_BUCKET:
                bucket.append(n)

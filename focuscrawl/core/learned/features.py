"""A link's own evidence as features: hashed tokens of its anchor, URL and nearby text, plus a
few dense facts (the parent's and grandparent's relevance, keyword matches, depth).

No Scrapy import.  Features are computed once, when the link is found, from what the crawler
has then; the raw text is not kept.  Tokens are hashed (a stable CRC-32, so a resumed crawl
hashes as the first run did) into ``2**bits`` columns, one namespace per source, so "lock" in
an anchor and "lock" in a URL are different evidence.  A row's values are ``1/sqrt(n)`` for the
``n`` distinct tokens of a namespace: a linear weight over a row is then a cosine-like match.

:class:`FeatureStore` keeps the rows of the links still queued (and of the pages whose label is
still being learnt) in flat numpy arrays, so that the whole frontier is re-scored with a few
vectorised operations, not a Python loop per link.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ..relevance import normalize, tokenize
from ..urls import URL_CACHE_SIZE

NAMESPACES = ("a", "u", "c")  # anchor, URL, context: the text namespaces the profile projects onto
# dense columns, in order
DENSE = ("parent", "grandparent", "kw_anchor", "kw_url", "kw_context", "same_host", "chrome",
         "depth", "seed")
#: the columns a link's row takes from the best of its in-links (FeatureStore.keep_best): the
#: parents' relevance and keyword matches, each as the best in-link has it
BEST_OF_INLINKS = tuple(DENSE.index(c) for c in
                        ("parent", "grandparent", "kw_anchor", "kw_url", "kw_context"))
_URL_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# URL words that say nothing about a page's subject
URL_STOP = frozenset(
    "http https www html htm shtml php asp aspx jsp cgi index default org com net edu gov io en"
    " doc docs".split()
)
# tokens cached per namespace (and a quarter as many contexts), cleared when full: a site's
# vocabulary fits, and a crawl of many hosts, whose URLs bring new tokens all the time, no
# longer holds up to ~100 MB of them (five namespaces of 200,000 before; estimated)
_CACHE_LIMIT = 1 << 16
#: rows per chunk of FeatureStore.dot (its temporaries: ~40 bytes a feature)
DOT_CHUNK = 65_536


def url_tokens(url: str) -> list[str]:
    """Words of a URL's host and path (and query), lower-cased, plurals folded."""
    parts = urlsplit(url)
    text = f"{parts.hostname or ''} {parts.path} {parts.query}".lower()
    return [normalize(w) for w in _URL_WORD.findall(text) if w not in URL_STOP and len(w) > 1]


@lru_cache(maxsize=URL_CACHE_SIZE)
def directory_of(url: str) -> str:
    """``host/a/b/`` for ``scheme://host/a/b/page.html``: the area a directory bandit counts.

    Cached: a new link's directory is asked for its feature column and for its area id."""
    parts = urlsplit(url)
    path = parts.path or "/"
    return f"{(parts.hostname or '').lower()}{path[: path.rfind('/') + 1] or '/'}"


class LinkFeaturizer:
    """Turns a link's text into hashed feature columns (cached per token)."""

    def __init__(self, keyword_phrases: Sequence[tuple[str, ...]], bits: int = 18) -> None:
        if not 10 <= bits <= 26:
            raise ValueError("feature bits must be between 10 and 26")
        self.bits = bits
        self.dim = 1 << bits
        self._mask = self.dim - 1
        self.phrases = [p for p in keyword_phrases if p]
        self._columns: dict[str, dict[str, int]] = {ns: {} for ns in (*NAMESPACES, "h", "d")}
        self._context_cache: dict[str, list[str]] = {}

    def column(self, namespace: str, token: str) -> int:
        cache = self._columns[namespace]
        col = cache.get(token)
        if col is None:
            if len(cache) > _CACHE_LIMIT:
                cache.clear()
            col = cache[token] = zlib.crc32(f"{namespace}\x00{token}".encode()) & self._mask
        return col

    def tokens_of(self, columns: set[int]) -> dict[int, list[str]]:
        """``namespace:token`` of the tokens known to hash to each of ``columns`` (a
        dashboard's names for learned weights; only tokens still in the caches)."""
        found: dict[int, list[str]] = {}
        for ns, cache in self._columns.items():
            for token, col in cache.items():
                if col in columns:
                    found.setdefault(col, []).append(f"{ns}:{token}")
        return found

    def _keyword(self, tokens: Sequence[str]) -> float:
        for phrase in self.phrases:
            n = len(phrase)
            if n == 1:
                if phrase[0] in tokens:
                    return 1.0
            else:
                first = phrase[0]
                for i in range(len(tokens) - n + 1):
                    if tokens[i] == first and tuple(tokens[i:i + n]) == phrase:
                        return 1.0
        return 0.0

    def _context_tokens(self, context: str) -> list[str]:
        # a site's navigation repeats on every page: the same context string, tokenized once
        tokens = self._context_cache.get(context)
        if tokens is None:
            if len(self._context_cache) > _CACHE_LIMIT // 4:
                self._context_cache.clear()
            tokens = self._context_cache[context] = tokenize(context)
        return tokens

    def link(
        self,
        url: str,
        host: str,
        *,
        anchor: str = "",
        context: str = "",
        parent_host: str | None = None,
        seed: bool = False,
        chrome: bool = False,
        parent: float = 0.0,
        grandparent: float = 0.0,
        depth: int = 0,
    ) -> tuple[list[int], list[float], list[float]]:
        """(columns, values, dense) of one link; ``parent``/``grandparent`` are relevances."""
        anchor_tokens = tokenize(anchor) if anchor else []
        url_words = url_tokens(url)
        context_tokens = self._context_tokens(context) if context else []
        cols: list[int] = []
        vals: list[float] = []
        column, columns = self.column, self._columns
        for ns, tokens in (("a", anchor_tokens), ("u", url_words), ("c", context_tokens)):
            distinct = set(tokens)
            if ns == "c":
                distinct.difference_update(anchor_tokens)
            if not distinct:
                continue
            cache = columns[ns]  # column()'s cache, read inline: a call per token was a third
            for token in sorted(distinct):  # not set order: it varies with PYTHONHASHSEED
                col = cache.get(token)
                cols.append(column(ns, token) if col is None else col)
            vals += [1.0 / math.sqrt(len(distinct))] * len(distinct)
        cols.append(column("h", host))
        vals.append(1.0)
        cols.append(column("d", directory_of(url)))
        vals.append(1.0)
        dense = [
            parent,
            grandparent,
            self._keyword(anchor_tokens),
            self._keyword(url_words),
            self._keyword(context_tokens),
            1.0 if parent_host is not None and parent_host == host else 0.0,
            1.0 if chrome else 0.0,
            math.log1p(depth),
            1.0 if seed else 0.0,
        ]
        return cols, vals, dense

    def project(self, weights: dict[str, float], scales: dict[str, float]) -> np.ndarray:
        """A term vector (the topic profile) as weights over the hashed text columns."""
        out = np.zeros(self.dim, dtype=np.float64)
        for ns, scale in scales.items():
            if not scale:
                continue
            for term, w in weights.items():
                out[self.column(ns, term)] += scale * w
        return out


class FeatureStore:
    """Rows of hashed features (CSR-like) and dense facts, addressed by slot number.

    A row's values are few distinct numbers (``1/sqrt(n)`` per namespace, 1.0 for host and
    directory), so each is kept as a code into a table of the distinct float32 values seen,
    packed with its column into one unsigned 32-bit word (``column | code << bits``; 64-bit
    words once there are more codes than the 32 - ``bits`` high bits hold): 4 bytes a
    feature, not 8, and the values read back are the same float32s.  Rows are appended, slot
    after slot, contiguously; freed rows are reclaimed by :meth:`compact`, which renumbers the
    live slots (the caller updates its references from the mapping it returns).  Arrays grow
    by half, not double, and a compaction leaves a quarter of headroom: a queue of millions of
    rows is most of the learned order's memory.
    """

    def __init__(self, dense_width: int = len(DENSE), bits: int = 26) -> None:
        if not 1 <= bits <= 31:
            raise ValueError("column bits must be between 1 and 31")
        self.width = dense_width
        self.bits = bits  # columns are below 2**bits (LinkFeaturizer's ``bits``)
        self._feat: np.ndarray = np.zeros(1024, dtype=np.uint32)  # column | code << bits
        self._table = np.zeros(0, dtype=np.float32)  # code -> value
        self._code_of: dict[float, int] = {}  # a value (as given, and as float32) -> code
        self._shift_of: dict[float, int] = {}  # a value as given -> code << bits
        self._nnz = 0
        self._start = np.zeros(256, dtype=np.int64)
        self._end = np.zeros(256, dtype=np.int64)
        self._dense = np.zeros((256, dense_width), dtype=np.float32)
        self._area = np.zeros((256, 3), dtype=np.int32)  # host id, directory id, parent id
        self.inlinks = np.zeros(256, dtype=np.float32)
        self.near = np.zeros(256, dtype=np.float32)  # best relevance of a sibling nearby
        self._live = np.zeros(256, dtype=bool)
        self.rows = 0
        self.live = 0

    def __len__(self) -> int:
        return self.live

    def _grow_rows(self, need: int) -> None:
        size = len(self._start)
        if need <= size:
            return
        self._resize_rows(max(need, size + size // 2))

    def _resize_rows(self, new: int) -> None:
        n = self.rows
        start = np.zeros(new, dtype=np.int64)
        start[:n] = self._start[:n]
        end = np.zeros(new, dtype=np.int64)
        end[:n] = self._end[:n]
        dense = np.zeros((new, self.width), dtype=np.float32)
        dense[:n] = self._dense[:n]
        area = np.zeros((new, 3), dtype=np.int32)
        area[:n] = self._area[:n]
        inlinks = np.zeros(new, dtype=np.float32)
        inlinks[:n] = self.inlinks[:n]
        near = np.zeros(new, dtype=np.float32)
        near[:n] = self.near[:n]
        live = np.zeros(new, dtype=bool)
        live[:n] = self._live[:n]
        self._start, self._end, self._dense, self._area = start, end, dense, area
        self.inlinks, self.near, self._live = inlinks, near, live

    def _resize_features(self, new: int) -> None:
        feat = np.zeros(new, dtype=self._feat.dtype)
        feat[:self._nnz] = self._feat[:self._nnz]
        self._feat = feat

    def _split(self, feat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(columns as int32, codes) of packed features."""
        bits = feat.dtype.type(self.bits)
        return (feat & feat.dtype.type((1 << self.bits) - 1)).astype(np.int32), feat >> bits

    def _shifted(self, value: float) -> int:
        """``code << bits`` of ``value`` as float32 (a new code if it is not in the table)."""
        code = self._code(value)
        self._shift_of[value] = shifted = code << self.bits
        return shifted

    def _code(self, value: float) -> int:
        """The code of ``value`` as float32, a new one if it is not in the table yet."""
        f32 = float(np.float32(value))
        code = self._code_of.get(f32)
        if code is None:
            code = len(self._table)
            self._table = np.append(self._table, np.float32(f32))
            if code >> (32 - self.bits) and self._feat.dtype == np.uint32:
                self._feat = self._feat.astype(np.uint64)  # more codes than the high bits hold
            self._code_of[f32] = code
        self._code_of[value] = code
        return code

    def add(self, cols: Any, vals: Any, dense: Any, host: int, directory: int,
            parent: int = 0) -> int:
        """Store one row; returns its slot."""
        n = len(cols)
        if self._nnz + n > len(self._feat):
            self._resize_features(max(self._nnz + n, len(self._feat) + len(self._feat) // 2))
        if isinstance(vals, np.ndarray):
            vals = vals.tolist()
        if isinstance(cols, np.ndarray):
            cols = cols.tolist()
        shift_of = self._shift_of
        try:
            packed = [c | shift_of[v] for c, v in zip(cols, vals, strict=True)]
        except KeyError:
            packed = [c | (self._shifted(v) if shift_of.get(v) is None else shift_of[v])
                      for c, v in zip(cols, vals, strict=True)]
        slot = self.rows
        self._grow_rows(slot + 1)
        self._feat[self._nnz:self._nnz + n] = packed
        self._start[slot] = self._nnz
        self._end[slot] = self._nnz + n
        self._nnz += n
        self._dense[slot] = dense
        self._area[slot] = (host, directory, parent)
        self.inlinks[slot] = 1.0
        self.near[slot] = 0.0
        self._live[slot] = True
        self.rows += 1
        self.live += 1
        return slot

    def row(self, slot: int) -> tuple:
        """One row as plain values (bytes and floats), for :meth:`add` to store it again
        exactly: what a spilled link keeps on disk (its values as float32 bytes)."""
        start, end = int(self._start[slot]), int(self._end[slot])
        host, directory, parent = (int(x) for x in self._area[slot])
        cols, codes = self._split(self._feat[start:end])
        return (cols.tobytes(), self._table[codes].tobytes(),
                self._dense[slot].tobytes(), host, directory, parent,
                float(self.inlinks[slot]), float(self.near[slot]))

    def add_row(self, row: tuple) -> int:
        """Store a row :meth:`row` gave (its in-links and nearness included); its slot."""
        cols, vals, dense, host, directory, parent, inlinks, near = row
        slot = self.add(np.frombuffer(cols, dtype=np.int32), np.frombuffer(vals, dtype=np.float32),
                        np.frombuffer(dense, dtype=np.float32), host, directory, parent)
        self.inlinks[slot] = inlinks
        self.near[slot] = near
        return slot

    def row_bytes(self, slot: int) -> int:
        """Bytes one row holds in memory (its hashed features and its fixed columns)."""
        features = int(self._end[slot] - self._start[slot])
        return features * self._feat.itemsize + self.width * 4 + 3 * 4 + 16 + 8 + 1

    def free(self, slot: int) -> None:
        if self._live[slot]:
            self._live[slot] = False
            self.live -= 1

    def dense(self, slots: np.ndarray) -> np.ndarray:
        return self._dense[slots]

    def keep_best(self, slot: int, other: int) -> None:
        """``slot``'s evidence columns (:data:`BEST_OF_INLINKS`) become the better of its own and
        ``other``'s: a URL's row holds the best its in-links say, not one link's."""
        cols = list(BEST_OF_INLINKS)
        self._dense[slot, cols] = np.maximum(self._dense[slot, cols], self._dense[other, cols])

    def dense_value(self, slot: int, column: int) -> float:
        """One dense value of one row, as ``float(dense(np.array([slot]))[0, column])``
        without building arrays (asked for every link to a queued URL)."""
        return float(self._dense[slot, column])

    def areas(self, slots: np.ndarray) -> np.ndarray:
        return self._area[slots]

    def dot(self, slots: np.ndarray, weights: np.ndarray,
            extra: np.ndarray | None = None) -> np.ndarray:
        """Each row's hashed features times ``weights`` (+ ``extra``: the same as passing
        ``weights + extra``, each column's sum the same float, but only the rows' columns are
        added, not the whole 2**bits of both; one value per slot).

        In chunks of :data:`DOT_CHUNK` rows: :meth:`gather` makes a few 8-byte arrays per
        feature, which for a re-rank of millions of queued links (tens of features each) were
        gigabytes at once.  A row's sum is the same whatever the chunk: ``bincount`` adds a
        bin's terms in their order.
        """
        n = len(slots)
        if n <= DOT_CHUNK:
            if n == 0:
                return np.zeros(0)
            cols, vals, rows = self.gather(slots)
            if extra is None:
                w = weights[cols]
            elif len(cols) > len(weights) // 2:  # a re-rank: the whole sum is fewer adds
                w = (weights + extra)[cols]
            else:
                w = weights[cols] + extra[cols]
            return np.bincount(rows, weights=w * vals, minlength=n)
        if extra is not None:
            weights = weights + extra
        return np.concatenate([self.dot(slots[i:i + DOT_CHUNK], weights)
                               for i in range(0, n, DOT_CHUNK)])

    def gather(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(columns, values, row number within ``slots``) of the given rows, concatenated."""
        starts = self._start[slots]
        lengths = self._end[slots] - starts
        total = int(lengths.sum())
        rows = np.repeat(np.arange(len(slots)), lengths)
        offsets = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        index = np.repeat(starts, lengths) + offsets
        cols, codes = self._split(self._feat[index])
        return cols, self._table[codes].astype(np.float64), rows

    def compact(self) -> dict[int, int]:
        """Drop freed rows; returns {old slot: new slot} for the live ones.

        A mask over the features (1 byte each), not an index of them (8 bytes each, three
        times over): rows lie contiguously in slot order.
        """
        n_rows, nnz = self.rows, self._nnz
        live = self._live[:n_rows]
        old = np.flatnonzero(live)
        lengths = self._end[:n_rows] - self._start[:n_rows]
        keep = np.repeat(live, lengths)
        feat = self._feat[:nnz][keep]
        del keep
        mapping = dict(zip(old.tolist(), range(len(old)), strict=True))
        n = len(old)
        size = max(1024, len(feat) + len(feat) // 4)
        self._feat = np.zeros(size, dtype=feat.dtype)
        self._feat[:len(feat)] = feat
        self._nnz = len(feat)
        kept = lengths[old]
        ends = np.cumsum(kept)
        starts = ends - kept
        dense, area = self._dense[old], self._area[old]
        inlinks, near = self.inlinks[old], self.near[old]
        self.rows = 0
        self._resize_rows(max(256, n + n // 4))
        self._start[:n], self._end[:n] = starts, ends
        self._dense[:n], self._area[:n] = dense, area
        self.inlinks[:n], self.near[:n] = inlinks, near
        self._live[:n] = True
        self.rows = self.live = n
        return mapping

    @property
    def garbage(self) -> int:
        return self.rows - self.live

    def snapshot(self) -> dict[str, Any]:
        """Plain bytes and numbers (comparable with ``==``, compact when pickled); the values
        as float32, as before they were coded."""
        n, nnz = self.rows, self._nnz
        cols, codes = self._split(self._feat[:nnz])
        return {
            "rows": n,
            "cols": cols.tobytes(),
            "vals": self._table[codes].tobytes(),
            "start": self._start[:n].tobytes(), "end": self._end[:n].tobytes(),
            "dense": self._dense[:n].tobytes(), "area": self._area[:n].tobytes(),
            "inlinks": self.inlinks[:n].tobytes(), "near": self.near[:n].tobytes(),
            "live": self._live[:n].tobytes(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        n = state["rows"]
        self.__init__(self.width, self.bits)  # type: ignore[misc]
        self._grow_rows(max(n, 1))
        cols = np.frombuffer(state["cols"], dtype=np.int32)
        nnz = len(cols)
        table, codes = np.unique(np.frombuffer(state["vals"], dtype=np.float32),
                                 return_inverse=True)
        self._table = table.astype(np.float32)
        self._code_of = {v: i for i, v in enumerate(self._table.tolist())}
        self._shift_of = {}
        if len(table) >> (32 - self.bits):
            self._feat = self._feat.astype(np.uint64)
        self._resize_features(max(1024, nnz))
        packed = codes.reshape(-1).astype(np.uint64) << np.uint64(self.bits)
        packed |= cols.astype(np.uint64)
        self._feat[:nnz] = packed
        self._nnz = nnz
        self._start[:n] = np.frombuffer(state["start"], dtype=np.int64)
        self._end[:n] = np.frombuffer(state["end"], dtype=np.int64)
        self._dense[:n] = np.frombuffer(state["dense"], dtype=np.float32).reshape(n, self.width)
        self._area[:n] = np.frombuffer(state["area"], dtype=np.int32).reshape(n, 3)
        self.inlinks[:n] = np.frombuffer(state["inlinks"], dtype=np.float32)
        self.near[:n] = np.frombuffer(state["near"], dtype=np.float32)
        live = np.frombuffer(state["live"], dtype=bool)
        self._live[:n] = live
        self.rows = n
        self.live = int(live.sum())

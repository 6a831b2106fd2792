"""The repository a virtual crawl is judged against: url -> (title, text, outlinks).

Cho et al. and Pant et al. both crawl once, keep every page, and judge crawl orders against that
complete picture.  A Repository is that picture: built from dicts, from docweb's corpus
(``corpus.jsonl.gz``), or from a WARC that a crawl recorded (``FOCUS_WARC``).  No Scrapy import.
"""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import urljoin

import numpy as np

from .text import Stemmer, canonical_url, parse_html, plural_strip, tokenize
from .warcindex import WarcIndex

MAX_REDIRECTS = 10
HTML_TYPES = ("text/html", "application/xhtml+xml")


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    text: str
    outlinks: tuple[str, ...] = ()


def open_text(path: str | os.PathLike[str]):
    """Open a text file, gunzipping when the name ends in .gz."""
    path = os.fspath(path)
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


class Repository:
    """Pages by URL, with the link graph among them and a resolver for crawled URLs.

    ``redirects`` maps a URL to where it redirects (a crawled alias then counts as its target);
    ``canonical`` is an optional extra URL mapper, e.g. docweb's ``Site.canonical``, tried
    before the generic w3lib canonical form.
    """

    def __init__(
        self,
        pages: Iterable[Page | Mapping[str, Any]],
        *,
        redirects: Mapping[str, str] | None = None,
        canonical: Callable[[str], str | None] | None = None,
    ) -> None:
        self.pages: list[Page] = []
        self.index: dict[str, int] = {}
        self.duplicates = 0  # later pages with an already-seen URL are dropped (first one wins)
        for p in pages:
            page = p if isinstance(p, Page) else _page_from_dict(p)
            if page.url in self.index:
                self.duplicates += 1
                continue
            self.index[page.url] = len(self.pages)
            self.pages.append(page)
        self._canon_index: dict[str, int] = {}
        for i, page in enumerate(self.pages):
            try:
                self._canon_index.setdefault(canonical_url(page.url), i)
            except ValueError:
                pass
        self.redirects: dict[str, str] = {}
        for src, dst in (redirects or {}).items():
            try:
                self.redirects[canonical_url(src)] = dst
            except ValueError:
                continue
        self.canonical = canonical
        self.scores: dict[str, float] = {}  # the crawler's own scores, when the source had them

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_dicts(cls, dicts: Iterable[Mapping[str, Any]], **kwargs: Any) -> Repository:
        """From ``{url, title, text, outlinks}`` dicts (other keys ignored)."""
        return cls(dicts, **kwargs)

    @classmethod
    def from_jsonl(cls, path: str | os.PathLike[str], **kwargs: Any) -> Repository:
        """From JSON lines (optionally .gz), e.g. docweb's ``corpus.jsonl.gz``."""
        with open_text(path) as f:
            return cls((json.loads(ln) for ln in f if ln.strip()), **kwargs)

    @classmethod
    def from_warc(cls, path: str | os.PathLike[str], **kwargs: Any) -> Repository:
        """From the HTML responses of a WARC; recorded redirects become URL aliases.

        A page is a 2xx response whose Content-Type is HTML (or absent).  Its outlinks are the
        links that land, through recorded redirects, on another page of the WARC.
        """
        pages: list[Page] = []
        redirects: dict[str, str] = {}
        with WarcIndex(path) as idx:
            for key, entry in idx.responses.items():
                loc = entry.header("Location")
                if 300 <= entry.status < 400 and loc:
                    try:
                        redirects[key] = canonical_url(urljoin(entry.url, loc))
                    except ValueError:
                        pass
                    continue
                if not 200 <= entry.status < 300:
                    continue
                ctype = entry.header("Content-Type")
                if ctype and ctype.split(";")[0].strip().lower() not in HTML_TYPES:
                    continue
                try:
                    body = idx.body(entry, decode_content=True)
                except Exception:  # a damaged or undecodable body is no page
                    continue
                parsed = parse_html(body, entry.url, ctype)
                pages.append(Page(key, parsed.title, parsed.text, tuple(parsed.links)))
            scores = dict(idx.scores)
        repo = cls(pages, redirects=redirects, **kwargs)
        # Links through redirects land on their targets; links out of the WARC are dropped.
        fixed = []
        for i, page in enumerate(repo.pages):
            seen: set[str] = set()
            out = []
            for link in page.outlinks:
                j = repo.resolve(link)
                if j is None or j == i:
                    continue
                u = repo.pages[j].url
                if u not in seen:
                    seen.add(u)
                    out.append(u)
            fixed.append(Page(page.url, page.title, page.text, tuple(out)))
        repo.pages = fixed
        repo.scores = scores
        return repo

    # -- access ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.pages)

    def __iter__(self) -> Iterator[Page]:
        return iter(self.pages)

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and self.resolve(url) is not None

    def __getitem__(self, url: str) -> Page:
        i = self.resolve(url)
        if i is None:
            raise KeyError(url)
        return self.pages[i]

    @property
    def urls(self) -> list[str]:
        return [p.url for p in self.pages]

    def resolve(self, url: str) -> int | None:
        """Index of the page a crawled URL stands for, or None if it is not in the repository.

        Tries the URL as given, the ``canonical`` mapper, then its w3lib canonical form followed
        through recorded redirects (at most 10 hops).
        """
        i = self.index.get(url)
        if i is not None:
            return i
        if self.canonical is not None:
            mapped = self.canonical(url)
            if mapped is not None:
                i = self.index.get(mapped)
                if i is not None:
                    return i
        try:
            key = canonical_url(url)
        except ValueError:
            return None
        for _ in range(MAX_REDIRECTS + 1):
            i = self._canon_index.get(key)
            if i is not None:
                return i
            nxt = self.redirects.get(key)
            if nxt is None:
                return None
            try:
                key = canonical_url(nxt)
            except ValueError:
                return None
        return None

    def resolve_all(self, urls: Iterable[str]) -> list[int | None]:
        return [self.resolve(u) for u in urls]

    # -- link graph -----------------------------------------------------------------------------
    @cached_property
    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct page -> page links inside the repository, self-links dropped: (src, dst)."""
        src: list[int] = []
        dst: list[int] = []
        for i, page in enumerate(self.pages):
            seen = set()
            for link in page.outlinks:
                j = self.index.get(link)
                if j is None:
                    j = self.resolve(link)
                if j is None or j == i or j in seen:
                    continue
                seen.add(j)
                src.append(i)
                dst.append(j)
        return np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)

    def terms(self, stem: Stemmer | None = plural_strip) -> TermIndex:
        """Per-page term frequencies (built once per stemmer and cached)."""
        cache = self.__dict__.setdefault("_terms", {})
        if stem not in cache:
            titles = [p.title for p in self.pages]
            cache[stem] = TermIndex(titles, [p.text for p in self.pages], stem)
        return cache[stem]


def _page_from_dict(d: Mapping[str, Any]) -> Page:
    return Page(
        url=str(d["url"]),
        title=str(d.get("title") or ""),
        text=str(d.get("text") or ""),
        outlinks=tuple(d.get("outlinks") or ()),
    )


class _Csr:
    """Compressed rows of (term id, count) per page."""

    def __init__(self, rows: Sequence[Counter[int]]) -> None:
        self.ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        ids: list[int] = []
        tfs: list[int] = []
        for i, row in enumerate(rows):
            for t, c in row.items():
                ids.append(t)
                tfs.append(c)
            self.ptr[i + 1] = len(ids)
        self.ids = np.asarray(ids, dtype=np.int64)
        self.tf = np.asarray(tfs, dtype=np.float64)
        self.row = np.repeat(np.arange(len(rows), dtype=np.int64), np.diff(self.ptr))

    def count(self, term: int, n: int) -> np.ndarray:
        """Occurrences of one term in every page."""
        out = np.zeros(n, dtype=np.float64)
        hit = self.ids == term
        np.add.at(out, self.row[hit], self.tf[hit])
        return out


class TermIndex:
    """Title and body term counts of every page, plus title+body together for TF-IDF."""

    def __init__(self, titles: Sequence[str], texts: Sequence[str], stem: Stemmer | None) -> None:
        self.stem = stem
        self.vocab: dict[str, int] = {}
        self.n = len(titles)
        self.titles = list(titles)
        self.texts = list(texts)
        title_rows: list[Counter[int]] = []
        body_rows: list[Counter[int]] = []
        all_rows: list[Counter[int]] = []
        for title, text in zip(titles, texts, strict=True):
            t = Counter(self._ids(tokenize(title, stem)))
            b = Counter(self._ids(tokenize(text, stem)))
            title_rows.append(t)
            body_rows.append(b)
            all_rows.append(t + b)
        self.title = _Csr(title_rows)
        self.body = _Csr(body_rows)
        self.all = _Csr(all_rows)
        self.df = np.bincount(self.all.ids, minlength=len(self.vocab)).astype(np.float64)

    def _ids(self, tokens: list[str]) -> list[int]:
        vocab = self.vocab
        return [vocab.setdefault(t, len(vocab)) for t in tokens]

    def term_id(self, token: str) -> int | None:
        return self.vocab.get(token)

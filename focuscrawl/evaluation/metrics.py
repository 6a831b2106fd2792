"""Crawl-order metrics against an omniscient repository.  Plain Python + numpy, no Scrapy import.

A crawl is the list of fetched URLs in crawl order.  Every curve is indexed by k, the number of
pages fetched so far (``curve[k - 1]``), except static coverage, indexed by n, the size of the
repository's top-n set.

Counting rules, the same for every metric:
* a fetched URL is resolved to a repository page (``Repository.resolve``: as given, canonical
  form, recorded redirects); a URL that resolves to nothing still counts as a fetch, never as a
  relevant page;
* a page fetched again (the same page under another URL, say) counts as a fetch but is
  relevant, hot or a target only the first time: re-fetching is waste, not progress;
* set metrics (coverage, recall, mean rank) look at the distinct pages fetched so far.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from .ranking import Ranking, hot_pages, keyword_presence, ltc_scores, pagerank
from .repository import Repository, open_text
from .text import Stemmer, canonical_url, keyword_phrases, plural_strip

DEFAULT_THRESHOLD = 0.15  # docweb's relevance threshold on the judge's cosine
DEFAULT_HOT_BODY_COUNT = 10  # Cho et al.
STATIC_TOP_N = 500  # Pant et al. plot coverage of the top 1..500 pages


def read_crawl(source: str | os.PathLike[str] | Iterable[Mapping[str, Any]]) -> list[dict]:
    """A crawl's JSON lines (a path, .gz allowed, or dicts) sorted by ``order``.

    Lines without ``order`` keep their place after the numbered ones (stable sort).
    """
    if isinstance(source, (str, os.PathLike)):
        with open_text(source) as f:
            rows = [json.loads(ln) for ln in f if ln.strip()]
    else:
        rows = [dict(r) for r in source]
    big = float("inf")
    return sorted(rows, key=lambda r: r["order"] if r.get("order") is not None else big)


def fetched_urls(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The ``url`` of every crawl line, in the given order."""
    return [str(r["url"]) for r in rows]


def load_docweb_topic(path: str | os.PathLike[str], topic_id: str) -> dict[str, Any]:
    """One topic of docweb's ``topics.json``: keywords, description, threshold, the judge's
    scores (url -> score, pages scoring under 0.01 omitted) and the two seed sets."""
    with open_text(path) as f:
        doc = json.load(f)
    urls = doc["urls"]
    for t in doc["topics"]:
        if t["id"] == topic_id:
            return {
                "id": t["id"],
                "keywords": t["keywords"],
                "description": t["description"],
                "threshold": t["relevant"]["threshold"],
                "judge_scores": {urls[i]: s for i, s in t["ranking"]},
                "examples": list(t["seeds"]["from_examples"]),
                "neighbors": [n["url"] for n in t["seeds"]["from_neighbors"]],
            }
    raise KeyError(f"no topic {topic_id!r} in {os.fspath(path)}")


def cumulative_fraction(flags: Sequence[bool] | np.ndarray) -> np.ndarray:
    """``out[k-1]`` = fraction of the first k flags that are true (k = 1..n)."""
    f = np.asarray(flags, dtype=np.float64)
    if f.size == 0:
        return np.zeros(0)
    return np.cumsum(f) / np.arange(1, f.size + 1)


class Evaluation:
    """One topic judged over one repository; rankings are computed once and cached.

    ``keywords`` are what the crawler was given; ``description`` is what the judge scores pages
    against.  ``judge_scores`` (url -> score) replaces the computed lexical scores, e.g. with
    docweb's topics.json ranking (Snowball-stemmed) for exact agreement with its ground truth.
    """

    def __init__(
        self,
        repository: Repository,
        keywords: str | Sequence[str],
        description: str,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        hot_body_count: int = DEFAULT_HOT_BODY_COUNT,
        damping: float = 0.85,
        judge_scores: Mapping[str, float] | None = None,
        stem: Stemmer | None = plural_strip,
    ) -> None:
        self.repo = repository
        self.keywords = keyword_phrases(keywords, stem)
        self.description = description
        self.threshold = threshold
        self.hot_body_count = hot_body_count
        self.damping = damping
        self.stem = stem
        self._judge_scores = judge_scores

    # -- per-page omniscient facts ---------------------------------------------------------------
    @cached_property
    def terms(self):
        return self.repo.terms(self.stem)

    @cached_property
    def scores(self) -> np.ndarray:
        """The judge's score of every page (cosine with the description, SMART ltc)."""
        if self._judge_scores is None:
            return ltc_scores(self.terms, self.description)
        out = np.zeros(len(self.repo))
        for url, s in self._judge_scores.items():
            i = self.repo.resolve(url)
            if i is not None:
                out[i] = float(s)
        return out

    @cached_property
    def relevant(self) -> np.ndarray:
        return self.scores >= self.threshold

    @cached_property
    def hot(self) -> np.ndarray:
        return hot_pages(self.terms, self.keywords, self.hot_body_count)

    @cached_property
    def keyword_counts(self) -> np.ndarray:
        return keyword_presence(self.terms, self.keywords)

    @cached_property
    def pagerank(self) -> np.ndarray:
        src, dst = self.repo.edges
        return pagerank(len(self.repo), src, dst, damping=self.damping)

    @cached_property
    def lexical(self) -> Ranking:
        """rank_SMART: by judge score, ties by repository order."""
        return Ranking.from_keys(self.scores)

    @cached_property
    def linkage(self) -> Ranking:
        """rank_KW,PR: by number of keywords present, ties by PageRank, then repository order."""
        return Ranking.from_keys(self.keyword_counts, self.pagerank)

    def ranking(self, name: str) -> Ranking:
        if name == "lexical":
            return self.lexical
        if name == "linkage":
            return self.linkage
        raise ValueError(f"unknown ranking {name!r} (use 'lexical' or 'linkage')")

    # -- crawls --------------------------------------------------------------------------------
    def resolve(self, crawl: Sequence[str]) -> list[int | None]:
        """Repository index of each fetch; None for unknown URLs and for repeated pages."""
        seen: set[int] = set()
        out: list[int | None] = []
        for url in crawl:
            i = self.repo.resolve(url)
            if i is None or i in seen:
                out.append(None)
            else:
                seen.add(i)
                out.append(i)
        return out

    def _flags(self, crawl: Sequence[str], mask: np.ndarray) -> np.ndarray:
        return np.array([i is not None and bool(mask[i]) for i in self.resolve(crawl)], dtype=bool)

    def harvest_rate(self, crawl: Sequence[str], by: str = "score") -> np.ndarray:
        """Fraction of the first k fetches that are relevant, k = 1..n.

        ``by="score"``: judge score >= threshold; ``by="hot"``: Cho's hot rule.
        """
        if by == "score":
            mask = self.relevant
        elif by == "hot":
            mask = self.hot
        else:
            raise ValueError(f"unknown relevance {by!r} (use 'score' or 'hot')")
        return cumulative_fraction(self._flags(crawl, mask))

    def static_coverage(
        self, crawl: Sequence[str], ranking: str = "lexical", max_n: int = STATIC_TOP_N
    ) -> np.ndarray:
        """Pant's static metric: ``out[n-1]`` = % of the repository's top-n pages the crawl got.

        n = 1..min(max_n, repository size).
        """
        rk = self.ranking(ranking)
        m = min(max_n, len(rk))
        got = np.zeros(len(self.repo), dtype=bool)
        for i in self.resolve(crawl):
            if i is not None:
                got[i] = True
        hits = np.cumsum(got[rk.order[:m]])
        return 100.0 * hits / np.arange(1, m + 1)

    def dynamic_mean_rank(self, crawl: Sequence[str], ranking: str = "lexical") -> np.ndarray:
        """Pant's dynamic metric: mean rank of the distinct known pages among the first k fetches.

        NaN until the first known page.  Lower is better.
        """
        rank = self.ranking(ranking).rank
        total = 0.0
        count = 0
        out = np.full(len(crawl), np.nan)
        for k, i in enumerate(self.resolve(crawl)):
            if i is not None:
                total += float(rank[i])
                count += 1
            if count:
                out[k] = total / count
        return out

    def target_recall(self, crawl: Sequence[str], targets: Iterable[str]) -> np.ndarray:
        """Fraction of the target pages among the first k fetches.

        Targets are resolved like fetches; a target not in the repository still counts in the
        denominator (matched by canonical URL), so recall never flatters a crawl.
        """
        keys = {self._key(t) for t in targets}
        if not keys:
            return np.zeros(len(crawl))
        found: set[Any] = set()
        out = np.zeros(len(crawl))
        for k, url in enumerate(crawl):
            key = self._key(url)
            if key in keys:
                found.add(key)
            out[k] = len(found) / len(keys)
        return out

    def _key(self, url: str) -> int | str:
        i = self.repo.resolve(url)
        if i is not None:
            return i
        try:
            return canonical_url(url)
        except ValueError:
            return url

    def hot_coverage(self, crawl: Sequence[str]) -> np.ndarray:
        """Cho's curve: % of all the repository's hot pages among the first k fetches."""
        total = int(self.hot.sum())
        if total == 0:
            return np.zeros(len(crawl))
        return 100.0 * np.cumsum(self._flags(crawl, self.hot)) / total

    def summary(
        self,
        crawl: Sequence[str],
        targets: Iterable[str] | None = None,
        at: Sequence[int] = (100, 500, 1000, 2000),
    ) -> dict[str, Any]:
        """Headline numbers of a crawl at a few crawl lengths, for tables and JSON reports."""
        n = len(crawl)
        points = [k for k in at if k <= n] + ([n] if n and n not in at else [])
        curves: dict[str, np.ndarray] = {
            "harvest_score": self.harvest_rate(crawl, "score"),
            "harvest_hot": self.harvest_rate(crawl, "hot"),
            "hot_coverage_pct": self.hot_coverage(crawl),
            "mean_rank_lexical": self.dynamic_mean_rank(crawl, "lexical"),
            "mean_rank_linkage": self.dynamic_mean_rank(crawl, "linkage"),
        }
        if targets is not None:
            curves["target_recall"] = self.target_recall(crawl, list(targets))
        out: dict[str, Any] = {
            "pages": n,
            "unknown": sum(1 for u in crawl if self.repo.resolve(u) is None),
            "repository": len(self.repo),
            "relevant_in_repository": int(self.relevant.sum()),
            "hot_in_repository": int(self.hot.sum()),
            "at": {str(k): {name: _num(c[k - 1]) for name, c in curves.items()} for k in points},
        }
        for name in ("lexical", "linkage"):
            cov = self.static_coverage(crawl, name)
            out[f"static_coverage_{name}_pct"] = {
                str(m): _num(cov[m - 1]) for m in (10, 50, 100, 500) if m <= len(cov)
            }
        return out


def _num(x: float) -> float | None:
    return None if np.isnan(x) else round(float(x), 6)

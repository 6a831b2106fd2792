"""Topic relevance: tokenizer, term vectors, cosine similarity and Cho's hotness test.

Plain Python + numpy, no Scrapy import, so the classifier can be tested and reused alone.

A *topic* is a list of keywords, each a word or a phrase.  The page score is the cosine
similarity between the topic's term vector and the page's term vector (Pant et al.), optionally
weighted by IDF learnt from the pages seen so far.  A page is *hot* (Cho et al.) when a keyword is
in its title or occurs at least ``hot_body_count`` times in its body.
"""

from __future__ import annotations

import math
import re
import shlex
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import filterfalse

import numpy as np

# Unicode letters and digits; "_" is a word character for \w but never part of a word here.
_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)

STOP_WORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could did do does doing don down during each few
    for from further had has have having he her here hers herself him himself his how i if in into
    is isn it its itself just let me more most my myself no nor not now of off on once only or
    other ought our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up upon
    us very was we were what when where which while who whom why will with would you your yours
    yourself yourselves also may might must shall via per etc e g ie eg s t""".split()
)


@lru_cache(maxsize=1 << 16)
def normalize(token: str) -> str:
    """Strip an English plural so that "transactions" matches the keyword "transaction".

    Deliberately light (no stemmer dependency): users type keywords in either number.  Cached:
    a page's words repeat across pages (it was 3% of a replayed crawl's CPU time).
    """
    if len(token) <= 3 or not token.isalpha():
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "xes", "ches", "shes", "zes")):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def tokenize(text: str, *, stop_words: frozenset[str] = STOP_WORDS) -> list[str]:
    """Lower-cased Unicode words, stop words removed, plurals folded."""
    if not text:
        return []
    # map/filterfalse iterate in C: a page's tokens were 2% of a replayed crawl's CPU time
    return list(map(normalize, filterfalse(stop_words.__contains__,
                                           _WORD_RE.findall(text.lower()))))


def parse_keywords(spec: str | Sequence[str]) -> list[str]:
    """Split a user's keyword string into keywords (words or phrases).

    ``"garbage collection, GIL"`` -> two keywords (comma separates phrases);
    ``"garbage collection tracing"`` -> three keywords; ``'"memory leak" profiler'`` -> two.
    """
    if not isinstance(spec, str):
        parts = [str(p) for p in spec]
    elif "," in spec:
        parts = spec.split(",")
    else:
        try:
            parts = shlex.split(spec)
        except ValueError:  # an unbalanced quote: fall back to plain words
            parts = spec.replace('"', " ").split()
    keywords: list[str] = []
    for part in parts:
        part = " ".join(part.split())
        if part and tokenize(part) and part not in keywords:
            keywords.append(part)
    return keywords


def count_phrase(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    """Occurrences of ``phrase`` (a token sequence) in ``tokens``."""
    n = len(phrase)
    if n == 0 or n > len(tokens):
        return 0
    if n == 1:
        return tokens.count(phrase[0])  # in C: a page's keyword counts are taken three times
    first = phrase[0]
    phrase = list(phrase)
    return sum(
        1
        for i, t in enumerate(tokens[: len(tokens) - n + 1])
        if t == first and list(tokens[i : i + n]) == phrase
    )


@dataclass
class DocumentFrequencies:
    """Document frequencies of terms over the pages seen so far, for optional IDF weighting."""

    documents: int = 0
    df: Counter[str] = field(default_factory=Counter)

    def add(self, tokens: Iterable[str]) -> None:
        self.documents += 1
        self.df.update(set(tokens))

    def idf(self, term: str) -> float:
        """Smoothed IDF, positive even for a term in every page (so a keyword never counts < 0)."""
        return math.log((1 + self.documents) / (1 + self.df.get(term, 0))) + 1.0


@dataclass(frozen=True)
class PageScore:
    """What the classifier says about one page."""

    score: float
    hot: bool
    keyword_hits: int


class Topic:
    """The topic a crawl is focused on, built once from the user's keywords."""

    def __init__(
        self,
        keywords: str | Sequence[str],
        *,
        hot_body_count: int = 10,
        use_idf: bool = False,
    ) -> None:
        self.keywords = parse_keywords(keywords)
        if not self.keywords:
            raise ValueError("no usable keywords (after removing stop words)")
        self.phrases: list[tuple[str, ...]] = [tuple(tokenize(k)) for k in self.keywords]
        # what a text mentioning a phrase must contain (see mentions)
        self._mention_roots = tuple({p[0][:-1] if p[0].endswith("y") else p[0]
                                     for p in self.phrases})
        counts: Counter[str] = Counter(t for p in self.phrases for t in p)
        self.terms: list[str] = sorted(counts)
        self._index = {t: i for i, t in enumerate(self.terms)}
        self._query_tf = np.array([counts[t] for t in self.terms], dtype=np.float64)
        self.hot_body_count = hot_body_count
        self.use_idf = use_idf
        self.document_frequencies = DocumentFrequencies()

    def __repr__(self) -> str:
        return f"Topic({self.keywords!r})"

    # -- scoring -------------------------------------------------------------------------
    def cosine(self, tokens: Sequence[str]) -> float:
        """Cosine similarity between the topic and a token list (TF, or TF-IDF if enabled)."""
        if not tokens:
            return 0.0
        counts = Counter(tokens)
        page_tf = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        shared = np.array([counts.get(t, 0) for t in self.terms], dtype=np.float64)
        query = self._query_tf
        if self.use_idf:
            dfs = self.document_frequencies
            page_tf = page_tf * np.fromiter(
                (dfs.idf(t) for t in counts), dtype=np.float64, count=len(counts)
            )
            idf_q = np.array([dfs.idf(t) for t in self.terms], dtype=np.float64)
            shared = shared * idf_q
            query = query * idf_q
        denom = float(np.linalg.norm(query) * np.linalg.norm(page_tf))
        if denom == 0.0:
            return 0.0
        return float(np.dot(query, shared) / denom)

    def hits(self, tokens: Sequence[str]) -> list[int]:
        """Occurrences of each keyword (phrases as consecutive tokens)."""
        return [count_phrase(tokens, p) for p in self.phrases]

    def is_hot(self, title_tokens: Sequence[str], body_tokens: Sequence[str]) -> bool:
        """Cho's rule: a keyword in the title, or one keyword at least hot_body_count times."""
        if any(count_phrase(title_tokens, p) for p in self.phrases):
            return True
        return any(h >= self.hot_body_count for h in self.hits(body_tokens))

    def mentions(self, text: str) -> bool:
        """True if ``text`` (an anchor text or a URL) contains a keyword.

        Asked twice of every outlink, and almost always False: a substring test answers most
        texts without tokenizing them.  A token ``normalize(w)`` of a word ``w`` of the
        lower-cased text is a prefix of ``w``, or ends in the "y" of "ies" and is one without
        it; so a text whose first phrase token matches contains that token (without a last "y")
        as a substring.
        """
        lowered = text.lower()
        if not any(root in lowered for root in self._mention_roots):
            return False
        tokens = tokenize(text)
        return any(count_phrase(tokens, p) for p in self.phrases)

    def score_page(self, title: str, text: str) -> PageScore:
        """Score a page on its title and visible text; learns IDF statistics if enabled."""
        return self.score_tokens(tokenize(title), tokenize(text))

    def score_tokens(self, title_tokens: list[str], body_tokens: list[str]) -> PageScore:
        """:meth:`score_page` of a title and text already tokenized."""
        tokens = title_tokens + body_tokens
        if self.use_idf:
            self.document_frequencies.add(tokens)
        return PageScore(
            score=self.cosine(tokens),
            hot=self.is_hot(title_tokens, body_tokens),
            keyword_hits=sum(self.hits(tokens)),
        )

"""Omniscient evaluation of crawl orders (Cho et al. 1998; Pant, Srinivasan & Menczer 2002).

Plain Python + numpy (+ lxml and warcio to read WARCs), no Scrapy import::

    repo = Repository.from_jsonl("corpus.jsonl.gz")          # or Repository.from_warc(...)
    ev = Evaluation(repo, "memory leak profiler", "Finding memory leaks: ...")
    crawl = fetched_urls(read_crawl("crawl.jsonl"))
    ev.harvest_rate(crawl), ev.static_coverage(crawl, "linkage"), ev.hot_coverage(crawl)
"""

from .metrics import (
    DEFAULT_HOT_BODY_COUNT,
    DEFAULT_THRESHOLD,
    Evaluation,
    cumulative_fraction,
    fetched_urls,
    load_docweb_topic,
    read_crawl,
)
from .ranking import Ranking, hot_pages, keyword_presence, ltc_scores, pagerank
from .repository import Page, Repository, TermIndex
from .text import STOP_WORDS, canonical_url, keyword_phrases, parse_html, plural_strip, tokenize
from .warcindex import SCORE_HEADER, WarcIndex, WarcResponse

__all__ = [
    "DEFAULT_HOT_BODY_COUNT",
    "DEFAULT_THRESHOLD",
    "SCORE_HEADER",
    "STOP_WORDS",
    "Evaluation",
    "Page",
    "Ranking",
    "Repository",
    "TermIndex",
    "WarcIndex",
    "WarcResponse",
    "canonical_url",
    "cumulative_fraction",
    "fetched_urls",
    "hot_pages",
    "keyword_phrases",
    "keyword_presence",
    "load_docweb_topic",
    "ltc_scores",
    "pagerank",
    "parse_html",
    "plural_strip",
    "read_crawl",
    "tokenize",
]

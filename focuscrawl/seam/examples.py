"""The topic's example pages (``-a examples=URLS``, ``-a negatives=URLS``) and the page
classifier they train (:class:`focuscrawl.core.classifier.PageClassifier`).

The examples that are not seeds are fetched before the seeds are handed to the scheduler,
through the downloader and its middlewares (politeness, robots.txt) but not the scheduler:
they use none of MAX_PAGES and are no crawl items.  An example that is also a seed is
fetched once, as a seed: its page is learnt from when the spider parses it.  With JOBDIR the
classifier is kept in the spider's state and a resumed crawl fetches no example again.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import scrapy

from focuscrawl.core.classifier import Features, PageClassifier
from focuscrawl.core.learned import PageDigest
from focuscrawl.core.urls import canonical
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.meta import EXAMPLE
from focuscrawl.seam.records import is_html

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: the key of the classifier's state in ``spider.state`` (JOBDIR)
STATE_KEY = "focus_classifier"
#: a crawl page scoring under this share of FOCUS_RELEVANT_SCORE is a confident negative
NEGATIVE_SHARE = 0.25


class ExamplePages:
    """The example URLs still to learn from, the classifier, and their stats."""

    def __init__(self, crawler: Crawler, *, positives: list[str], negatives: list[str],
                 seeds: list[str], relevant_score: float, weight: float,
                 seeds_undecided: bool = False) -> None:
        self.crawler = crawler
        # scikit-learn's first import (scipy's) takes seconds, more on a loaded machine: taken
        # here, before the crawl starts, not in the first fit, where it stalled the event loop
        # past a distributed worker's heartbeat (its URLs were reaped and fetched twice)
        importlib.import_module("sklearn.linear_model")
        self.classifier = PageClassifier(positive_score=relevant_score,
                                         negative_score=relevant_score * NEGATIVE_SHARE)
        self.weight = weight
        self.given = bool(positives or negatives)  # the user gave example pages
        labelled = {url: True for url in positives}
        labelled.update((url, False) for url in negatives if url not in labelled)
        seeds_set = set(seeds)
        #: examples that are seeds: learnt from when the crawl fetches them (url -> positive)
        self.at_seeds = {u: y for u, y in labelled.items() if u in seeds_set}
        #: examples fetched before the crawl
        self.to_fetch = [(u, y) for u, y in labelled.items() if u not in seeds_set]
        # -a examples=auto: the seeds' pages, kept until the crawl order says whether they are
        # examples (signal seeds_judged); None once said, or when there is nothing to decide
        self.undecided: dict[str, Features | None] | None = None
        if seeds_undecided:
            self.undecided = {u: None for u in seeds_set - labelled.keys()}
            crawler.signals.connect(self.seeds_judged, signal=focus_signals.seeds_judged)

    # -- before the crawl -------------------------------------------------------------------
    def resume(self, state: dict[str, Any] | None) -> bool:
        """A resumed crawl's classifier (JOBDIR): whether there was one (then nothing is
        fetched again)."""
        saved = state.get(STATE_KEY) if state is not None else None
        if saved is None:
            return False
        self.classifier.restore(saved)
        self.to_fetch, self.at_seeds, self.undecided = [], {}, None
        return True

    def save(self, state: dict[str, Any] | None) -> None:
        if state is not None:
            state[STATE_KEY] = self.classifier.snapshot()

    async def fetch(self, digest_of: Callable[[Response], PageDigest | None]) -> None:
        """Fetch the examples that are not seeds, all at once (the politeness middleware
        spaces each server's), and learn from each page."""
        engine = self.crawler.engine
        assert engine is not None
        pending, self.to_fetch = self.to_fetch, []
        await asyncio.gather(*(self._fetch_one(engine, url, positive, digest_of)
                               for url, positive in pending))
        self.classifier.fit()

    async def _fetch_one(self, engine: Any, url: str, positive: bool,
                         digest_of: Callable[[Response], PageDigest | None]) -> None:
        stats = self.crawler.stats
        try:
            response = await engine.download_async(
                scrapy.Request(url, dont_filter=True, meta={EXAMPLE: True}))
        except Exception as e:  # any download error: the example is lost, not the crawl
            logger.warning("example page %s failed: %s", url, e)
            stats.inc_value("focus/examples/failed")
            return
        digest = digest_of(response) if 200 <= response.status < 300 and is_html(
            response) else None
        if digest is None:
            logger.warning("example page %s gave no page (status %d)", url, response.status)
            stats.inc_value("focus/examples/failed")
            return
        self.learn(digest, positive)

    def learn(self, digest: PageDigest, positive: bool) -> None:
        self.classifier.add_example(self.features(digest), positive)
        self.crawler.stats.inc_value("focus/examples/fetched")

    # -- during the crawl -------------------------------------------------------------------
    def features(self, digest: PageDigest) -> Features:
        return self.classifier.features(digest.terms)

    def page(self, response: Response, digest: PageDigest, score: float) -> float | None:
        """A crawled page: learn from it if it is an example (a seed), else grow from it by
        its keyword score; its probability of being on the topic (None: no model yet)."""
        classifier = self.classifier
        features = self.features(digest)
        if self.at_seeds or self.undecided:
            first = canonical(response.meta.get("redirect_urls", [response.url])[0])
            positive = self.at_seeds.pop(first, None)
            if positive is not None:
                self.learn(digest, positive)
                classifier.fit()
            if self.undecided and first in self.undecided:
                self.undecided[first] = features
        p = classifier.observe(features, score)
        stats = self.crawler.stats
        if classifier.judged and classifier.judged % 20 == 0:
            stats.set_value("focus/classifier/agreement", round(classifier.agreement or 0, 4))
            stats.set_value("focus/classifier/fits", classifier.fits)
        return p

    def seeds_judged(self, examples: bool) -> None:
        """The crawl order's verdict on seeds left undecided: if examples, the seeds' pages
        fetched so far are learnt as examples of the topic (those to come stay crawl pages)."""
        undecided, self.undecided = self.undecided, None
        if not examples or not undecided:
            return
        kept = [features for features in undecided.values() if features is not None]
        for features in kept:
            self.classifier.add_example(features, True)
        self.crawler.stats.inc_value("focus/examples/fetched", len(kept))
        self.given = self.given or bool(kept)
        if kept:
            self.classifier.fit()

    def label_digest(self, digest: PageDigest, probability: float | None) -> PageDigest:
        """The digest the learned order gets: with the user's examples it carries the
        probability and its weight in the page's label."""
        if not self.given or probability is None or self.weight <= 0:
            return digest
        return PageDigest(digest.terms, digest.rest, digest.hits, probability, self.weight)

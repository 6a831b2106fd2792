"""Scrapy 2.19's own scheduler tests, re-targeted at FocusScheduler.

Vendored from Scrapy 2.19.0's sdist, ``tests/test_scheduler_base.py`` and
``tests/test_scheduler.py``.  Copyright (c) Scrapy developers.  All rights reserved.  Used under
Scrapy's BSD 3-clause licence (redistribution with this copyright notice, the licence's
conditions and its disclaimer: see Scrapy's LICENSE file).

Each test runs twice: with only ``SCHEDULER`` set (no add-on, no focuscrawl middleware or
extension) and with the add-on.  Adapted as little as possible; what changed and why:

* the scheduler under test is ``FocusScheduler`` built from a crawler (``build_from_crawler``)
  where Scrapy's tests build ``SimpleScheduler()`` or ``Scheduler``; Scrapy's ``MockCrawler``
  (no extension manager, a ``Mock`` engine) is kept as it is;
* ``open``/``close`` return None (the ``BaseScheduler`` contract) where ``SimpleScheduler``
  returned "open"/"close": those two assertions are dropped;
* ``FOCUS_DELAY=0`` and ``FOCUS_CONCURRENCY_PER_SERVER=8``: a polite scheduler holds a server's
  next request back until the one handed out has ended (or its delay passed), and these tests
  dequeue every request of one host without downloading any;
* Scrapy's ``mockserver`` fixture is focuscrawl's loopback ``ServerProcess``, and Scrapy's
  ``coroutine_test``/``inline_callbacks_test`` decorators are ``pytest_twisted``'s, and
  ``test_crawl`` yields ``crawler.crawl()`` (under pytest-twisted's reactor, as the rest of
  focuscrawl's tests) where Scrapy awaits ``crawl_async()``;
* not vendored: ``test_dequeue_priorities`` (FocusScheduler orders by its crawl order, not by
  ``Request.priority``: that is what it is for), the on-disk variants (JOBDIR needs focuscrawl's
  page-completion spider middleware, which a hand-built scheduler has no spider to run; with
  only SCHEDULER set a JOBDIR crawl is refused with one line, see
  tests/integration/test_third_party.py),
  and the tests of Scrapy's own priority queues, dupefilter and downloader-aware queue.
"""

from __future__ import annotations

import logging
from typing import Any
from unittest.mock import Mock
from urllib.parse import urljoin

import pytest
import pytest_twisted
from scrapy.core.scheduler import BaseScheduler
from scrapy.crawler import Crawler
from scrapy.http import Request
from scrapy.spiders import Spider
from scrapy.utils.defer import ensure_awaitable
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.test import get_crawler

from focuscrawl.demo.webserver import Page, ServerProcess
from focuscrawl.seam.addon import FocusCrawl, focus_defaults
from focuscrawl.seam.scheduler import FocusScheduler

PATHS = ["/a", "/b", "/c"]
URLS = [urljoin("https://example.org", p) for p in PATHS]
_URLS = {"http://foo.com/a", "http://foo.com/b", "http://foo.com/c"}

#: only SCHEDULER, or the add-on (its settings, applied as Scrapy applies an add-on's)
ALONE = "alone"
ADDON = "addon"
POLITE_BUT_INSTANT = {"FOCUS_DELAY": 0, "FOCUS_CONCURRENCY_PER_SERVER": 8}


def focus_settings(how: str, **more: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {"SCHEDULER": FocusScheduler, **more}
    if how == ADDON:  # what the add-on sets (a MockCrawler applies no add-on itself)
        settings = {**focus_defaults(), **settings}
    return settings


@pytest.fixture(params=[ALONE, ADDON])
def how(request: pytest.FixtureRequest) -> str:
    return request.param


# -- tests/test_scheduler_base.py --------------------------------------------------------------
class PathsSpider(Spider):
    name = "paths"

    def __init__(self, mockserver, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [mockserver.url(path) for path in PATHS]

    def parse(self, response):
        return {"path": urlparse_cached(response).path}


class _MockServer:
    """Scrapy's ``mockserver.url(path)`` over focuscrawl's loopback server."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server

    def url(self, path: str) -> str:
        return self.server.base_url + path


@pytest.fixture(scope="module")
def mockserver():
    pages = {"127.0.0.1": {p: Page(f"<html><body>{p}</body></html>") for p in PATHS}}
    with ServerProcess(pages=pages) as srv:
        yield _MockServer(srv)


def test_scheduler_class(how):
    scheduler = build_from_crawler(FocusScheduler, get_crawler(Spider, focus_settings(how)))
    assert isinstance(scheduler, BaseScheduler)
    assert issubclass(scheduler.__class__, BaseScheduler)


@pytest_twisted.inlineCallbacks
def test_enqueue_dequeue(how):
    crawler = get_crawler(Spider, focus_settings(how, **POLITE_BUT_INSTANT))
    scheduler = build_from_crawler(FocusScheduler, crawler)
    spider = Spider("foo")
    spider.crawler = crawler
    yield scheduler.open(spider)
    assert not scheduler.has_pending_requests()

    for url in URLS:
        assert scheduler.enqueue_request(Request(url))
        assert not scheduler.enqueue_request(Request(url))

    assert scheduler.has_pending_requests()
    assert len(scheduler) == len(URLS)

    dequeued = []
    while scheduler.has_pending_requests():
        request = scheduler.next_request()
        dequeued.append(request.url)
    assert set(dequeued) == set(URLS)

    assert not scheduler.has_pending_requests()
    assert len(scheduler) == 0

    yield scheduler.close("")


@pytest_twisted.inlineCallbacks
def test_crawl(how, caplog: pytest.LogCaptureFixture, mockserver):
    settings: dict[str, Any] = {"SCHEDULER": FocusScheduler}
    if how == ADDON:
        settings["ADDONS"] = {FocusCrawl: 0}
    with caplog.at_level(logging.DEBUG):
        crawler = get_crawler(PathsSpider, settings)
        yield crawler.crawl(mockserver)
    for path in PATHS:
        assert f"{{'path': '{path}'}}" in caplog.text
    assert f"'item_scraped_count': {len(PATHS)}" in caplog.text


# -- tests/test_scheduler.py -------------------------------------------------------------------
class MockCrawler(Crawler):
    def __init__(self, how: str):
        settings = {
            "SCHEDULER_DEBUG": False,
            "DUPEFILTER_CLASS": "scrapy.dupefilters.BaseDupeFilter",
            **focus_settings(how, **POLITE_BUT_INSTANT),
        }
        super().__init__(Spider, settings)
        self.engine = Mock(downloader=Mock())
        self.stats = load_object(self.settings["STATS_CLASS"])(self)


async def create_scheduler(how: str) -> tuple[FocusScheduler, MockCrawler]:
    mock_crawler = MockCrawler(how)
    scheduler = build_from_crawler(FocusScheduler, mock_crawler)
    spider = Spider.from_crawler(mock_crawler, name="spider")
    await ensure_awaitable(scheduler.open(spider))
    return scheduler, mock_crawler


async def close_scheduler(scheduler: FocusScheduler, mock_crawler: MockCrawler) -> None:
    await ensure_awaitable(scheduler.close("finished"))
    await mock_crawler.stop_async()


@pytest_twisted.ensureDeferred
async def test_length(how) -> None:
    scheduler, crawler = await create_scheduler(how)
    try:
        assert not scheduler.has_pending_requests()
        assert len(scheduler) == 0

        for url in _URLS:
            scheduler.enqueue_request(Request(url))

        assert scheduler.has_pending_requests()
        assert len(scheduler) == len(_URLS)
    finally:
        await close_scheduler(scheduler, crawler)


@pytest_twisted.ensureDeferred
async def test_dequeue(how) -> None:
    scheduler, crawler = await create_scheduler(how)
    urls = set()
    try:
        for url in _URLS:
            scheduler.enqueue_request(Request(url))
        while scheduler.has_pending_requests():
            request = scheduler.next_request()
            assert request is not None
            urls.add(request.url)
    finally:
        await close_scheduler(scheduler, crawler)

    assert urls == _URLS

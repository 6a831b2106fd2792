"""FocusServices: the crawl's shared parts, owned by one extension and reached through
``crawler.get_extension``, never hung on the Crawler."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import CloseSpider
from scrapy.utils.test import get_crawler

from focuscrawl.seam import scheduler as scheduler_module
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.middlewares.filters import GateMiddleware, LinkFilterMiddleware
from focuscrawl.seam.middlewares.journal import PageCompletionMiddleware
from focuscrawl.seam.middlewares.politeness import PolitenessMiddleware
from focuscrawl.seam.middlewares.robots import RobotsTxtMiddleware
from focuscrawl.seam.scheduler import FocusScheduler
from focuscrawl.seam.services import FocusServices
from focuscrawl.seam.signals import START_ERROR_STAT
from tests.support.project import SCHEDULER_PARTS, SERVICES
from tests.support.project import open_scheduler as open_spider_scheduler

ROOT = Path(__file__).resolve().parents[2]


class _Spider(Spider):
    name = "services"


def open_scheduler(crawler) -> FocusScheduler:
    return open_spider_scheduler(crawler, _Spider)


def test_no_component_hangs_state_on_the_crawler():
    """The parts live in FocusServices: no ``crawler._focus_*`` attribute is set or read."""
    pattern = re.compile(r"crawler\)?\._focus_|crawler\b[^\n]*[\"']_focus_")
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("focuscrawl", "spiders", "settings")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_every_component_gets_the_same_parts_through_the_extension(tmp_path):
    crawler = get_crawler(_Spider, {**SCHEDULER_PARTS, "JOBDIR": str(tmp_path / "job"),
                                    "FOCUS_IRRELEVANT_DIRS": True, "FOCUS_STRATEGY": "best-first"})
    services = crawler.get_extension(FocusServices)
    assert services is not None and FocusServices.of(crawler) is services
    politeness = PolitenessMiddleware.from_crawler(crawler)
    robots = RobotsTxtMiddleware.from_crawler(crawler)
    journal = PageCompletionMiddleware.from_crawler(crawler)
    links = LinkFilterMiddleware.from_crawler(crawler)
    gate = GateMiddleware.from_crawler(crawler)
    sched = open_scheduler(crawler)
    assert sched.error is None
    try:
        assert politeness.policy is robots.robots.policy is sched.policy is services.policy
        assert journal.completion is sched.lifecycle is services.lifecycle
        assert links.services.robots is robots.robots  # registered by the robots.txt cache
        assert links.dirs is gate.dirs is services.directories is not None
        assert services.lifecycle.resumed is False  # a new JOBDIR
        # the one DirectoryStats is fed once per scored page
        crawler.signals.send_catch_log(focus_signals.page_scored,
                                       url="http://a.test/d/1.html", score=0.0, hot=False)
        assert sum(fetched for fetched, _ in services.directories.counts.values()) == 1
    finally:
        sched.close("finished")


def test_the_scheduler_tells_the_spider_which_links_its_order_ignores():
    crawler = get_crawler(_Spider, {**SCHEDULER_PARTS, "FOCUS_STRATEGY": "best-first"})
    known = FocusServices.of(crawler).known_urls
    assert not known.ignores("http://a.test/", 1.0)  # no scheduler yet: nothing is ignored
    assert not known.active
    sched = open_scheduler(crawler)
    try:
        assert known.ignores == sched.frontier.ignores and known.active
    finally:
        sched.close("finished")
    assert not known.ignores("http://a.test/", 1.0) and not known.active


def test_the_learned_order_counts_an_in_link_the_spider_drops():
    """A link to a URL queued, from a page no more relevant than its first parent: the answer
    the scheduler registers counts the in-link (as enqueue_request would have) and drops it;
    from a more relevant page the link is built (its evidence may be better)."""
    crawler = get_crawler(_Spider, {**SCHEDULER_PARTS, "FOCUS_STRATEGY": "learned",
                                    "FOCUS_KEYWORDS": "garden", "FOCUS_DELAY": 0})
    known = FocusServices.of(crawler).known_urls
    sched = open_scheduler(crawler)
    send = crawler.signals.send_catch_log
    try:
        frontier = sched.frontier
        assert known.active and frontier.counts_inlinks
        # labels: score / FOCUS_RELEVANT_SCORE (0.1), no digest
        for page, score in (("http://a.test/1", 0.05), ("http://a.test/2", 0.02),
                            ("http://a.test/3", 0.09)):
            send(focus_signals.page_scored, url=page, score=score, hot=False)
        target = "http://b.test/t"
        assert not known.ignores(target, 0.05, "http://a.test/1")  # not queued yet
        sched.enqueue_request(Request(target, meta={"focus": {
            "parent": "http://a.test/1", "parent_score": 0.05, "anchor": "garden"}}))
        slot = frontier.entries[target].extra
        duplicates = frontier.stats["duplicates"]
        assert known.ignores(target, 0.02, "http://a.test/2")  # counted, dropped
        assert frontier.valuation.scorer.store.inlinks[slot] == 2.0
        assert frontier.stats["duplicates"] == duplicates + 1
        assert not known.ignores(target, 0.09, "http://a.test/3")  # better: built
        assert not known.ignores(target, 0.02)  # no parent given: built
        assert frontier.valuation.scorer.store.inlinks[slot] == 2.0
    finally:
        sched.close("finished")


def test_a_learned_order_that_cannot_count_in_links_registers_its_plain_answer():
    """With FOCUS_MAX_BUFFER the learned order counts no in-link unbuilt: the spider is given
    the frontier's own ``ignores``, not a per-link answer that would always say no."""
    crawler = get_crawler(_Spider, {**SCHEDULER_PARTS, "FOCUS_STRATEGY": "learned",
                                    "FOCUS_KEYWORDS": "garden", "FOCUS_MAX_BUFFER": 50})
    known = FocusServices.of(crawler).known_urls
    sched = open_scheduler(crawler)
    try:
        assert not sched.frontier.counts_inlinks
        assert known.ignores == sched.frontier.ignores
    finally:
        sched.close("finished")


@pytest.mark.parametrize("strategy", ["cho-distance", "distiller"])
def test_an_order_that_keeps_every_link_registers_nothing(strategy):
    """The spider then asks nothing per link (the order's link graph needs every one)."""
    crawler = get_crawler(_Spider, {**SCHEDULER_PARTS, "FOCUS_STRATEGY": strategy})
    known = FocusServices.of(crawler).known_urls
    sched = open_scheduler(crawler)
    try:
        assert not sched.frontier.may_ignore() and not known.active
    finally:
        sched.close("finished")


def test_a_resumed_jobdir_is_told_through_the_extension(tmp_path):
    settings = {**SCHEDULER_PARTS, "JOBDIR": str(tmp_path / "job"), "FOCUS_STRATEGY": "best-first"}
    first = open_scheduler(get_crawler(_Spider, settings))
    first.close("shutdown")
    crawler = get_crawler(_Spider, settings)
    again = open_scheduler(crawler)
    try:
        assert again.lifecycle.resumed and FocusServices.of(crawler).lifecycle.resumed
    finally:
        again.close("shutdown")


def test_two_crawls_share_nothing():
    one, two = (get_crawler(settings_dict=SERVICES) for _ in range(2))
    assert FocusServices.of(one).policy is not FocusServices.of(two).policy


def test_without_the_extension_every_component_gets_the_same_parts():
    """A project without the extension (only SCHEDULER set, say): FocusServices.of makes the
    crawl's one instance, so the scheduler and any focuscrawl middleware still share their
    parts; another crawl gets its own; Scrapy's extension manager, if built later, adopts it."""
    crawler = get_crawler(settings_dict={})
    politeness = PolitenessMiddleware.from_crawler(crawler)
    services = FocusServices.of(crawler)
    assert politeness.policy is services.policy
    assert FocusServices.of(get_crawler(settings_dict={})) is not services
    assert FocusServices.from_crawler(crawler) is services


def test_the_scheduler_finds_its_parts_at_open_not_when_built():
    """Scrapy's own scheduler tests build the scheduler from a crawler that has no extension
    manager yet (Crawler.get_extension raises there)."""
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import MemoryStatsCollector

    crawler = Crawler(_Spider, {})
    crawler.stats = MemoryStatsCollector(crawler)  # as Scrapy's MockCrawler does
    sched = FocusScheduler.from_crawler(crawler)
    assert sched.services is None


def test_the_scheduler_alone_keeps_politeness_itself(caplog):
    crawler = get_crawler(_Spider, {"FOCUS_STRATEGY": "best-first"})
    sched = open_scheduler(crawler)
    assert sched.error is None and sched.standalone
    assert sched.services is FocusServices.of(crawler)
    with_middleware = open_scheduler(get_crawler(_Spider, {
        **SCHEDULER_PARTS, "FOCUS_STRATEGY": "best-first"}))
    assert not with_middleware.standalone


def test_a_jobdir_without_page_completion_refuses_to_start_with_one_line(caplog, tmp_path,
                                                                        monkeypatch):
    crawler = get_crawler(_Spider, {
        "DOWNLOADER_MIDDLEWARES": SCHEDULER_PARTS["DOWNLOADER_MIDDLEWARES"],
        "JOBDIR": str(tmp_path / "job")})
    sched = open_scheduler(crawler)
    assert sched.frontier is None
    assert sched.error == crawler.stats.get_value(START_ERROR_STAT)
    assert ("FocusScheduler with JOBDIR needs focuscrawl.seam.middlewares.journal."
            "PageCompletionMiddleware in SPIDER_MIDDLEWARES;" in sched.error)
    logged = [r.levelname for r in caplog.records if r.name == "focuscrawl.seam.scheduler"]
    assert logged == ["ERROR"]
    # at spider_opened the engine closes the spider with the reason (seam.engine; how depends
    # on the Scrapy release: tests/integration/test_third_party.py runs it in the matrix)
    refused: list[CloseSpider] = []
    monkeypatch.setattr(scheduler_module, "refuse_at_open", lambda _, r: refused.append(r))
    sched._spider_opened()
    assert [r.reason for r in refused] == ["missing_component"]
    sched.close("missing_component")  # closes cleanly, holding no part



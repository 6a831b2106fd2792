"""The Scrapy internals focuscrawl reads (focuscrawl.seam.engine), pinned against the installed
Scrapy: an upgrade that moves one fails here, instead of silently slowing every crawl down to
the engine's 5 s heartbeat."""

from __future__ import annotations

import re
from pathlib import Path

import pytest_twisted
from scrapy import signals

from focuscrawl.demo.webserver import Page, ServerProcess
from focuscrawl.seam import engine
from tests.support.project import crawl, project_settings

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"e.test": {"/": Page("<html><title>alpha</title><body>alpha <a href='/2'>2</a>"
                              "</body></html>"),
                    "/2": Page("<html><title>alpha two</title><body>alpha</body></html>")}}


@pytest_twisted.ensureDeferred
async def test_every_internal_is_there_while_a_crawl_runs(proxy_to, caplog):
    seen: list[list[str]] = []
    busy: list[bool] = []

    def on_response(response, request, spider):
        seen.append(engine.missing(spider.crawler))
        busy.append(engine.downloading(spider.crawler) or engine.in_progress(spider.crawler)
                    is not None)

    with ServerProcess(pages=PAGES) as srv:
        proxy_to(srv)
        from spiders.topic import TopicSpider

        class Probe(TopicSpider):
            @classmethod
            def from_crawler(cls, crawler, *args, **kwargs):
                spider = super().from_crawler(crawler, *args, **kwargs)
                crawler.signals.connect(on_response, signal=signals.response_received)
                return spider

        result = await crawl(project_settings(FOCUS_DELAY=0), spider=Probe, keywords="alpha",
                             seeds=srv.url("e.test", "/"))
    assert len(result.items) == 2
    assert seen and all(m == [] for m in seen), seen
    assert all(busy)
    # and at the scheduler's open, before the scraper's slot exists, nothing is reported missing
    assert not [r for r in caplog.records if r.name == "focuscrawl.seam.engine"], caplog.text


def test_no_other_module_reads_scrapy_internals():
    pattern = re.compile(r"\._slot\b|[\"']_slot[\"']|scraper\.slot|downloader\.active|"
                         r"\.inprogress\b|\.nextcall\b")
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("focuscrawl", "spiders", "settings")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.name != "engine.py"
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []

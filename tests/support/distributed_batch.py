"""A RedisFocusScheduler worker driven by hand: open it, fetch one request, run a page's
output through it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from scrapy import Request, Spider
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from focuscrawl.distributed import scripts
from focuscrawl.distributed.connection import RedisServices
from focuscrawl.distributed.pagemw import PageOutputMiddleware
from focuscrawl.distributed.scheduler import RedisFocusScheduler
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.meta import LINK
from tests.support.distributed import HOSTS


# --------------------------------------------------------------------------- the worker
class TopicSpider(Spider):
    name = "batch"


def script_calls(client: Any) -> int:
    """Script calls Redis ran (EVALSHA): each one a round trip of a worker."""
    return client.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)


def open_worker(redis_url: str, prefix: str, **settings: Any) -> RedisFocusScheduler:
    """A worker's scheduler and page-output middleware on a bare crawler (no engine)."""
    crawler = get_crawler(TopicSpider, {
        "EXTENSIONS": {RedisServices: 0}, "REDIS_URL": redis_url, "FOCUS_REDIS_KEY": prefix,
        "FOCUS_STRATEGY": "best-first", "FOCUS_MAX_PAGES": 0, "FOCUS_DELAY": 0,
        "FOCUS_ROBOTSTXT_OBEY": False, **settings})
    # no engine runs; the requests it holds are known, so a lease waits for the test to settle
    crawler.engine = SimpleNamespace(_slot=SimpleNamespace(inprogress=set(), nextcall=None,
                                                           closing=None))
    sched = RedisFocusScheduler.from_crawler(crawler)
    spider = TopicSpider()
    spider.crawler = crawler
    sched.open(spider)
    assert sched.error is None, sched.error
    client = sched.worker.client
    for name in ("ADD_MANY", "POP", "DOWNLOADED", "SETTLE", "STATUS"):  # no NOSCRIPT retries
        client.script_load(getattr(scripts, name))
    return sched


def fetch_one(sched: RedisFocusScheduler) -> Request:
    """Hand out the next URL and end its download (a 200)."""
    request = sched.next_request()
    assert request is not None
    sched.crawler.engine._slot.inprogress.add(request)
    sched.crawler.signals.send_catch_log(focus_signals.request_finished, request=request,
                                         status=200)
    return request


def page_output(request: Request, links: int) -> list[Any]:
    """What the spider yields for the page: its item and its outlinks, with link metadata."""
    out: list[Any] = [{"url": request.url}]
    out += [Request(f"http://{HOSTS[i % len(HOSTS)]}/{request.url[-1]}{i}.html",
                    meta={LINK: {"parent": request.url, "parent_score": 0.5, "anchor": "x"}})
            for i in range(links)]
    return out


def run_page(sched: RedisFocusScheduler, request: Request, links: int) -> list[Request]:
    """The spider's output through PageOutputMiddleware, as Scrapy runs it: the page's score
    first, the whole output taken from the callback before any request reaches the scheduler
    (Scrapy queues it); returns the requests, not yet enqueued."""
    mw = PageOutputMiddleware.from_crawler(sched.crawler)
    response = HtmlResponse(request.url, body=b"<html></html>", request=request)
    sched.crawler.signals.send_catch_log(focus_signals.page_scored, url=request.url,
                                         score=0.5, hot=False)
    return [o for o in mw.process_spider_output(response, iter(page_output(request, links)))
            if isinstance(o, Request)]

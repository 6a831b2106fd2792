"""Distributed mode, fewer round trips a page: what a worker knows, and calls that carry more.

* ``KnownLinks``: a link the worker drops because Redis would ignore it changes no crawl order
  (the Redis frontier driven with and without it hands out the same URLs as the reference);
* a download's end frees its server slot in its DOWNLOADED call; a settle rides in ADD_MANY,
  after the page's links, and only with the next call that writes (or the tick's).
"""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Request

from focuscrawl.core.frontier import Link
from focuscrawl.distributed.frontier import RedisFrontier, add_op, crawled_op, settle_op
from focuscrawl.distributed.hosts import SlotEnd
from focuscrawl.distributed.known import KnownLinks
from focuscrawl.seam.services import FocusServices
from tests.support.distributed import CASES, InRedis, Reference, random_web, virtual_crawl
from tests.support.distributed_batch import fetch_one, open_worker, run_page, script_calls
from tests.support.redis_server import redis_server_fixture  # noqa: F401 - the redis_server fixture


# --------------------------------------------------------------------------- KnownLinks alone
def test_known_links_follow_the_orders_rules():
    known = KnownLinks(100)
    assert known.configure({"strategy": "best-first", "max_buffer": "0"}) == known.ignores
    known.handed_out("http://a.test/1")
    known.linked("http://a.test/2", 0.5)
    assert known.ignores("http://a.test/1", 1.0)  # handed out: every link
    assert known.ignores("http://a.test/2", 0.5) and not known.ignores("http://a.test/2", 0.6)
    assert not known.ignores("http://a.test/3", 0.0)
    known.linked("http://a.test/2", 0.3)  # a lower score does not lower what is known
    assert known.ignores("http://a.test/2", 0.5)
    # breadth-first: a URL linked to once ignores every later link
    assert known.configure({"strategy": "breadth-first", "max_buffer": "0"}) is not None
    known.linked("http://a.test/2", 0.0)
    assert known.ignores("http://a.test/2", 1.0)
    # MAX_BUFFER: a queued URL may be evicted, only URLs handed out are known
    known.configure({"strategy": "best-first", "max_buffer": "10"})
    known.linked("http://a.test/2", 0.5)
    known.handed_out("http://a.test/1")
    assert not known.ignores("http://a.test/2", 0.0) and known.ignores("http://a.test/1", 1.0)
    # Cho's orders keep every link; 0 URLs: off
    assert known.configure({"strategy": "cho", "cho": "1"}) is None
    assert KnownLinks(0).configure({"strategy": "best-first"}) is None


def test_known_links_are_bounded():
    known = KnownLinks(4)  # two generations of two
    known.configure({"strategy": "best-first"})
    for i in range(3):
        known.handed_out(f"http://a.test/{i}")
    assert len(known) == 3 and known.ignores("http://a.test/1", 0.0)  # moved to the newer
    known.handed_out("http://a.test/3")  # the newer is full: the older goes
    assert len(known) <= 4 and not known.ignores("http://a.test/0", 0.0)
    assert known.ignores("http://a.test/3", 0.0)


class KnownInRedis(InRedis):
    """The Redis frontier behind a worker's KnownLinks: a link it knows Redis would ignore is
    dropped, as the spider drops it; a URL going back to the frontier makes the worker forget
    (the scheduler's rule when its leases were requeued)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.known = KnownLinks(1000)
        self.active = self.known.configure(self.f.config) is not None
        self.dropped = 0

    def add(self, link: Link) -> None:
        if link.parent is not None and self.active and self.known.ignores(
                link.url, link.parent_score):
            self.dropped += 1
            return
        super().add(link)
        self.known.linked(link.url, link.parent_score)

    def pop(self, busy: set[str]) -> tuple[Any, str] | None:
        got = super().pop(busy)
        if got is not None:
            self.known.handed_out(got[1])
        return got

    def done(self, lease: int, crawled: tuple[str, float, bool] | None) -> None:
        super().done(lease, crawled)
        if crawled is None:
            self.known.clear()


@pytest.mark.parametrize(("strategy", "options"), CASES,
                         ids=[f"{s}-{'-'.join(f'{k}{v}' for k, v in o.items())}" for s, o in CASES])
def test_dropping_known_links_keeps_the_crawl_order(redis_server, strategy, options):
    web = random_web(3)
    expected = virtual_crawl(Reference(strategy, **options), web, seed=3)
    f = KnownInRedis(redis_server.client(), f"known:{strategy}:{sorted(options.items())}:",
                     strategy, batched=True, **options)
    assert virtual_crawl(f, web, seed=3) == expected
    if not strategy.startswith("cho"):
        assert f.dropped > 0


# --------------------------------------------------------------------------- calls that carry more
def one_lease(client, prefix: str, strategy: str) -> tuple[RedisFrontier, int]:
    """A worker's frontier with http://a.test/1 queued and leased to it."""
    f = RedisFrontier(client, prefix, "w1")
    f.configure({"strategy": strategy, "delay": 0, "concurrency": 1})
    f.heartbeat(60)
    f.add(Link("http://a.test/1", host="a.test"))
    lease, _ = f.pop()
    return f, lease


def test_a_download_end_frees_its_slot_in_the_same_call(redis_server):
    client = redis_server.client()
    f, lease = one_lease(client, "slotend:", "breadth-first")
    assert client.hexists("slotend:hs:a.test", f"L{lease}")  # reserved by the hand-out
    # the worker's own script runs, not the server's EVALSHA count: a client retry after a
    # timeout on a loaded machine, or another client of this module's server, would add to that
    ran: list[str] = []
    run = f._run
    f._run = lambda script, *args: (ran.append(script), run(script, *args))[1]  # type: ignore[method-assign]
    assert f.downloaded(lease, True, SlotEnd("a.test", f"L{lease}", 0.01)) == 1
    assert ran == ["DOWNLOADED"] and client.hgetall("slotend:hs:a.test") == {}
    # told again (its reply lost): the same answer, the slot stays free, nothing counted twice
    assert f.downloaded(lease, True, SlotEnd("a.test", f"L{lease}", 0.01)) == 1
    assert f.status()["fetched"] == 1
    # a slow fetch marks the server slow, as HOST_FINISH does
    f.add(Link("http://a.test/2", host="a.test"))
    lease2, _ = f.pop()
    assert f.downloaded(lease2, False, SlotEnd("a.test", f"L{lease2}", 9.0)) == 0
    assert client.hget("slotend:h:a.test", "slow") == b"1"


def test_a_settle_rides_with_the_pages_links(redis_server):
    client = redis_server.client()
    f, lease = one_lease(client, "ride:", "best-first")
    f.downloaded(lease, True)
    ops = [crawled_op("http://a.test/1", 0.5, False),
           add_op(Link("http://b.test/1", host="b.test", parent="http://a.test/1",
                       parent_score=0.5)),
           settle_op("w1", lease), settle_op("w1", lease)]
    assert f.apply(ops) == [True, True, True, False]  # settled once
    st = f.status()
    assert (st["inflight"], st["entries"], st["pages"]) == (0, 1, 1)


def test_a_worker_knows_its_urls_and_settles_without_a_call_of_its_own(redis_server):
    sched = open_worker(redis_server.url, "knows:")
    client = sched.worker.client
    known = FocusServices.of(sched.crawler).known_urls
    assert known.active
    sched.enqueue_request(Request("http://a.test/s.html"))
    request = fetch_one(sched)
    assert known.ignores("http://a.test/s.html", 1.0)  # handed out to this worker
    outlinks = run_page(sched, request, 3)  # each from a page scored 0.5
    for r in outlinks:
        sched.enqueue_request(r)
    target = outlinks[0].url
    assert known.ignores(target, 0.5) and not known.ignores(target, 0.6)
    client.config_resetstat()
    lease = next(iter(sched._requests))
    sched.crawler.engine._slot.inprogress.clear()  # the engine is done with the page
    sched._sweep(idle=False)
    assert script_calls(client) == 0 and lease in sched._requests  # kept for the next write
    sched.enqueue_request(Request("http://c.test/late.html"))  # a seed: written with it
    assert sched.has_pending_requests()
    assert script_calls(client) == 2  # ADD_MANY (the link and the settle), STATUS
    assert lease not in sched._requests and sched.frontier.status()["inflight"] == 0
    sched.close("finished")
    assert not known.active  # the worker closed: nothing is ignored any more

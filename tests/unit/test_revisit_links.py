"""A continuous crawl's pages gone for want of a link, as the spider's side of the revisits
(focuscrawl.seam.revisit) exports and journals them, a resumed crawl included."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from scrapy.http import HtmlResponse, Request
from scrapy.settings import Settings

from focuscrawl.core.frontier import HostPolicy
from focuscrawl.core.orders import make_frontier
from focuscrawl.seam.meta import LINK
from focuscrawl.seam.persistence.ops import Op
from focuscrawl.seam.revisit import Revisits
from focuscrawl.seam.servers import ServerKeys

INDEX, A, Q = "http://a.test/index.html", "http://a.test/a.html", "http://a.test/q.html"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def revisits(clock: Clock, journal: list[tuple[Any, ...]]) -> Revisits:
    lifecycle = SimpleNamespace(budget=lambda: 10)
    found, _ = Revisits.local(make_frontier("best-first"), lifecycle=lifecycle,
                              settings=Settings(), policy=HostPolicy(), servers=ServerKeys(),
                              record=lambda *op: journal.append(op), clock=clock)
    return found


def fetch(r: Revisits, url: str, *targets: str, parent: str | None = INDEX):
    """A fetch of ``url`` (a revisit once kept) whose page links to ``targets``."""
    meta: dict[str, Any] = {LINK: {"parent": parent}}
    if r.frontier.schedule.get(url) is not None:
        meta = r.request_of(r.frontier.schedule.get(url))["meta"]
    body = "".join(f'<a href="{t}">link</a>' for t in targets)
    response = HtmlResponse(url, body=f"<html><body><main>{body}</main></body></html>",
                            encoding="utf-8", request=Request(url, meta=meta))
    return r.kept(response, url, "the same text", 0.5,
                  [SimpleNamespace(url=t) for t in targets])


def test_a_page_its_last_linker_dropped_is_exported_gone_once_and_journaled_first():
    clock, journal = Clock(), []
    r = revisits(clock, journal)
    fetch(r, INDEX, A, Q, parent=None)  # the seed
    fetch(r, A, Q)
    fetch(r, Q)
    assert [k.gone for k in (fetch(r, INDEX, A),)] == [[]]  # a still links to it
    journal.clear()
    clock.now += 10
    kept = fetch(r, A)  # the last link to q goes
    assert kept.fields is None  # a's own content did not change: no line of its own
    (line,) = kept.gone
    assert line["url"] == Q and line["gone"] and line["status"] == 200
    assert [state["url"] for _, state in journal] == [Q, A]  # q's state before a's
    assert all(op is Op.REVISIT for op, _ in journal)
    assert fetch(r, A).gone == []  # said once
    fetch(r, A, INDEX)
    assert fetch(r, A).gone == [] and not r.frontier.schedule.get(INDEX).gone  # a seed: never


def test_a_resumed_crawl_says_the_gone_lines_of_a_fetch_it_put_back():
    clock, journal = Clock(), []
    r = revisits(clock, journal)
    fetch(r, INDEX, A, parent=None)
    fetch(r, A, Q)
    fetch(r, Q)
    clock.now += 10
    entry = r.frontier.pop()  # a revisit handed out ...
    while entry is not None and entry.url != A:
        r.frontier.requeue(entry)
        entry = r.frontier.pop()
    assert entry is not None
    (line,) = fetch(r, A).gone
    # ... killed after its journal, maybe before the line: the resumed crawl replays the
    # journal and puts the fetch back
    again = revisits(clock, [])
    for _, state in journal:
        again.frontier.replay(state)
    again.frontier.requeue(entry)
    assert again.frontier.schedule.get(Q).gone
    assert fetch(again, A).gone == [line]  # the feed skips it if it was written
    assert fetch(again, A).gone == []

"""A crawl order's frontier and the revisit schedule as one frontier
(focuscrawl.core.refresh.frontier), on a simulated clock."""

from __future__ import annotations

import pytest

from focuscrawl.core.frontier import Link
from focuscrawl.core.orders import make_frontier
from focuscrawl.core.refresh import RateEstimator, RevisitSchedule, Split
from focuscrawl.core.refresh.frontier import REVISIT, RevisitFrontier, crawl_order
from focuscrawl.core.refresh.signature import content_signature


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def make(clock: Clock, *, share: float | None = None, discovering=lambda: True,
         policy: str = "uniform") -> RevisitFrontier:
    return RevisitFrontier(
        make_frontier("best-first"), RevisitSchedule(policy, RateEstimator(prior_rate=0.01)),
        Split(share), clock=clock, request_of=lambda page: {"url": page.url, "v": page.version},
        capacity=lambda hosts: dict.fromkeys(hosts, 1.0), discovering=discovering,
        calibrate_every=5.0)


def link(url: str, score: float = 0.5) -> Link:
    return Link(url, host=url.split("/")[2], parent_score=score)


def test_a_revisit_is_a_second_kind_of_entry_with_its_request():
    clock = Clock()
    f = make(clock, discovering=lambda: False)
    f.kept("http://a.test/p", 1.0, "s1")
    clock.now += 60
    entry = f.pop()
    assert entry.url == "http://a.test/p" and entry.extra == REVISIT
    assert entry.payload == {"url": "http://a.test/p", "v": 1}
    assert f.pop() is None  # leased: not handed out twice
    assert f.revisited("http://a.test/p", signature="s2") == "changed"
    assert f.schedule.get("http://a.test/p").version == 2


def test_revisits_keep_to_the_servers_politeness_allows():
    clock = Clock()
    f = make(clock, discovering=lambda: False)
    f.kept("http://a.test/p", 1.0, "s")
    f.kept("http://b.test/p", 1.0, "s")
    clock.now += 60
    entry = f.pop(ready=lambda host: host == "b.test")
    assert entry.url == "http://b.test/p"
    assert f.pop(ready=lambda host: host == "b.test") is None


def test_discovery_first_while_new_pages_are_worth_more():
    clock = Clock()
    f = make(clock)
    for i in range(5):
        f.add(link(f"http://a.test/new{i}"))
    f.kept("http://b.test/old", 0.05, "s")  # an off-topic kept page: worth little
    clock.now += 3600
    assert f.pop().url.startswith("http://a.test/new")
    f.harvest = 0.01  # the crawl finds nothing relevant any more
    assert f.pop().extra == REVISIT
    assert len(f) == 4  # the new pages still queued


def test_a_fixed_share_splits_the_fetches():
    clock = Clock()
    f = make(clock, share=0.5)
    for i in range(40):
        f.add(link(f"http://a.test/new{i}"))
    for i in range(20):
        f.kept(f"http://b.test/old{i}", 1.0, "s")
    clock.now += 3600
    kinds = []
    for _ in range(20):
        entry = f.pop()
        kinds.append(entry.extra == REVISIT)
        if entry.extra == REVISIT:
            f.revisited(entry.url, changed=False)
    assert sum(kinds) == 10


def test_a_page_put_back_is_due_at_once_and_a_replayed_take_is_a_revisit():
    clock = Clock()
    f = make(clock, discovering=lambda: False)
    f.kept("http://a.test/p", 1.0, "s")
    clock.now += 60
    entry = f.pop()
    f.requeue(entry)  # a kill with it in flight
    assert f.schedule.get("http://a.test/p").due == clock.now
    again = f.take("http://a.test/p")
    assert again.extra == REVISIT and f.schedule.get("http://a.test/p").leased
    f.failed("http://a.test/p")  # its 304 is reported on its own: nothing for the order
    assert f.schedule.get("http://a.test/p").leased


def test_a_revisit_without_an_outcome_is_due_again_after_the_timeout():
    clock = Clock()
    f = make(clock, discovering=lambda: False)
    f.lease_timeout = 100.0
    f.kept("http://a.test/p", 1.0, "s")
    clock.now += 60
    assert f.pop() is not None
    clock.now += 50
    assert f.pop() is None
    clock.now += 200
    assert f.pop().url == "http://a.test/p"


def test_the_state_round_trips_with_versions_and_rates():
    clock = Clock()
    f = make(clock, discovering=lambda: False, policy="optimal")
    f.add(link("http://a.test/new"))
    f.kept("http://a.test/p", 0.8, content_signature("one"), etag='"e"')
    for i in range(6):
        clock.now += 100
        f.take("http://a.test/p")
        f.revisited("http://a.test/p", signature=content_signature(f"v{i // 2}"))
    g = make(clock, discovering=lambda: False, policy="optimal")
    g.restore(f.snapshot())
    old, new = f.schedule.get("http://a.test/p"), g.schedule.get("http://a.test/p")
    assert new.to_dict() == old.to_dict()
    assert new.rate == pytest.approx(old.rate)
    assert len(g) == 1 and g.describe()["revisit/changed"] == f.describe()["revisit/changed"]
    # a journal's replay of a page's state puts it in place of the old one
    g.replay({**old.to_dict(), "version": 9})
    assert g.schedule.get("http://a.test/p").version == 9
    assert g.schedule.estimator.crawl.visits == old.stats.visits


def test_the_schedulers_settings_reach_the_inner_frontier():
    clock = Clock()
    f = make(clock)
    f.adaptive_slack = "marker"
    assert f.inner.adaptive_slack == "marker"
    f.same_across_schemes = True
    assert f.inner.same_across_schemes is True
    assert f.name == f.inner.name
    assert crawl_order(f) is f.inner and crawl_order(f.inner) is f.inner


def test_a_new_page_is_explained_by_its_order_a_revisit_by_nothing():
    clock = Clock()
    f = make(clock)
    f.add(link("http://a.test/new", 0.8))
    new = f.pop()
    assert new.extra != REVISIT and f.explain(new) == f.inner.explain(new)
    f.kept("http://b.test/old", 1.0, "s")
    clock.now += 3600
    f.harvest = 0.0
    revisit = f.pop()
    assert revisit.extra == REVISIT and f.explain(revisit) is None


def test_a_signature_ignores_times_and_counters_not_content():
    base = content_signature("Advisory: versions before 2.3.1 are affected. 1,204 views")
    assert content_signature("Advisory:  versions before 2.3.1 are affected.  1,305 views") == base
    assert content_signature("Advisory: versions before 2.3.2 are affected. 1,204 views") != base
    assert content_signature("Posted 5 minutes ago at 14:05") == content_signature(
        "Posted 7 minutes ago at 09:55")

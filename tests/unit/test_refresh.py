"""Keeping a crawl fresh (focuscrawl.core.refresh): the estimator, the policies, the split and the
schedule, on a simulated clock."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from focuscrawl.core.refresh import (
    ChangeStats,
    RateEstimator,
    RevisitSchedule,
    Split,
    allocate,
    freshness,
    rate_regular,
)
from focuscrawl.core.refresh.estimate import map_rate
from focuscrawl.core.refresh.freshness import fresh_time, weighted_freshness
from focuscrawl.core.refresh.inlinks import link_keys
from focuscrawl.core.refresh.policy import frequencies, frequency
from focuscrawl.core.refresh.schedule import CHANGED, UNCHANGED, PageState
from focuscrawl.core.refresh.simulate import simulate
from focuscrawl.core.refresh.split import DISCOVER, REVISIT


def poisson_times(rng: random.Random, rate: float, until: float) -> list[float]:
    out, t = [], 0.0
    while rate > 0:
        t += rng.expovariate(rate)
        if t > until:
            return out
        out.append(t)
    return out


def observe(stats: ChangeStats, changes: list[float], visits: list[float]) -> None:
    """Feed ``stats`` what a crawler visiting at ``visits`` sees of a page changing at
    ``changes``: only whether something changed in each interval."""
    i = 0
    for a, b in zip(visits, visits[1:], strict=False):
        while i < len(changes) and changes[i] <= a:
            i += 1
        stats.add(b - a, i < len(changes) and changes[i] <= b)


# -- the estimator ----------------------------------------------------------------------------
def test_the_regular_estimator_is_the_papers_formula():
    assert rate_regular(10, 0, 5.0) == pytest.approx(-math.log(10.5 / 10.5) / 5.0)
    assert rate_regular(10, 4, 5.0) == pytest.approx(-math.log(6.5 / 10.5) / 5.0)
    assert rate_regular(10, 10, 5.0) == pytest.approx(math.log(21) / 5.0)  # finite
    with pytest.raises(ValueError):
        rate_regular(3, 4, 1.0)


def test_at_regular_intervals_the_irregular_mle_is_the_regular_mle():
    stats = ChangeStats()
    for i in range(30):
        stats.add(60.0, i % 3 == 0)
    assert map_rate(stats) == pytest.approx(math.log(30 / 20) / 60.0, rel=1e-6)


def test_the_estimator_sees_through_changes_it_cannot_count():
    """A page changing about twice an interval: counting the visits that found a change
    underestimates its rate by more than half; the estimator does not."""
    rng = random.Random(7)
    rate, until = 1 / 50.0, 200_000.0
    changes = poisson_times(rng, rate, until)
    visits, t = [0.0], 0.0
    while t < until:
        t += rng.uniform(50, 150)  # irregular, as a crawl's are
        visits.append(t)
    stats = ChangeStats()
    observe(stats, changes, visits)
    naive = stats.changes / (visits[-1] - visits[0])
    assert naive < 0.5 * rate
    assert map_rate(stats) == pytest.approx(rate, rel=0.12)
    assert map_rate(stats, 2.0, 1.0 / rate) == pytest.approx(rate, rel=0.12)


def test_every_visit_changed_is_infinite_for_the_mle_and_finite_with_a_prior():
    stats = ChangeStats()
    for _ in range(5):
        stats.add(10.0, True)
    assert map_rate(stats) >= 1e8
    assert 0.1 < map_rate(stats, 2.0, 10.0) < 10.0
    assert map_rate(ChangeStats()) == 0.0
    assert map_rate(ChangeStats(), 2.0, 100.0) == pytest.approx(0.01)


def test_stats_pool_and_round_trip():
    a, b = ChangeStats(), ChangeStats()
    a.add(3.0, True)
    a.add(5.0, False)
    b.add(100.0, True)
    pooled = a.copy()
    pooled.merge(b)
    assert pooled.visits == 3 and pooled.changes == 2
    assert pooled.minus(b) == a
    assert ChangeStats.from_list(pooled.to_list()) == pooled


def test_a_new_page_starts_from_its_directory_and_server():
    est = RateEstimator(prior_rate=1 / 1000.0)
    for _ in range(40):  # a news directory that changes at every visit, a manual that never does
        est.observe("site.test", "http://site.test/news/", 60.0, True)
        est.observe("site.test", "http://site.test/manual/", 60.0, False)
    news = est.rate("site.test", "http://site.test/news/", ChangeStats())
    manual = est.rate("site.test", "http://site.test/manual/", ChangeStats())
    elsewhere = est.rate("other.test", "http://other.test/", ChangeStats())
    assert news > 10 * manual
    assert news > 1 / 60.0  # faster than one change a visit's interval
    assert manual < 1 / 2400.0
    assert elsewhere == pytest.approx(est.crawl_rate())


def test_a_page_alone_in_its_directory_is_not_its_own_prior():
    est = RateEstimator(prior_rate=1 / 1000.0)
    own = ChangeStats()
    for _ in range(3):
        own.add(10.0, True)
        est.observe("a.test", "http://a.test/x/", 10.0, True)
    assert est.prior("a.test", "http://a.test/x/", own) == pytest.approx(
        est.host_rate("a.test"))


# -- the policies -----------------------------------------------------------------------------
def test_freshness_of_a_page():
    assert freshness(0.0, 1.0) == 1.0            # never changes
    assert freshness(1.0, 0.0) == 0.0            # changes, never visited
    assert freshness(1.0, 1.0) == pytest.approx(1 - math.exp(-1))
    assert freshness(1e-9, 1.0) == pytest.approx(1.0)


def test_the_optimal_allocation_meets_the_budget_and_the_lagrange_condition():
    rates = np.array([0.001, 0.01, 0.1, 1.0, 10.0])
    weights = np.array([1.0, 1.0, 1.0, 1.0, 1.0])
    a = allocate("optimal", rates, weights, budget=0.5)
    assert a.freqs.sum() == pytest.approx(0.5, rel=1e-6)
    on = a.freqs > 0
    x = rates[on] / a.freqs[on]
    assert (weights[on] / rates[on]) * (1 - (1 + x) * np.exp(-x)) == pytest.approx(a.mu)
    # a page changing too fast for the budget gets less than a slower one, or nothing
    assert a.freqs[4] < a.freqs[2]
    assert a.freqs[4] == 0.0 and weights[4] / rates[4] <= a.mu
    for policy in ("uniform", "proportional"):
        other = allocate(policy, rates, weights, budget=0.5)
        assert other.freqs.sum() == pytest.approx(0.5, rel=1e-6)
        assert other.expected < a.expected


def test_relevance_weighs_the_allocation():
    rates = np.array([0.1, 0.1])
    a = allocate("optimal", rates, np.array([1.0, 0.2]), budget=0.1)
    assert a.freqs[0] > a.freqs[1]
    assert a.frequency(0.1, 1.0) == pytest.approx(a.freqs[0])


def test_uniform_and_proportional_are_what_they_say():
    rates = np.array([0.1, 0.2, 0.7])
    u = allocate("uniform", rates, np.ones(3), budget=3.0)
    assert u.freqs == pytest.approx([1.0, 1.0, 1.0])
    p = allocate("proportional", rates, np.ones(3), budget=3.0)
    assert p.freqs == pytest.approx([0.3, 0.6, 2.1])


@pytest.mark.parametrize("policy", ["optimal", "uniform", "proportional"])
def test_a_servers_cap_binds_and_the_rest_goes_elsewhere(policy):
    rates = np.array([0.05, 0.05, 0.05, 0.05])
    groups = ["a", "a", "a", "b"]
    a = allocate(policy, rates, np.ones(4), budget=1.0, groups=groups, caps={"a": 0.3})
    assert a.freqs[:3].sum() == pytest.approx(0.3, rel=1e-5)
    assert a.freqs.sum() == pytest.approx(1.0, rel=1e-5)
    assert a.frequency(0.05, 1.0, "a") == pytest.approx(a.freqs[0], rel=1e-6)
    # caps below the budget: every server at its cap
    b = allocate(policy, rates, np.ones(4), budget=5.0, groups=groups, caps={"a": 0.3, "b": 0.2})
    assert b.freqs.sum() == pytest.approx(0.5, rel=1e-5)


def test_one_page_frequency_matches_the_vector():
    rates, weights = np.array([1e-6, 3e-4, 0.02, 5.0]), np.array([0.3, 1.0, 0.8, 1.0])
    for policy in ("optimal", "uniform", "proportional"):
        f = frequencies(policy, rates, weights, 2.5)
        for i in range(4):
            assert frequency(policy, rates[i], weights[i], 2.5) == pytest.approx(f[i], rel=1e-6)


# -- the split --------------------------------------------------------------------------------
def test_the_adaptive_split_takes_the_more_valuable_fetch():
    split = Split()
    assert split.choose(0.3, 0.5) == REVISIT
    assert split.choose(0.3, 0.1) == DISCOVER
    assert split.choose(None, 0.01) == REVISIT
    assert split.choose(0.01, None) == DISCOVER
    assert split.choose(None, None) is None


def test_a_fixed_split_keeps_its_share():
    split = Split(share=0.25)
    for _ in range(1000):
        split.record(split.choose(1.0, 0.0))
    assert split.revisit_share == pytest.approx(0.25, abs=0.002)
    with pytest.raises(ValueError):
        Split(share=1.5)


# -- the schedule -----------------------------------------------------------------------------
def make_schedule(policy: str = "optimal") -> RevisitSchedule:
    return RevisitSchedule(policy, RateEstimator(prior_rate=0.01))


def test_pages_fall_due_in_order_and_busy_servers_are_skipped():
    s = make_schedule("uniform")
    for i, url in enumerate(["http://a.test/1", "http://a.test/2", "http://b.test/1"]):
        s.add(url, float(i), 1.0)
    s.calibrate(budget=0.3)  # each page every 10 s
    assert s.next_due() == pytest.approx(10.0)
    assert s.peek(9.0) is None
    assert s.peek(10.5).url == "http://a.test/1"
    got = s.pop(12.5, ready=lambda host: host != "a.test")
    assert got.url == "http://b.test/1"
    assert s.pop(12.5, ready=lambda host: host != "a.test") is None  # leased: not twice
    first = s.pop(12.5)
    assert first.url == "http://a.test/1"
    assert s.pop(12.5).url == "http://a.test/2"
    assert s.pop(100.0) is None
    assert s.visited("http://a.test/1", 13.0, changed=False) == UNCHANGED
    assert s.get("http://a.test/1").due == pytest.approx(23.0)


def test_a_changed_signature_is_a_new_version_and_a_304_is_not():
    s = make_schedule()
    s.add("http://a.test/p", 0.0, 1.0, "sig1", etag='"e1"')
    assert s.visited("http://a.test/p", 5.0, changed=False) == UNCHANGED
    assert s.visited("http://a.test/p", 9.0, signature="sig1", etag='"e2"') == UNCHANGED
    page = s.get("http://a.test/p")
    assert (page.version, page.last_changed, page.etag) == (1, 0.0, '"e2"')
    assert s.visited("http://a.test/p", 12.0, signature="sig2") == CHANGED
    assert (page.version, page.last_changed, page.first_seen) == (2, 12.0, 0.0)
    assert page.stats.visits == 3 and page.stats.changes == 1


def test_a_gone_page_is_reported_once_and_never_handed_out():
    s = make_schedule("uniform")
    s.add("http://a.test/p", 0.0, 1.0)
    s.calibrate(budget=1.0)
    assert s.mark_gone("http://a.test/p", 3.0) is True
    assert s.mark_gone("http://a.test/p", 4.0) is False
    assert s.pop(100.0) is None
    back = s.add("http://a.test/p", 50.0, 1.0, "new")
    assert back.version == 2 and back.first_seen == 0.0


def test_a_page_state_round_trips():
    s = make_schedule()
    s.add("http://a.test/p", 0.0, 0.7, "sig", etag='"x"', last_modified="Mon, 01 Jan 2024")
    s.visited("http://a.test/p", 30.0, signature="sig2")
    page = s.get("http://a.test/p")
    again = PageState.from_dict(page.to_dict())
    assert again.to_dict() == page.to_dict()


def test_revisit_value_and_estimated_freshness():
    s = make_schedule()
    page = s.add("http://a.test/p", 0.0, 0.5)
    page.rate = 0.1
    assert s.value(page, 0.0) == 0.0
    assert s.value(page, 10.0) == pytest.approx(0.5 * (1 - math.exp(-1)))
    assert s.estimated_freshness(10.0) == pytest.approx(math.exp(-1))


# -- freshness on a simulated clock ------------------------------------------------------------
def test_fresh_time_is_exact():
    # fetched at 0 and 10; changes at 4 and 12 and 30: fresh [0, 4) and [10, 12)
    assert fresh_time([0.0, 10.0], [4.0, 12.0, 30.0], 0.0, 20.0) == pytest.approx(6.0)
    assert fresh_time([], [1.0], 0.0, 5.0) == 0.0
    assert fresh_time([2.0], [], 0.0, 5.0) == pytest.approx(3.0)
    assert weighted_freshness({"a": [0.0], "b": [0.0]}, {"a": [1.0]}, {"a": 1.0, "b": 3.0},
                              0.0, 2.0) == pytest.approx((0.5 + 3.0) / 4.0)


def synthetic_web(seed: int, pages: int, duration: float):
    rng = random.Random(seed)
    rates, weights, changes = {}, {}, {}
    for i in range(pages):
        url = f"http://h{i % 4}.test/d{i % 5}/p{i}.html"
        rates[url] = 0.0 if rng.random() < 0.25 else 10 ** rng.uniform(-6.5, -3.5)
        weights[url] = rng.random() ** 2
        changes[url] = poisson_times(rng, rates[url], duration)
    return rates, weights, changes


def test_on_a_simulated_web_the_policy_nears_the_oracle_and_beats_uniform():
    duration = 6 * 86400.0
    rates, weights, changes = synthetic_web(3, 120, duration)
    budget = 120 / 86400 * 3  # each page three times a day on average
    kw = {"budget": budget, "duration": duration, "delay": 5.0}
    oracle = simulate(RevisitSchedule("optimal", rate_of=lambda p: rates[p.url]), changes,
                      weights, **kw)
    ours = simulate(RevisitSchedule("optimal", RateEstimator(1 / 86400)), changes, weights, **kw)
    uniform = simulate(RevisitSchedule("uniform"), changes, weights, **kw)
    assert ours.freshness >= 0.9 * oracle.freshness
    assert ours.freshness > uniform.freshness
    assert ours.unchanged < uniform.unchanged
    assert abs(ours.fetches - uniform.fetches) < 0.1 * uniform.fetches  # the same budget


def test_a_sitemap_hint_makes_a_changed_page_due_at_once_and_no_other():
    s = make_schedule("uniform")
    s.add("http://a.test/p", 0.0, 0.5)
    s.add("http://a.test/q", 0.0, 0.5)
    s.calibrate(budget=0.01)  # each page every 200 s
    assert s.hint("http://a.test/p", changed_at=-5.0, now=10.0) is False  # before the visit
    assert s.hint("http://a.test/p", changed_at=7.0, now=10.0) is True
    assert s.hint("http://a.test/p", changed_at=8.0, now=10.0) is False  # already hinted
    assert s.hint("http://a.test/unknown", changed_at=7.0, now=10.0) is False
    page = s.get("http://a.test/p")
    assert s.value(page, 10.0) == 0.5  # it did change: worth its whole weight
    s.calibrate(budget=0.01)  # a new allocation keeps it due
    assert s.pop(10.0).url == "http://a.test/p"
    assert s.pop(10.0) is None  # the other page is not due
    s.visited("http://a.test/p", 11.0, changed=True)
    assert not page.hinted and page.due > 11.0


def links(source: str, *targets: str) -> tuple[int, ...]:
    return link_keys(targets, source)


def test_a_page_every_linker_stopped_linking_to_is_gone_once():
    s = make_schedule("uniform")
    a, b, q, seed = (f"http://a.test/{p}" for p in ("a", "b", "q", "index"))
    s.add(seed, 0.0, 1.0, seed=True)
    for url in (a, b, q):
        s.add(url, 0.0, 1.0)
    s.calibrate(budget=1.0)
    assert s.linked(seed, links(seed, a, b, seed), 1.0) == ([], [])  # its own link: no count
    assert s.linked(a, links(a, q, seed), 1.0) == ([], [])
    assert s.linked(b, links(b, q), 1.0) == ([], [])
    assert s.inlinks.count(q) == 2
    assert s.linked(a, links(a, seed), 2.0) == ([], [])  # b still links to it
    orphans, back = s.linked(b, (), 3.0)
    assert [p.url for p in orphans] == [q] and back == []
    page = s.get(q)
    assert page.gone and page.orphaned_by == b and s.counts["gone"] == 1
    assert s.orphans_of(b) == [page] and s.pop(100.0, lambda h: True).url != q
    assert s.linked(b, (), 4.0) == ([], [])  # said once
    # a page the crawl started from is never found gone so
    assert s.linked(a, (), 5.0) == ([], []) and not s.get(seed).gone


def test_a_page_linked_to_again_comes_back_and_a_gone_linker_still_counts():
    s = make_schedule("uniform")
    a, b, q = (f"http://a.test/{p}" for p in ("a", "b", "q"))
    for url in (a, b, q):
        s.add(url, 0.0, 1.0)
    s.calibrate(budget=1.0)
    s.linked(a, links(a, q), 1.0)
    s.linked(b, links(b, q), 1.0)
    assert s.mark_gone(b, 2.0)  # b answered 410: its link is not taken back
    assert s.linked(a, (), 3.0) == ([], []) and not s.get(q).gone
    s2 = make_schedule("uniform")
    for url in (a, q):
        s2.add(url, 0.0, 1.0)
    s2.calibrate(budget=1.0)
    s2.linked(a, links(a, q), 1.0)
    (orphan,), _ = s2.linked(a, (), 2.0)
    _, (back,) = s2.linked(a, links(a, q), 3.0)
    assert back is orphan and not back.gone and back.back and back.owed
    assert back.due == 3.0  # due at once: fetched again
    assert s2.counts["gone"] == 0


def test_the_in_links_survive_a_saved_state():
    s = make_schedule("uniform")
    a, q = "http://a.test/a", "http://a.test/q"
    for url in (a, q):
        s.add(url, 0.0, 1.0)
    s.linked(a, links(a, q), 1.0)
    again = make_schedule("uniform")
    for page in s.pages.values():
        again.put(page.to_dict())
    again.put(s.get(a).to_dict())  # a page's state replayed twice counts once
    assert again.inlinks.count(q) == 1
    (orphan,), _ = again.linked(a, (), 2.0)
    assert orphan.url == q
    assert PageState.from_dict(orphan.to_dict()).orphaned_by == a

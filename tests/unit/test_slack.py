"""The adaptive slack (focuscrawl.core.frontier.slack): a fake clock, real decisions."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from focuscrawl.core.frontier import Link
from focuscrawl.core.frontier.slack import MIN_SLACK, AdaptiveSlack
from focuscrawl.core.orders import make_frontier
from tests.support.project import SCHEDULER_PARTS


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def crawl(slack: AdaptiveSlack, clock: Clock, rounds: int, *, wait: float, side_hot: bool,
          ratio: float = 0.3) -> int:
    """Each round: a best page (relevant half the time) after 0.2 s; then an idle server's page
    worth ``ratio`` of the best is offered: taken at once, or refused and the crawl waits
    ``wait`` seconds for the best server.  Returns the idle servers' pages taken."""
    taken = 0
    for i in range(rounds):
        clock.now += 0.2
        slack.handed_out(f"http://best.test/{i}", 1.0)
        slack.labelled(f"http://best.test/{i}", i % 2 == 0)
        if slack.accepts(ratio):
            clock.now += 0.2
            slack.handed_out(f"http://idle.test/{i}", ratio)
            slack.labelled(f"http://idle.test/{i}", side_hot)
            taken += 1
        else:
            clock.now += wait
    return taken


def test_long_waits_and_relevant_side_pages_widen_the_slack():
    clock = Clock()
    slack = AdaptiveSlack(0.5, clock=clock)
    crawl(slack, clock, 200, wait=2.0, side_hot=True)
    assert slack.value == 1.0  # taking the idle servers' pages pays: the crawl never waits
    assert slack.describe()["/side_rate"] > 0.9


def test_side_pages_that_stop_paying_narrow_it_again():
    # the crawl's early side pages were relevant; once its idle servers' pages stop being,
    # recent labels outweigh the early ones and the crawl waits for its best servers again
    clock = Clock()
    slack = AdaptiveSlack(0.5, clock=clock)
    taken = crawl(slack, clock, 200, wait=2.0, side_hot=True)
    assert slack.value == 1.0
    values = []
    for _ in range(15):
        taken += crawl(slack, clock, 10, wait=2.0, side_hot=False)
        values.append(slack.value)
    assert values[0] == 1.0 and min(values) <= 0.5  # the 0.25-0.5 bin is refused again
    assert slack.describe()["/side_pages"] == taken  # counted, not weighed


def test_useless_side_pages_and_short_waits_narrow_it():
    clock = Clock()
    slack = AdaptiveSlack(0.9, clock=clock)
    values = []
    for _ in range(20):
        crawl(slack, clock, 10, wait=0.1, side_hot=False, ratio=0.3)
        values.append(slack.value)
    # the 0.25-0.5 bin found nothing: it is refused, bar its probes and an occasional retry
    # once its old labels have faded
    assert sum(v < 0.7 for v in values) >= 15
    assert slack.side_rate(1) < slack.bar()
    assert slack.waits > 0 and slack.describe()["/wait_s"] > 0


def test_a_crawl_that_ends_by_time_first_takes_every_idle_servers_page():
    # the side pages that narrow the slack in a crawl bounded by pages; here the deadline
    # comes long before the budget runs out, so a page taken now displaces no later one
    clock = Clock()
    slack = AdaptiveSlack(0.9, clock=clock, deadline=600.0, pages_left=lambda: 10_000)
    for _ in range(20):
        crawl(slack, clock, 10, wait=0.1, side_hot=False, ratio=0.3)
        assert slack.value == 1.0
    assert slack.describe()["/time_bound"] == 1 and slack.waits == 0


def test_a_crawl_with_neither_bound_weighs_waiting_against_idle_servers():
    # the side pages of the crawls above, with no deadline and no page budget: weighed
    clock = Clock()
    slack = AdaptiveSlack(0.9, clock=clock)
    values = []
    for _ in range(20):
        crawl(slack, clock, 10, wait=0.1, side_hot=False, ratio=0.3)
        values.append(slack.value)
    assert sum(v < 0.7 for v in values) >= 15
    assert slack.describe()["/time_bound"] == 0 and slack.describe()["/page_bound"] == 0


@pytest.mark.parametrize("pages_left, deadline", [(50, 600.0), (10_000, None)])
@pytest.mark.parametrize("side_hot", [False, True])
def test_a_crawl_whose_pages_run_out_first_keeps_the_orders_slack(pages_left, deadline,
                                                                   side_hot):
    """Fewer pages left than the time allows (0.2 s a hand-out, 600 s), or no deadline: the
    page budget binds, and per second a page taken now would always look cheap, so the slack
    stays the order's whatever the side pages give, and no refused candidate is probed."""
    clock = Clock()
    slack = AdaptiveSlack(0.5, clock=clock, deadline=deadline, pages_left=lambda: pages_left)
    for _ in range(20):
        crawl(slack, clock, 10, wait=2.0, side_hot=side_hot, ratio=0.3)
        assert slack.value == 0.5
    assert slack.refusals == 200 and slack.probes == 0
    described = slack.describe()
    assert described["/page_bound"] == 1 and described["/time_bound"] == 0


def test_the_deadline_comes_into_view_as_the_crawl_goes():
    # pages left are many at first, then the pace says the budget lasts past the deadline
    clock = Clock()
    left = [10_000]
    slack = AdaptiveSlack(0.9, clock=clock, deadline=100.0, pages_left=lambda: left[0])
    crawl(slack, clock, 10, wait=0.1, side_hot=False, ratio=0.3)
    assert slack.time_bound
    left[0] = 20  # 20 pages at ~0.2 s a hand-out end long before the deadline
    crawl(slack, clock, 10, wait=0.1, side_hot=False, ratio=0.3)
    assert not slack.time_bound and slack.page_bound and slack.value == 0.9


def test_hand_outs_that_give_no_page_bring_the_deadline_into_view():
    # 300 pages left at ~0.2 s a hand-out would take 60 s, before the 100 s deadline; then 40
    # hand-outs go to hosts that never answer (no label): a page takes ~2 hand-outs, ~120 s
    clock = Clock()
    slack = AdaptiveSlack(0.9, clock=clock, deadline=100.0, pages_left=lambda: 300)
    crawl(slack, clock, 10, wait=0.1, side_hot=False, ratio=0.3)
    assert not slack.time_bound
    for i in range(40):
        clock.now += 0.2
        slack.handed_out(f"http://gone{i}.test/", 0.5)  # refused: never labelled
    crawl(slack, clock, 10, wait=0.1, side_hot=False, ratio=0.3)
    assert slack.time_bound and slack.value == 1.0


def test_refused_candidates_are_probed_and_the_slack_keeps_a_floor():
    slack = AdaptiveSlack(MIN_SLACK, clock=Clock())
    taken = sum(slack.accepts(0.01) for _ in range(200))
    assert 0 < taken < 20  # a few probes keep a refused bin measured
    slack.best = [0, 1000]  # nothing relevant anywhere: the slack stays above its floor
    assert slack.choose() >= MIN_SLACK


def test_a_wait_lasts_from_the_first_refusal_to_the_next_hand_out():
    clock = Clock()
    slack = AdaptiveSlack(0.0 + MIN_SLACK, clock=clock)
    slack.handed_out("http://a.test/", 1.0)
    clock.now = 1.0
    assert not slack.accepts(0.1)
    clock.now = 1.5
    assert not slack.accepts(0.1)  # the same wait
    clock.now = 4.0
    slack.handed_out("http://a.test/2", 1.0)
    assert (slack.waits, slack.wait_total, slack.work_total) == (1, 3.0, 1.0)
    slack.labelled("http://never-handed-out.test/", True)  # not ours: ignored
    assert slack.best == [0, 0]


def test_the_frontier_asks_the_controller_and_teaches_it_labels():
    frontier = make_frontier("best-first")
    clock = Clock()
    frontier.adaptive_slack = control = AdaptiveSlack(0.5, clock=clock)
    for url, score in (("http://busy.test/a", 0.9), ("http://busy.test/b", 0.8),
                       ("http://idle.test/c", 0.1)):
        frontier.add(Link(url, host=url.split("/")[2], parent="http://s.test/",
                          parent_score=score))
    first = frontier.pop()
    assert first is not None and first.url == "http://busy.test/a"

    def ready(h: str) -> bool:
        return h != "busy.test"

    assert frontier.pop(ready) is None  # 0.1 is below half of 0.8: wait
    assert frontier.slack_waits == 1 and control.refusals == 1
    control.value = 1.0
    side = frontier.pop(ready)
    assert side is not None and side.url == "http://idle.test/c"
    assert control.pending[side.url] == 0  # ratio 0.1 / 0.8: the lowest bin
    frontier.crawled(side.url, 0.4, True)
    assert control.side[0] == [1, 1]
    frontier.crawled(first.url, 0.0, False)
    assert control.best == [0, 1]
    assert frontier.pop(ready, 0.0) is None  # a slack given overrides the controller
    assert control.refusals == 1


def _scheduler(settings: dict):
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from focuscrawl.seam.scheduler import FocusScheduler

    class _Spider(Spider):
        name = "slack"

    crawler = get_crawler(_Spider, {"FOCUS_DELAY": 0, "FOCUS_MAX_PAGES": 0,
                                    "FOCUS_KEYWORDS": "alpha beta", **SCHEDULER_PARTS,
                                    **settings})
    crawler.engine = SimpleNamespace(_slot=None)  # no engine: nothing to wake
    sched = FocusScheduler.from_crawler(crawler)
    spider = _Spider()
    spider.crawler = crawler
    sched.open(spider)
    assert sched.error is None
    return sched


@pytest.mark.parametrize("settings, adapts, slack", [
    ({"FOCUS_STRATEGY": "learned"}, True, None),  # the default
    ({"FOCUS_STRATEGY": "learned", "FOCUS_SLACK_ADAPTIVE": True}, True, None),
    ({"FOCUS_STRATEGY": "learned", "FOCUS_SLACK_ADAPTIVE": True, "FOCUS_SLACK": 0.3}, False,
     0.3),
    ({"FOCUS_STRATEGY": "learned", "FOCUS_SLACK_ADAPTIVE": False}, False, 0.5),
    ({"FOCUS_STRATEGY": "best-first", "FOCUS_SLACK_ADAPTIVE": True}, False, 1.0),
])
def test_the_scheduler_builds_the_controller_only_when_the_slack_is_unset(settings, adapts,
                                                                         slack):
    sched = _scheduler(settings)
    assert (sched.frontier.adaptive_slack is not None) == adapts
    assert sched.slack == slack
    if adapts:
        sched._update_stats()
        assert sched.stats.get_value("focus/slack") == 0.5


@pytest.mark.parametrize("settings, deadline, left", [
    ({}, False, None),  # no time bound, no page bound
    ({"CLOSESPIDER_TIMEOUT": 300}, True, None),
    ({"CLOSESPIDER_TIMEOUT": 300, "FOCUS_MAX_PAGES": 40}, True, 40),
])
def test_the_scheduler_tells_the_controller_the_crawls_bounds(settings, deadline, left):
    """Scrapy's CLOSESPIDER_TIMEOUT is the deadline; the MAX_PAGES budget what is left."""
    sched = _scheduler({"FOCUS_STRATEGY": "learned", **settings})
    control = sched.frontier.adaptive_slack
    now = sched.policy.clock()
    assert (control.deadline is not None) == deadline
    assert control.page_bound == (left is not None)  # a budget binds until a choice says not
    if deadline:
        assert now < control.deadline <= now + 300
    assert control.pages_left() == left

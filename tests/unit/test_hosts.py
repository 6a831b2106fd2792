"""HostPolicy: leases, per-server concurrency and delay, slow servers, Crawl-delay (fake clock)."""

from __future__ import annotations

import pytest

from focuscrawl.config import PolitenessOptions
from focuscrawl.core.frontier.hosts import HostPolicy


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


def policy(clock: Clock, start_log: int = 0, **kw) -> HostPolicy:
    return HostPolicy(PolitenessOptions(**kw), start_log=start_log, clock=clock)


def test_concurrency_must_be_positive() -> None:
    with pytest.raises(ValueError):
        HostPolicy(PolitenessOptions(concurrency=0))


def test_reserved_and_active_requests_count_against_the_limit(clock: Clock) -> None:
    p = policy(clock, concurrency=2)
    assert p.can_dispatch("a")
    p.reserve("a")
    assert p.can_dispatch("a")
    p.reserve("a")
    assert not p.can_dispatch("a")  # two handed out, none started yet
    assert p.can_dispatch("b")  # servers are independent
    p.start("a", reserved=True)
    assert not p.can_dispatch("a")  # one pending + one active
    p.unreserve("a")
    assert p.can_dispatch("a")
    assert p.server("a").pending == 0 and p.server("a").active == 1


def test_delay_between_starts(clock: Clock) -> None:
    p = policy(clock, delay=2.0)
    p.server("a").connected = True  # a server fetched before (the first fetch: see below)
    assert p.wait_time("a") == 0
    p.start("a", reserved=False)
    assert p.wait_time("a") is None  # full: concurrency 1
    assert not p.is_due("a")
    clock.t += 0.5
    p.finish("a", 0.5)
    assert p.wait_time("a") == pytest.approx(1.5)
    clock.t += 1.5
    assert p.wait_time("a") == 0 and p.is_due("a")


def test_concurrency_above_one_still_spaces_starts(clock: Clock) -> None:
    p = policy(clock, concurrency=3, delay=0.5)
    p.start("a", reserved=False)
    assert p.wait_time("a") == pytest.approx(0.5)  # not full, but the delay runs
    clock.t += 0.5
    p.start("a", reserved=False)
    clock.t += 0.5
    p.start("a", reserved=False)
    assert p.wait_time("a") is None


def test_slow_response_drops_to_one_connection_and_a_proportional_delay(clock: Clock) -> None:
    p = policy(clock, concurrency=4, delay=0.2, slow_seconds=1.0, slow_factor=2.0, max_delay=30)
    p.start("a", reserved=False)
    p.start("a", reserved=False)
    clock.t += 1.5
    p.finish("a", 1.5)  # slower than slow_seconds
    state = p.server("a")
    assert state.slow and state.concurrency == 1
    assert p.current_delay("a") == pytest.approx(3.0)  # 2 x 1.5 s
    # the next start waits 3 s after the *end* of the slow fetch
    assert state.next_start == pytest.approx(clock.t + 3.0)
    assert p.wait_time("a") is None  # still one active, and the limit is now 1
    clock.t += 0.1
    p.finish("a", 1.6)
    assert p.wait_time("a") == pytest.approx(3.2)


def test_a_timeout_marks_a_slow_server(clock: Clock) -> None:
    p = policy(clock, concurrency=2, delay=0.2, slow_seconds=5.0, slow_factor=2.0, max_delay=8.0)
    p.start("a", reserved=False)
    clock.t += 10
    p.finish("a", 10.0, timed_out=True)
    assert p.server("a").concurrency == 1
    assert p.current_delay("a") == 8.0  # capped at max_delay
    assert p.wait_time("a") == pytest.approx(8.0)


def test_slow_server_delay_follows_its_response_time(clock: Clock) -> None:
    """Heritrix's rule is per fetch: a recovered server speeds up, but keeps one connection."""
    p = policy(clock, concurrency=3, delay=0.2, slow_seconds=1.0, slow_factor=2.0)
    p.start("a", reserved=False)
    p.finish("a", 2.0)
    assert p.current_delay("a") == pytest.approx(4.0)
    clock.t += 5
    p.start("a", reserved=False)
    p.finish("a", 0.05)
    assert p.current_delay("a") == pytest.approx(0.2)  # never below the normal delay
    assert p.server("a").concurrency == 1 and p.server("a").slow
    assert p.describe() == {"servers": 1, "slow_servers": 1, "crawl_delay_servers": 0,
                            "min_start_gap": 5.0}


def test_fast_responses_leave_the_server_alone(clock: Clock) -> None:
    p = policy(clock, concurrency=2, delay=0.2, slow_seconds=1.0)
    p.start("a", reserved=False)
    clock.t += 0.9
    p.finish("a", 0.9)
    assert not p.server("a").slow and p.server("a").concurrency == 2
    assert p.current_delay("a") == 0.2


def test_crawl_delay_counts_from_the_last_start(clock: Clock) -> None:
    p = policy(clock, delay=0.2, max_delay=30)
    p.start("a", reserved=False)  # robots.txt itself, at t=100
    clock.t += 0.1
    p.finish("a", 0.1)
    p.set_crawl_delay("a", 5)
    assert p.current_delay("a") == 5
    assert p.wait_time("a") == pytest.approx(4.9)  # 5 s after the robots.txt start
    p.set_crawl_delay("b", 1000)  # capped, and a server never started waits for nothing yet
    assert p.current_delay("b") == 30 and p.wait_time("b") == 0
    p.set_crawl_delay("c", -3)
    assert p.current_delay("c") == 0.2
    assert p.describe()["crawl_delay_servers"] == 2


def test_crawl_delay_never_shortens_the_configured_delay(clock: Clock) -> None:
    p = policy(clock, delay=2.0)
    p.set_crawl_delay("a", 0.5)
    assert p.current_delay("a") == 2.0


def test_a_request_that_left_late_pushes_the_next_start(clock: Clock) -> None:
    p = policy(clock, delay=1.0)
    p.start("a", reserved=False)
    assert p.server("a").next_start == pytest.approx(101.0)
    clock.t += 0.05  # the event loop got to the send 50 ms later
    p.sent("a")
    assert p.server("a").next_start == pytest.approx(101.05)
    p.sent("a", now=100.01)  # never earlier than already counted
    assert p.server("a").next_start == pytest.approx(101.05)
    p.sent("never-started")
    assert p.wait_time("never-started") == 0


def test_the_first_fetch_of_a_server_counts_the_delay_from_its_end(clock: Clock) -> None:
    """The first request opens the connection and reaches the server late (issue 14: the
    server saw robots.txt and the first page 35-40 ms apart with a 50 ms delay)."""
    p = policy(clock, delay=1.0)
    p.start("a", reserved=False)  # robots.txt, say, at t = 100
    clock.t = 100.3
    p.finish("a", 0.3)  # it took 0.3 s, connection set-up included
    assert p.wait_time("a") == pytest.approx(1.0)  # from its end, not from t = 100
    clock.t = 101.3
    p.start("a", reserved=False)
    clock.t = 101.5
    p.finish("a", 0.2)  # later fetches on the open connection: from the start, as before
    assert p.wait_time("a") == pytest.approx(0.8)


def test_the_shortest_gap_between_starts_to_one_server_is_reported(clock: Clock) -> None:
    p = policy(clock, delay=1.0)
    assert "min_start_gap" not in p.describe()  # no server started twice yet
    p.start("a", reserved=False)
    clock.t += 0.2
    p.start("b", reserved=False)  # another server: not a gap
    clock.t += 1.3
    p.sent("a")  # a's request left only now: a later start counts from here
    clock.t += 2.0
    p.start("a", reserved=False)
    clock.t += 1.5
    p.start("b", reserved=False)
    assert p.describe()["min_start_gap"] == pytest.approx(2.0)


def test_a_held_server_is_not_due_until_its_hold_ends(clock: Clock) -> None:
    p = policy(clock, delay=0.0)
    assert not p.hold("a", 160.0)  # nothing keeps URLs back: the caller refuses instead
    assert p.is_due("a")
    p.holding = True  # a scheduler that keeps held servers' URLs back
    assert p.hold("a", 160.0) and p.hold("a", 130.0)  # a second hold never shortens it
    assert not p.is_due("a") and p.is_held("a") and p.is_due("b")
    clock.t = 159.9
    assert not p.is_due("a")
    clock.t = 160.0
    assert p.is_due("a") and not p.held  # over: forgotten
    p.hold("a", 500.0)
    assert p.end_holds() == 1  # nothing else left to crawl: its URLs go (and are refused)
    assert p.is_due("a") and not p.hold("a", 600.0)  # not held again: that would loop
    assert p.hold("b", 600.0) and not p.is_due("b")  # a server failing later still is

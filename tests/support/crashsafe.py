"""A FocusScheduler driven at random over a JOBDIR and its replay compared to the live
state; `scrapy crawl` runs killed at random points."""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

from scrapy import Request
from scrapy.spiders import Spider
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from focuscrawl.core.learned import PageDigest
from focuscrawl.demo.webserver import ServerProcess
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.meta import FROM
from focuscrawl.seam.scheduler import FocusScheduler
from focuscrawl.seam.services import FocusServices
from tests.support.jobdir_site import line_count, page_fetches, read_lines, start_crawl
from tests.support.project import SCHEDULER_PARTS, open_scheduler


# --------------------------------------------------------------------------- replay
class _Spider(Spider):
    name = "replay"


def kill_at(proc: subprocess.Popen, out: Path, target: int) -> None:
    """SIGKILL a crawl once its output holds ``target`` lines (or it ended first)."""
    deadline = time.monotonic() + 60
    while line_count(out) < target and proc.poll() is None:
        assert time.monotonic() < deadline, "no progress"
        time.sleep(0.001)  # polling the output for progress, not a timing bet
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL


def scheduler_for(jobdir: Path, strategy: str, **settings) -> FocusScheduler:
    crawler = get_crawler(_Spider, {"JOBDIR": str(jobdir), "FOCUS_STRATEGY": strategy,
                                    "FOCUS_MAX_PAGES": 0, "FOCUS_DELAY": 0,
                                    "FOCUS_CONCURRENCY_PER_SERVER": 2,
                                    "FOCUS_JOURNAL_SNAPSHOT_OPS": 60, **SCHEDULER_PARTS,
                                    **settings})
    return open_scheduler(crawler, _Spider)


def outlink(url: str, parent: str | None, score: float, hot: bool, source: int | None,
            rng: random.Random) -> Request:
    meta = {"focus": {"anchor": "garden" if rng.random() < 0.3 else "next", "parent": parent,
                      "parent_score": score, "parent_hot": hot,
                      "keyword": rng.random() < 0.2}}
    if source is not None:
        meta[FROM] = source
    headers = {"Referer": parent} if parent and rng.random() < 0.3 else None  # a payload
    return Request(url, meta=meta, headers=headers)


def drive(sched: FocusScheduler, rng: random.Random, steps: int) -> None:
    """A random crawl through the scheduler's API, as the engine and middlewares drive it."""
    hosts = ["a.test", "b.test", "c.test", "d.test"]
    urls = [f"http://{h}/p{i}" for h in hosts for i in range(60)]
    send = sched.crawler.signals.send_catch_log
    completion = sched.lifecycle
    known = FocusServices.of(sched.crawler).known_urls
    if not sched.lifecycle.resumed:
        sched.enqueue_request(outlink(urls[0], None, 0.0, False, None, rng))
    flying: list[Request] = []
    for _ in range(steps):
        if flying and (rng.random() < 0.45 or len(flying) > 6):
            request = flying.pop(rng.randrange(len(flying)))
            lease = request.meta["focus_lease"]
            sched.policy.unreserve(request.meta["focus_server"])
            fate = rng.random()
            if fate < 0.08:  # a download error
                send(focus_signals.request_finished, request=request, status=None)
                failure = Failure(OSError("reset"))
                failure.request = request
                request.errback(failure)
                continue
            if fate < 0.12:  # a redirect to another URL
                send(focus_signals.request_finished, request=request, status=301)
                moved = request.replace(url=rng.choice(urls))
                moved.meta["redirect_times"] = 1
                sched.enqueue_request(moved)
                continue
            send(focus_signals.request_finished, request=request, status=200)
            url = request.url
            score = round(rng.random(), 3)
            hot = score > 0.7
            completion.hold(lease)  # the page's output stream
            words = ["garden"] * int(score * 10) + ["stone", "river"][: rng.randrange(3)]
            digest = PageDigest.from_tokens(words or ["x"], hits=[words.count("garden")])
            send(focus_signals.page_scored, url=url, score=score, hot=hot, digest=digest)
            for target in rng.sample(urls, 4):
                if known.active and known.ignores(target, score, url):
                    continue  # dropped unbuilt, as the topic spider does (maybe counted)
                completion.hold(lease)
                sched.enqueue_request(outlink(target, url, score, hot, lease, rng))
            completion.hold(lease)  # its item ...
            completion.release(lease)  # ... written
            if rng.random() < 0.9:  # a few pages are still in the spider at the end
                completion.release(lease)
        else:
            if not flying and not len(sched):  # the crawl ran dry: a new seed
                sched.enqueue_request(outlink(rng.choice(urls), None, 0.0, False, None, rng))
            request = sched.next_request()
            if request is not None:
                flying.append(request)


def replays_to_the_live_state(tmp_path: Path, strategy: str, settings: dict, seed: int
                              ) -> dict[str, int]:
    """Kill, resume and compare three times, then drain both; the frontier's counters."""
    rng = random.Random(f"{strategy}{settings}{seed}")
    live_dir, dead_dir = tmp_path / "live", tmp_path / "dead"
    live = scheduler_for(live_dir, strategy, **settings)
    for round_ in range(3):  # kill, resume, kill again ...
        drive(live, rng, rng.randrange(100, 400))
        store = live.state.store
        assert store is not None
        store.commit()  # a kill keeps what was committed (tested above)
        if dead_dir.exists():
            shutil.rmtree(dead_dir)
        shutil.copytree(live_dir, dead_dir)  # the files as a kill -9 leaves them
        snapshots = store.stats["snapshots"]
        open_leases = live.lifecycle.unsettled
        live.close("shutdown")  # the live state, with unfinished pages put back
        resumed = scheduler_for(dead_dir, strategy, **settings)
        assert resumed.lifecycle.resumed
        assert resumed.frontier.snapshot() == live.frontier.snapshot(), round_
        was, now = live.lifecycle, resumed.lifecycle
        assert (now.pages, now.order, now.orders) == (was.pages, was.order, was.orders)
        assert resumed.stats.get_value("focus/journal/requeued", 0) == open_leases
        if round_ == 0:
            assert snapshots > 1  # the journal was compacted into snapshots on the way
        resumed.close("shutdown")
        shutil.rmtree(live_dir)
        shutil.copytree(dead_dir, live_dir)
        live = scheduler_for(live_dir, strategy, **settings)
    # and the order goes on identically: drain both
    other = scheduler_for(dead_dir, strategy, **settings)
    drained = [[], []]
    for i, s in enumerate((live, other)):
        while (r := s.next_request()) is not None:
            drained[i].append(r.url)
            s.policy.unreserve(r.meta["focus_server"])
    assert drained[0] == drained[1]
    live.close("finished")
    other.close("finished")
    return dict(other.frontier.stats)


def run_with_kills(cmd: list[str], server: ServerProcess, log: Path, out: Path,
                   targets: list[int]) -> list[tuple[float, float, int | None, int]]:
    """Run ``cmd`` killed at each target line count, then to its end: each run's [start, end)
    on the server's clock (same host), target and lines written."""
    windows = []
    for target in [*targets, None]:
        started = time.time()
        proc = start_crawl(cmd, server, log)
        if target is None:
            assert proc.wait(timeout=120) == 0
        else:
            kill_at(proc, out, target)
        windows.append((started, time.time(), target, line_count(out)))
        read_lines(out)  # every line whole and valid JSON after every kill
    return windows


def refetches(rows: list[dict], windows: list[tuple], concurrency: int) -> list[tuple]:
    """Per run: (target, lines, pages fetched, fetched again); asserts no page twice within a
    run, and again only what was in flight when a run was killed: at most ``concurrency``
    pages of each killed run (the JOBDIR's cap on pages handed out and not done).

    A page in flight at a kill is queued again, not necessarily fetched by the next run: if
    that run is killed before reaching it (a small frontier spills it to disk), a later run
    fetches it.  So a page fetched again is charged to the run that fetched it last.
    """
    report = []
    last: dict[str, int] = {}  # page -> the run that fetched it last
    left = [0] * len(windows)  # per run: its pages fetched again by a later run
    for run, (started, ended, target, lines) in enumerate(windows):
        # a request belongs to the run it arrived in (it may be logged after the kill)
        now = page_fetches([r for r in rows if started <= r["time_epoch"] < ended])
        twice = sorted(u for u in now if u in last)
        report.append((target, lines, sum(now.values()), len(twice)))
        assert max(now.values(), default=1) == 1  # within one run, never twice
        for url in twice:
            left[last[url]] += 1
        last.update(dict.fromkeys(now, run))
    assert max(left) <= concurrency, (left, report)
    return report

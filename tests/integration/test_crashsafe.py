"""Issue 8: crash-safe JOBDIR -- the SQLite store, journal replay, the JSON-lines feed, kill -9.

* The store keeps committed operations and loses only a suffix of uncommitted ones.
* A scheduler driven through a random crawl, then "killed" (its files copied as they are) and
  reopened, replays its journal to exactly the state the live scheduler has after putting back
  its unfinished pages -- for every strategy.
* The feed cuts a torn line and skips pages already written.
* End to end: ``scrapy crawl`` with JOBDIR and ``-o``, killed with SIGKILL at seeded random
  points (chosen from the progress seen in the output file) and resumed each time, ends with the
  same set of pages as an uninterrupted crawl, no duplicate or torn line, crawl orders 1..N, and
  at most the requests in flight at each kill fetched twice (from the server's access log).
"""

from __future__ import annotations

import io
import json
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from scrapy import Request
from scrapy.spiders import Spider
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from focuscrawl.core.frontier.stores import SQLiteStore, StoreError
from focuscrawl.core.learned import PageDigest
from focuscrawl.demo.webserver import ServerProcess
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.meta import FROM
from focuscrawl.seam.output.feeds import LineFile, SafeJsonLinesExporter, repair, written_urls
from focuscrawl.seam.output.items import PageItem
from focuscrawl.seam.persistence.jobdir import STATE_FILE
from focuscrawl.seam.scheduler import FocusScheduler
from focuscrawl.seam.services import FocusServices

from .conftest import SCHEDULER_PARTS, open_scheduler
from .jobdir_site import (
    crawl_command,
    line_count,
    page_fetches,
    page_urls,
    read_lines,
    site,
    start_crawl,
)


# --------------------------------------------------------------------------- the store
def test_store_keeps_commits_and_loses_only_an_uncommitted_suffix(tmp_path):
    path = tmp_path / "s.sqlite"
    store = SQLiteStore(path, commit_every=10_000, commit_seconds=3600)
    assert store.empty
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    for i in range(5):
        store.record("op", i)
    store.commit()
    for i in range(5, 8):
        store.record("op", i)  # buffered, never committed: the process dies here
    other = SQLiteStore(path)  # what a new process finds
    state, ops = other.load()
    assert state is None and ops == [("op", i) for i in range(5)]
    other.close()

    store.commit()
    store.snapshot({"n": 8})  # one transaction: new snapshot, journal emptied
    store.record("op", 8)
    store.commit()
    store.close()
    again = SQLiteStore(path)
    assert not again.empty
    assert again.load() == ({"n": 8}, [("op", 8)])
    again.close()


def test_store_commits_by_count_and_by_time(tmp_path):
    now = [0.0]
    store = SQLiteStore(tmp_path / "s.sqlite", commit_every=3, commit_seconds=0.5,
                        clock=lambda: now[0])
    store.record("a")
    store.record("b")
    assert store.stats["commits"] == 0
    store.record("c")
    assert store.stats["commits"] == 1  # three buffered
    store.record("d")
    now[0] = 0.6
    store.record("e")
    assert store.stats["commits"] == 2  # the last commit was 0.6 s ago
    store.close()


def test_store_refuses_another_schema(tmp_path):
    path = tmp_path / "s.sqlite"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema'",
               (__import__("pickle").dumps(99),))
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="schema 99"):
        SQLiteStore(path)


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


@pytest.mark.parametrize("strategy,settings", [
    ("breadth-first", {}),
    ("breadth-first", {"FOCUS_MAX_BUFFER": 40}),
    ("cho", {"FOCUS_REORDER": "backlinks"}),
    ("cho", {"FOCUS_REORDER": "score"}),
    ("cho-distance", {}),
    ("best-first", {"FOCUS_MAX_BUFFER": 50}),
    ("best-n-first", {"FOCUS_BEST_N": 7}),
    ("best-n-first", {"FOCUS_BEST_N": 5, "FOCUS_ROUND_ROBIN": 3}),
    ("distiller", {"FOCUS_DISTILLER_EVERY": 7}),
    ("distiller", {"FOCUS_DISTILLER_EVERY": 3, "FOCUS_MAX_BUFFER": 30}),
    ("learned", {"FOCUS_KEYWORDS": "garden", "FOCUS_LEARN_EVERY": 7}),
    ("learned", {"FOCUS_KEYWORDS": "garden", "FOCUS_LEARN_EVERY": 3, "FOCUS_MAX_BUFFER": 40,
                 "FOCUS_SLACK": 0.5}),
])
@pytest.mark.parametrize("seed", range(3))
def test_a_killed_scheduler_replays_to_the_live_state(tmp_path, strategy, settings, seed):
    replays_to_the_live_state(tmp_path, strategy, settings, seed)


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


# --------------------------------------------------------------------------- the feed
def test_feed_cuts_a_torn_line_and_skips_pages_already_written(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"url": "http://a.test/1"}\n{"url": "http://a.test/2"}\n{"url": "htt')
    assert repair(path) == len(b'{"url": "htt')
    assert path.read_bytes().endswith(b"2\"}\n")
    assert repair(path) == 0
    urls, bad = written_urls(path)
    assert urls == {"http://a.test/1", "http://a.test/2"} and bad == 0

    f = LineFile(str(path), "ab", written=urls)
    exporter = SafeJsonLinesExporter(f)
    for url in ("http://a.test/2", "http://a.test/3", "http://a.test/3"):
        exporter.export_item(PageItem(url=url, status=200, title="t", score=0.5, hot=False,
                                      depth=1, parent=None, anchor="", fetched_at="",
                                      content_type="text/html", text_length=1, outlinks=0,
                                      order=3, priority=0.0))
    f.close()
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert [x["url"] for x in lines] == ["http://a.test/1", "http://a.test/2", "http://a.test/3"]


def test_line_file_writes_everything_in_one_call(tmp_path):
    f = LineFile(str(tmp_path / "x"), "wb")
    data = b"x" * 300_000 + b"\n"
    assert f.write(data) == len(data)
    assert f.write(memoryview(b"y\n")) == 2
    f.close()
    assert (tmp_path / "x").read_bytes() == data + b"y\n"
    assert isinstance(f, io.FileIO)


# --------------------------------------------------------------------------- kill -9
CONCURRENCY = 8  # CONCURRENT_REQUESTS; 3 servers x 2 connections keep at most 6 in flight


def test_sigkill_at_random_points_then_resume(tmp_path):
    pages = site()
    everything = page_urls(pages)
    rng = random.Random(20240806)
    targets = sorted(rng.sample(range(10, len(everything) - 10), 4))
    settings = {"CONCURRENT_REQUESTS": CONCURRENCY, "FOCUS_CONCURRENCY_PER_SERVER": 2}
    with ServerProcess(pages=pages, delay_ms=15) as server:
        # the uninterrupted crawl
        out = tmp_path / "whole.jsonl"
        cmd = crawl_command(out, tmp_path / "whole-job", len(everything), **settings)
        assert start_crawl(cmd, server, tmp_path / "whole.log").wait(timeout=120) == 0
        whole = read_lines(out)
        assert {i["url"] for i in whole} == everything

        out = tmp_path / "parts.jsonl"
        cmd = crawl_command(out, tmp_path / "job", len(everything), **settings)
        windows = run_with_kills(cmd, server, tmp_path / "parts.log", out, targets)
        time.sleep(0.2)  # let the server log requests a killed crawler left behind
        rows = server.read_log()
    report = refetches(rows, windows, CONCURRENCY)

    print("\nkill at line | lines after | pages fetched by the run | fetched again")
    for target, lines, fetched, again in report:
        print(f"{str(target):>12} | {lines:>11} | {fetched:>24} | {again:>13}")
    parts = read_lines(out)
    urls = [i["url"] for i in parts]
    assert len(urls) == len(set(urls))  # no duplicate line
    assert set(urls) == {i["url"] for i in whole}  # the uninterrupted crawl's pages
    assert sorted(i["order"] for i in parts) == list(range(1, len(everything) + 1))
    assert sum(r[3] for r in report[1:]) >= 1  # the kills did land with pages in flight
    assert (tmp_path / "job" / STATE_FILE).exists()


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


def test_sigkill_then_resume_keeps_the_learned_order(tmp_path):
    """The learned order's model, profile and statistics survive kill -9: a crawl killed twice
    and resumed fetches the pages of an uninterrupted crawl in the same order."""
    pages = site()
    max_pages = 60
    settings = {"CONCURRENT_REQUESTS": 1, "FOCUS_STRICT_ORDER": True, "FOCUS_LEARN_EVERY": 7}

    def command(name: str) -> tuple[list[str], Path]:
        out = tmp_path / f"{name}.jsonl"
        cmd = crawl_command(out, tmp_path / f"{name}-job", max_pages, **settings)
        cmd[cmd.index("strategy=breadth-first")] = "strategy=learned"
        return cmd, out

    with ServerProcess(pages=pages, delay_ms=5) as server:
        cmd, out = command("whole")
        assert start_crawl(cmd, server, tmp_path / "whole.log").wait(timeout=120) == 0
        whole = [i["url"] for i in sorted(read_lines(out), key=lambda i: i["order"])]
        assert len(whole) == max_pages
        cmd, out = command("parts")
        for target in (15, 38, None):
            proc = start_crawl(cmd, server, tmp_path / "parts.log")
            if target is None:
                assert proc.wait(timeout=120) == 0
                break
            kill_at(proc, out, target)
    parts = [i["url"] for i in sorted(read_lines(out), key=lambda i: i["order"])]
    assert parts == whole

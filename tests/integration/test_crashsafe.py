"""Issue 8: crash-safe JOBDIR -- the SQLite store, journal replay, the JSON-lines feed, kill -9.

* The store keeps committed operations and loses only a suffix of uncommitted ones
  (tests/unit/test_crashsafe_store.py, with the feed's tests).
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

import random
import time
from pathlib import Path

import pytest

from focuscrawl.demo.webserver import ServerProcess
from focuscrawl.seam.persistence.jobdir import STATE_FILE
from tests.support.crashsafe import kill_at, refetches, replays_to_the_live_state, run_with_kills
from tests.support.jobdir_site import crawl_command, page_urls, read_lines, site, start_crawl


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

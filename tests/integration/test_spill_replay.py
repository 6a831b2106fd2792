"""Issue 13, bounded memory with a JOBDIR: a spilling scheduler "killed" mid-crawl and
reopened replays to the live state; ``scrapy crawl`` with a tiny limit, killed with SIGKILL and
resumed, fetches every page once (the rest: tests/unit/test_spill.py)."""

from __future__ import annotations

import random
import re
import sqlite3
import time

import pytest

from focuscrawl.demo.webserver import ServerProcess
from focuscrawl.seam.persistence.jobdir import STATE_FILE
from tests.support.crashsafe import refetches, replays_to_the_live_state, run_with_kills
from tests.support.jobdir_site import crawl_command, line_count, page_urls, read_lines, site


@pytest.mark.parametrize("strategy,settings", [
    ("breadth-first", {}),
    ("cho-distance", {}),
    ("cho", {"FOCUS_REORDER": "backlinks"}),
    ("best-first", {"FOCUS_MAX_BUFFER": 50}),
    ("best-n-first", {"FOCUS_BEST_N": 5}),
    ("best-n-first", {"FOCUS_BEST_N": 5, "FOCUS_ROUND_ROBIN": 3}),
    ("distiller", {"FOCUS_DISTILLER_EVERY": 7}),
    ("learned", {"FOCUS_KEYWORDS": "garden", "FOCUS_LEARN_EVERY": 7}),
    ("learned", {"FOCUS_KEYWORDS": "garden", "FOCUS_LEARN_EVERY": 3, "FOCUS_SLACK": 0.5}),
])
@pytest.mark.parametrize("seed", range(2))
def test_a_killed_spilling_scheduler_replays_to_the_live_state(tmp_path, strategy, settings,
                                                                seed):
    """test_crashsafe's kill-and-replay with 12 URLs in memory: spills and reloads replay."""
    stats = replays_to_the_live_state(tmp_path, strategy,
                                      {**settings, "FOCUS_FRONTIER_MEMORY": 12}, seed)
    assert stats["spills"] > 0 and stats["reloads"] > 0


def test_sigkill_with_a_tiny_frontier_memory_then_resume(tmp_path):
    """Spilling and reloading all along, killed three times: every page once, orders 1..N."""
    pages = site()
    everything = page_urls(pages)
    rng = random.Random(1313)
    targets = sorted(rng.sample(range(10, len(everything) - 10), 3))
    concurrency = 8
    settings = {"CONCURRENT_REQUESTS": concurrency, "FOCUS_CONCURRENCY_PER_SERVER": 2,
                "FOCUS_FRONTIER_MEMORY": 10, "FOCUS_JOURNAL_SNAPSHOT_OPS": 40}
    out = tmp_path / "parts.jsonl"
    job = tmp_path / "job"
    cmd = crawl_command(out, job, len(everything), **settings)
    log = tmp_path / "parts.log"
    with ServerProcess(pages=pages, delay_ms=15) as server:
        windows = run_with_kills(cmd, server, log, out, targets)
        time.sleep(0.2)  # let the server log requests a killed crawler left behind
        rows = server.read_log()
    refetches(rows, windows, concurrency)
    parts = read_lines(out)
    urls = [i["url"] for i in parts]
    assert len(urls) == len(set(urls)) == len(everything)
    assert set(urls) == everything
    assert sorted(i["order"] for i in parts) == list(range(1, len(everything) + 1))
    assert line_count(out) == len(everything)
    db = sqlite3.connect(job / STATE_FILE)
    assert db.execute("SELECT COUNT(*) FROM spill").fetchone()[0] == 0  # all came back
    db.close()
    text = log.read_text()  # the stats dumped at the end of the last run (counted since start)
    for name in ("spills", "reloads"):
        counts = [int(n) for n in re.findall(rf"'focus/frontier/{name}': (\d+)", text)]
        assert counts and counts[-1] > 0, name

"""Issue 13, bounded memory, the long runs: every strategy's synthetic crawl of 1200 pages with
a tiny limit hands out every URL once and, below the limit, in the same order; a spilling
scheduler "killed" mid-crawl and reopened replays to the live state; ``scrapy crawl`` with a
tiny limit, killed with SIGKILL and resumed, fetches every page once (the rest:
tests/unit/test_spill.py)."""

from __future__ import annotations

import random
import re
import sqlite3
import time

import pytest

from focuscrawl.core.frontier import Link
from focuscrawl.core.orders import make_frontier
from focuscrawl.demo.webserver import ServerProcess
from focuscrawl.seam.persistence.jobdir import STATE_FILE
from tests.support.crashsafe import refetches, replays_to_the_live_state, run_with_kills
from tests.support.jobdir_site import crawl_command, line_count, page_urls, read_lines, site

STRATEGIES = ["breadth-first", "cho", "cho-distance", "best-first", "best-n-first",
              "distiller", "learned"]


def crawl(name: str, memory: int, pages: int = 1200, **options) -> tuple[list[str], object]:
    """A synthetic crawl through the core API: pop, score, add 8 links; the URLs handed out."""
    rng = random.Random(5)
    frontier = make_frontier(name, n=7, keywords=["garden"], every=25, learn_every=5,
                             frontier_memory=memory, **options)
    urls = [f"http://h{i % 9}.test/p{i}" for i in range(pages)]
    frontier.add(Link(urls[0], host="h0.test"))
    out = []
    most = 0
    while (entry := frontier.pop()) is not None:
        out.append(entry.url)
        score = rng.random()
        frontier.crawled(entry.url, score, score > 0.8)
        for url in rng.sample(urls, 8):
            frontier.add(Link(url, host=url.split("/")[2], parent=entry.url,
                              parent_score=score, keyword=rng.random() < 0.1,
                              anchor="garden" if rng.random() < 0.2 else "next"))
        most = max(most, len(frontier.queues))
    frontier.most_in_memory = most  # type: ignore[attr-defined]
    return out, frontier


@pytest.mark.parametrize("name", STRATEGIES)
def test_every_url_once_with_a_tiny_limit(name):
    unbounded, _ = crawl(name, 0)
    bounded, frontier = crawl(name, 50)
    assert len(bounded) == len(set(bounded))  # never handed out twice
    assert set(bounded) == set(unbounded)  # and none lost
    assert frontier.stats["spills"] > 10 and frontier.stats["reloads"] > 10
    assert frontier.stats["spilled"] == frontier.stats["reloaded"]  # all came back
    assert frontier.most_in_memory <= 50 + 8  # the limit, plus one page's links
    assert len(frontier) == 0 and len(frontier.spilled) == 0
    frontier.close()


@pytest.mark.parametrize("name", STRATEGIES)
def test_the_order_is_unchanged_below_the_limit(name):
    unbounded, _ = crawl(name, 0)
    below, frontier = crawl(name, 10**6)
    assert below == unbounded
    assert frontier.stats["spills"] == 0 and frontier.spilled.store is None  # no file made


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

"""Issue 3: a crawl stopped cleanly (Ctrl-C once) resumes from JOBDIR with the same frontier.

``scrapy crawl`` runs in a subprocess against a local multi-host server.  The crawl is the papers'
sequential crawler (FOCUS_STRICT_ORDER, one request at a time), so its fetch order is a function
of the frontier alone: a crawl interrupted by SIGINT after some pages and resumed with the same
command must fetch exactly the pages of an uninterrupted crawl, in the same order, and the
server must see no page twice.  Strategies with the most state to restore: Best-N-First (the
batch and its random generator), Cho's distance crawler (link graph, hot distances, promotions)
and the distiller (hub weights).
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from focuscrawl.demo.webserver import Page, ServerProcess
from tests.support.jobdir_site import (
    TOPIC,
    crawl_command,
    line_count,
    page_fetches,
    read_lines,
    site,
    start_crawl,
)

MAX_PAGES = 90  # of 150: the strategy decides which pages, so the sets can differ
STOP_AFTER = 35
STRATEGIES = {
    "best-n-first": ["-a", "n=6"],
    "cho-distance": [],
    "distiller": ["-s", "FOCUS_DISTILLER_EVERY=10"],
    "learned": ["-s", "FOCUS_LEARN_EVERY=10"],
    # the page classifier's examples: fetched once, its model kept in the spider's state
    "learned-examples": ["-s", "FOCUS_LEARN_EVERY=10", "-a",
                         "examples=http://e.test/on.html", "-a", "negatives=http://e.test/off.html"],
}
EXAMPLES = {"http://e.test/on.html", "http://e.test/off.html"}


@pytest.fixture(scope="module")
def server():
    pages = site()
    pages["e.test"] = {"/on.html": Page(f"<html><body><p>{TOPIC} {TOPIC}</p></body></html>"),
                       "/off.html": Page("<html><body><p>unrelated words</p></body></html>")}
    with ServerProcess(pages=pages, delay_ms=3) as srv:
        yield srv


def run(server, cmd: list[str], log: Path, stop_after: int | None = None,
        out: Path | None = None) -> tuple[int, list[dict]]:
    """Run one crawl; with ``stop_after``, send SIGINT once the output has that many lines."""
    before = len(server.read_log())
    proc = start_crawl(cmd, server, log)
    if stop_after is not None:
        assert out is not None
        deadline = time.monotonic() + 60
        while line_count(out) < stop_after and proc.poll() is None:
            assert time.monotonic() < deadline, "the crawl made no progress"
            time.sleep(0.005)  # polling the output file for progress, not a timing assumption
        proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=120)
    return code, server.read_log()[before:]


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_clean_stop_resumes_the_same_crawl(server, tmp_path, strategy):
    def command(name: str) -> tuple[list[str], Path]:
        out = tmp_path / f"{name}.jsonl"
        # -O: the same command resumes; a resumed crawl appends instead of overwriting
        cmd = crawl_command(out, tmp_path / f"{name}-job", MAX_PAGES, overwrite=True,
                            FOCUS_STRICT_ORDER=True, CONCURRENT_REQUESTS=1)
        cmd[cmd.index("strategy=breadth-first")] = f"strategy={strategy.removesuffix('-examples')}"
        return cmd + STRATEGIES[strategy], out

    whole_cmd, whole_out = command("whole")
    code, _ = run(server, whole_cmd, tmp_path / "whole.log")
    assert code == 0
    whole = read_lines(whole_out)
    assert len(whole) == MAX_PAGES

    cmd, out = command("parts")
    log = tmp_path / "parts.log"
    code, first = run(server, cmd, log, stop_after=STOP_AFTER, out=out)
    assert code == 0
    stopped_at = line_count(out)
    assert STOP_AFTER <= stopped_at < MAX_PAGES, "SIGINT did not stop the crawl half-way"
    assert "finish_reason': 'shutdown'" in log.read_text()
    code, second = run(server, cmd, log)
    assert code == 0
    assert "resumed with" in log.read_text()

    parts = read_lines(out)
    # none lost, none twice, the same pages in the same order, numbered on from the stop
    assert [(i["url"], i["order"]) for i in parts] == [(i["url"], i["order"]) for i in whole]
    assert [i["relevance"] for i in parts] == [i["relevance"] for i in whole]
    fetched = page_fetches(first + second)
    if strategy == "learned-examples":  # fetched by the first part only, before its pages
        assert all(fetched.pop(url) == 1 for url in EXAMPLES)
        assert set(list(page_fetches(first))[:2]) == EXAMPLES
    assert max(fetched.values()) == 1, [u for u, n in fetched.items() if n > 1]
    assert set(fetched) == {i["url"] for i in whole}
    examples = len(EXAMPLES) if strategy == "learned-examples" else 0
    assert len(page_fetches(first)) - examples == stopped_at  # the stop let its request finish

    # a third run of the same command has nothing left to do
    code, third = run(server, cmd, log)
    assert code == 0 and not page_fetches(third)
    assert read_lines(out) == parts

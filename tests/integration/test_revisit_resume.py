"""A continuous crawl killed with SIGKILL and resumed from JOBDIR keeps its pages' versions and
observations: no line twice, no version skipped, no change exported that the web did not make,
none missed that the fetches could see."""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

from focuscrawl.core.frontier.stores import SQLiteStore
from focuscrawl.demo.webserver import ServerProcess
from focuscrawl.seam.persistence.jobdir import STATE_FILE
from tests.support.crashsafe import kill_at
from tests.support.jobdir_site import read_lines, start_crawl
from tests.support.revisits import (
    CHANGING,
    SEED,
    TOPIC,
    changed_between_lines,
    expected_changes,
    fetch_times,
    site,
)

MAX_PAGES = 20
HOSTS = 2  # one request in flight per server: what a kill can leave unprocessed


def command(out: Path, jobdir: Path, timeout: float) -> list[str]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"keywords={TOPIC}",
           "-a", f"seeds={SEED}", "-a", "strategy=breadth-first", "-a", f"max_pages={MAX_PAGES}",
           "-a", "revisit=true", "-o", str(out), "-s", f"JOBDIR={jobdir}"]
    for name, value in {"FOCUS_DELAY": 0.05, "FOCUS_REVISIT_PRIOR": 5.0, "LOG_LEVEL": "INFO",
                        "CLOSESPIDER_TIMEOUT": timeout, "TELNETCONSOLE_ENABLED": False}.items():
        cmd += ["-s", f"{name}={value}"]
    return cmd


def test_kill_and_resume_keep_versions_and_rates(tmp_path: Path) -> None:
    out, jobdir, log = tmp_path / "out.jsonl", tmp_path / "job", tmp_path / "crawl.log"
    with ServerProcess(pages=site(), changing=CHANGING) as srv:
        first = start_crawl(command(out, jobdir, 120), srv, log)
        kill_at(first, out, 30)  # mid-crawl: new pages kept and changes found
        killed = len(srv.read_log())
        second = start_crawl(command(out, jobdir, 5), srv, log)
        assert second.wait(timeout=120) == 0, log.read_text()[-3000:]
        truth = srv.changes()
        rows = srv.read_log()
    lines: dict[str, list[dict]] = defaultdict(list)
    for item in read_lines(out):
        lines[item["url"]].append(item)
    assert len(lines) <= MAX_PAGES  # the distinct pages across both runs
    for url, items in lines.items():
        versions = [i["version"] for i in items if not i["gone"]]
        assert versions == list(range(1, len(versions) + 1)), (url, versions)
        assert sum(i["gone"] for i in items) <= 1
    fetches = fetch_times(rows)
    for url, items in lines.items():
        for before, after in zip(items, items[1:], strict=False):
            # changed: the web made a change in between
            assert after["gone"] or changed_between_lines(fetches, truth, before, after), url
    # what the fetches could see, with and without the fetches in flight at the kill (the
    # killed crawl never saw their answers)
    run1 = fetch_times(rows[:killed])
    in_flight = {(url, ts[-1]) for url, ts in run1.items()}
    most, least = expected_changes(fetches, truth), expected_changes(fetches, truth, in_flight)
    exported = Counter({u: sum(i["changed"] for i in items) for u, items in lines.items()})
    for url in set(most) | set(exported):
        assert least[url] <= exported[url] <= most[url], url
    assert sum(exported.values()) >= 5
    # the resumed crawl knew its pages: conditional requests answered 304 ...
    run2 = rows[killed:]
    assert sum(r["status"] == 304 for r in run2) > 0
    # ... and their observations: every revisit of a kept page but those a kill or the close
    # left unprocessed is in the final state (at each of the two stops, per server, one
    # answered and not yet parsed and one in flight, the server free once a download ends)
    state, _ = SQLiteStore(jobdir / STATE_FILE).load()
    kept = state["frontier"]["revisit"]["pages"]
    observed = sum(page["stats"][0] + sum(c[1] for c in page["stats"][2]) for page in kept)
    revisits = sum(len(fetches[p["url"]]) - 1 for p in kept if p["url"] in fetches)
    assert revisits - 2 * 2 * HOSTS <= observed <= revisits

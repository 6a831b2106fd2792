"""kill -9 and Ctrl-C through the add-on: a third-party Scrapy project (only ``ADDONS`` and its own
spider, which follows every link and yields url and title) crawls a loopback site with
``JOBDIR``; each run is interrupted at a seeded random point -- SIGKILL once the output holds N
pages, SIGINT (a clean stop) at a later N, SIGKILL once the server has served a third N (pages
served, not yet written) -- and the last run goes to the end.  The output then holds exactly
the pages of an uninterrupted crawl, each once, as JSON lines and as Parquet.  The same through
focuscrawl's own project and topic spider with ``-o pages.parquet`` on its command line (its
JSON lines under kill -9 and Ctrl-C: test_crashsafe.py, test_resume.py); its uninterrupted
crawl writes CSV, as Scrapy gives it.
"""

from __future__ import annotations

import csv
import random
import zlib
from pathlib import Path

import pytest

from focuscrawl.demo.webserver import ServerProcess
from tests.support.interrupted import (
    Crawl,
    plan,
    project_crawl,
    run_interrupted,
    start,
    third_party_crawl,
    third_party_project,
)
from tests.support.jobdir_site import page_urls, site

pytestmark = pytest.mark.third_party  # in the Scrapy matrix (noxfile.py)

PAGES_PER_HOST = 20  # 3 hosts: 60 pages, every one reachable from the start page
START = "http://a.test/p0.html"


@pytest.fixture(scope="module")
def pages():
    return site(PAGES_PER_HOST)


@pytest.fixture(scope="module")
def server(pages):
    with ServerProcess(pages=pages, delay_ms=10) as srv:
        yield srv


@pytest.fixture(scope="module")
def theirs(tmp_path_factory) -> Path:
    return third_party_project(tmp_path_factory.mktemp("theirs"))


def make(kind: str, fmt: str, root: Path, name: str, jobdir: bool, total: int,
         theirs: Path) -> Crawl:
    out = root / f"{name}.{fmt}"
    job = root / f"{name}-job" if jobdir else None
    if kind == "addon":
        return third_party_crawl(theirs, out, job, fmt, START)
    return project_crawl(out, job, total, START)


@pytest.fixture(scope="module")
def uninterrupted(server, pages, theirs, tmp_path_factory) -> dict[str, set[str]]:
    """Each project's pages from one crawl that nothing interrupts (focuscrawl's as CSV)."""
    root = tmp_path_factory.mktemp("whole")
    total = len(page_urls(pages))
    theirs_crawl = make("addon", "jsonl", root, "addon", False, total, theirs)
    ours = make("project", "csv", root, "project", False, total, theirs)
    for crawl in (theirs_crawl, ours):
        assert start(crawl, server, root / f"{crawl.out.stem}.log").wait(timeout=180) == 0
    with open(ours.out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {"url", "title", "score", "order"} <= set(rows[0])
    assert sorted(int(r["order"]) for r in rows) == list(range(1, total + 1))
    found = {"addon": {p["url"] for p in theirs_crawl.pages()}, "project": {r["url"] for r in rows}}
    assert found["addon"] == found["project"] == page_urls(pages)
    return found


@pytest.mark.parametrize("kind, fmt", [("addon", "jsonl"), ("addon", "parquet"),
                                       ("project", "parquet")])
def test_killed_and_stopped_at_random_points_no_page_lost_none_twice(
        kind, fmt, server, pages, theirs, uninterrupted, tmp_path) -> None:
    total = len(page_urls(pages))
    seed = zlib.crc32(f"{kind}-{fmt}".encode())
    stops = plan(random.Random(seed), total)
    crawl = make(kind, fmt, tmp_path, "parts", True, total, theirs)
    log = tmp_path / "parts.log"
    run_interrupted(crawl, server, log, stops)

    print(f"\n{kind} {fmt} (seed {seed}):",
          ", ".join(f"{s.signal.name} at {s.at} {s.by} ({s.written_then} written)"
                    for s in stops))
    urls = [p["url"] for p in crawl.pages()]
    assert len(urls) == len(set(urls)), "a page written twice"
    assert set(urls) == uninterrupted[kind], "a page lost"
    assert all(p["title"] for p in crawl.pages())
    assert all(s.written_then < total for s in stops)  # each signal landed mid-crawl
    assert log.read_text().count("Spider closed (shutdown)") == 1  # the clean stop

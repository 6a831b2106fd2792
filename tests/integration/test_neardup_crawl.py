"""Near-duplicates in real crawls of a loopback web with known copies
(tests/support/neardup_web.py): one process, drop and off, bad settings, a kill -9 and resume,
two distributed workers on a real redis-server, and the learned order on a mirror host."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
import pytest_twisted

from focuscrawl.demo.webserver import ServerProcess
from focuscrawl.seam.signals import START_ERROR_STAT
from tests.support import neardup_web
from tests.support.crashsafe import kill_at
from tests.support.distributed import Cluster
from tests.support.jobdir_site import read_lines, start_crawl
from tests.support.project import crawl, project_settings
from tests.support.redis_server import redis_server_fixture  # noqa: F401 - the redis_server fixture

ROOT = Path(__file__).resolve().parents[2]
WEB, GROUP = neardup_web.build()
PAGES = len(GROUP)
PRECISION, RECALL = 0.95, 0.9  # the goals at the default threshold


@pytest.fixture(scope="module")
def web():
    with ServerProcess(pages=WEB) as srv:
        yield srv


def settings(**overrides):
    return project_settings(FOCUS_DELAY=0, FOCUS_CONCURRENCY_PER_SERVER=2, **overrides)


ARGS = {"keywords": neardup_web.KEYWORDS, "seeds": neardup_web.SEED_URL,
        "strategy": "breadth-first", "max_pages": str(PAGES + 10)}


@pytest_twisted.ensureDeferred
async def test_one_process_marks_the_copies(web, proxy_to):
    proxy_to(web)
    result = await crawl(settings(), **ARGS)
    items = result.items
    assert {i["url"] for i in items} == set(GROUP)  # the whole web, each page once
    precision, recall, evidence = neardup_web.precision_recall(items, GROUP)
    assert precision >= PRECISION and recall >= RECALL, evidence
    marked = [i for i in items if i["duplicate_of"]]
    assert result.stats["focus/near_duplicates"] == len(marked)
    # an original precedes its copies in the output, and is no copy itself
    position = {i["url"]: n for n, i in enumerate(items)}
    assert all(position[i["duplicate_of"]] < position[i["url"]] for i in marked)
    assert not any(i["duplicate_of"] for i in items if i["url"] in
                   {m["duplicate_of"] for m in marked})
    # distinct relevant pages only in the harvest
    relevant = [i for i in items if i["score"] >= 0.1]
    assert result.stats["focus/relevant_pages"] == sum(
        1 for i in relevant if not i["duplicate_of"]) < len(relevant)


@pytest_twisted.ensureDeferred
async def test_drop_leaves_the_copies_out(web, proxy_to):
    proxy_to(web)
    dropped = await crawl(settings(FOCUS_NEAR_DUPLICATES="drop"), **ARGS)
    kept = Counter(GROUP[i["url"]] for i in dropped.items)
    copies = neardup_web.expected_copies(GROUP, GROUP)
    left_in = sum(n - 1 for n in kept.values())
    assert left_in <= (1 - RECALL) * copies, kept  # one page of (nearly) each group
    lost = len(set(GROUP.values())) - len(kept)  # a page wrongly taken for a copy, and dropped
    assert lost <= (1 - PRECISION) * copies, kept
    assert dropped.stats["focus/near_duplicates/dropped"] == PAGES - len(dropped.items)
    # the content (content=text, the default) is extracted for the pages exported alone
    assert dropped.stats["focus/content/extracted"] == len(dropped.items)


@pytest_twisted.ensureDeferred
async def test_a_bad_setting_stops_the_crawl_at_start_with_one_line(web, proxy_to, caplog):
    """Refused as every setting is (``focuscrawl.seam.outcome``: ``scrapy crawl`` exits 1)."""
    proxy_to(web)
    result = await crawl(settings(FOCUS_NEAR_DUPLICATES="keep"), **ARGS)
    assert not result.items and result.stats["finish_reason"] == "bad_settings"
    assert "FOCUS_NEAR_DUPLICATES='keep'" in result.stats[START_ERROR_STAT]
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "give one of mark, drop, off" in errors[0].getMessage()


def test_a_crawl_resumed_after_kill_9_still_knows_the_pages_exported_before(web, tmp_path):
    """kill -9 half-way through a JOBDIR crawl, then the same command: the pages exported
    before the kill are in the resumed crawl's index (kept in JOBDIR), so their copies fetched
    after it are marked, and the output has each page once."""
    out, jobdir, log = tmp_path / "out.jsonl", tmp_path / "job", tmp_path / "log.txt"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-o", str(out),
           "-s", f"JOBDIR={jobdir}", "-s", "FOCUS_DELAY=0", "-s", "LOG_LEVEL=INFO",
           *[a for k, v in ARGS.items() for a in ("-a", f"{k}={v}")]]
    first = start_crawl(cmd, web, log)
    kill_at(first, out, PAGES // 2)
    before = {i["url"] for i in read_lines(out)}
    second = start_crawl(cmd, web, log)
    assert second.wait(timeout=120) == 0, log.read_text()[-3000:]
    items = read_lines(out)
    assert sorted(i["url"] for i in items) == sorted(GROUP)
    precision, recall, evidence = neardup_web.precision_recall(items, GROUP)
    assert precision >= PRECISION and recall >= RECALL, evidence
    # copies found after the kill of pages exported before it: only the kept index knew them
    across = [i for i in items if i["url"] not in before and i["duplicate_of"] in before]
    assert across, (len(before), evidence)


@pytest.fixture
def workers(request, redis_server, tmp_path):
    pages, _ = neardup_web.build(seed_delay_ms=3000)  # the crawl shared by both workers
    with ServerProcess(pages=pages) as slow_seed:
        made = Cluster(slow_seed, redis_server.url, tmp_path, f"{request.node.name}:")
        yield made
        made.kill_all()


def test_two_distributed_workers_mark_the_copies(workers):
    """Two workers through one redis-server, fetching a group's pages side by side: the goals
    of one process, and copies found of pages the other worker exported."""
    procs = workers.start(2, "-a", f"keywords={neardup_web.KEYWORDS}",
                          "-a", f"seeds={neardup_web.SEED_URL}", "-a", "strategy=breadth-first",
                          "-a", f"max_pages={PAGES + 10}", "-s", "FOCUS_DELAY=0.05",
                          "-s", "FOCUS_CONCURRENCY_PER_SERVER=2")
    assert workers.wait(procs, timeout=180) == [0, 0], workers.tails()
    parts = [workers.exported(i) for i in range(2)]
    items = [i for part in parts for i in part]
    assert all(parts), "the crawl was not shared"
    assert sorted(i["url"] for i in items) == sorted(GROUP)
    precision, recall, evidence = neardup_web.precision_recall(items, GROUP)
    assert precision >= PRECISION and recall >= RECALL, evidence
    # marks across workers: a worker's copy names a page the other exported
    urls = [{i["url"] for i in part} for part in parts]
    assert any(i["duplicate_of"] in urls[1 - w] for w, part in enumerate(parts)
               for i in part if i["duplicate_of"]), "no copy found across workers"


@pytest.fixture(scope="module")
def mirrored():
    with ServerProcess(pages=neardup_web.mirror_web()) as srv:
        yield srv


@pytest_twisted.ensureDeferred
async def test_the_learned_order_stops_spending_the_budget_on_a_mirror_host(mirrored, proxy_to):
    """A site's articles each link to their copy on a mirror host and to a distinct article
    elsewhere.  Told that the mirror's pages are near-copies (labelled "nothing new"), the
    learned order fetches fewer of them than when near-duplicates are off, and finds more
    distinct relevant pages in the same budget."""
    proxy_to(mirrored)
    args = {"keywords": neardup_web.KEYWORDS, "seeds": "http://a.test/index.html",
            "max_pages": "40"}
    mirror, distinct = {}, {}
    for mode in ("off", "mark"):
        result = await crawl(settings(FOCUS_NEAR_DUPLICATES=mode, CONCURRENT_REQUESTS=1), **args)
        assert len(result.items) == 40
        if mode == "off":  # nothing compared, nothing marked
            assert not any(i["duplicate_of"] for i in result.items)
            assert "focus/near_duplicates" not in result.stats
        # a mirror page is the same article as the site's page of the same path
        articles = {(i["url"].split("/")[2].replace("mirror.test", "a.test"),
                     i["url"].rsplit("/", 1)[1]) for i in result.items if i["score"] >= 0.1}
        mirror[mode] = sum(1 for i in result.items if "//mirror.test/" in i["url"])
        distinct[mode] = len(articles)
        if mode == "mark":
            assert result.stats["focus/relevant_pages"] == distinct[mode]
    assert mirror["mark"] <= mirror["off"] - 3 and distinct["mark"] > distinct["off"], (
        mirror, distinct)

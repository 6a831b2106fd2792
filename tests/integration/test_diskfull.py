"""Issue 14, fault 2: the disk fills during a JOBDIR crawl.

The crawl must stop with one clear line (finish reason ``disk_full``, exit status 1, no
traceback), leave no torn line, and the same command run again once space is freed must end with
the pages of an undisturbed crawl, each written once -- the standard of the kill -9 test
(``test_crashsafe``): at most the pages in flight when the disk filled are fetched twice.

The full disk is injected (``tests/support/enospc/sitecustomize.py`` on the crawl's
PYTHONPATH): a real small filesystem needs mount privileges CI may not have.  The feed gets a
short write then ENOSPC, as write(2) does on a disk filling mid-line; the journal gets SQLite's
own SQLITE_FULL from a page limit.
"""

from __future__ import annotations

import errno
import io
import os
import re
import sqlite3
import time
from pathlib import Path

import pytest

from focuscrawl.demo.webserver import ServerProcess
from focuscrawl.seam.output.diskfull import is_disk_full
from focuscrawl.seam.output.feeds import LineFile
from focuscrawl.seam.persistence.jobdir import STATE_FILE, JournalStore
from tests.support.jobdir_site import (
    crawl_command,
    page_fetches,
    page_urls,
    read_lines,
    site,
    start_crawl,
)

INJECT = Path(__file__).resolve().parents[1] / "support" / "enospc"
CONCURRENCY = 8
SETTINGS = {"CONCURRENT_REQUESTS": CONCURRENCY, "FOCUS_CONCURRENCY_PER_SERVER": 2}


# --------------------------------------------------------------------------- the parts
def test_a_full_journal_halts_at_its_last_commit(tmp_path):
    path = tmp_path / STATE_FILE
    store = JournalStore(path, commit_every=10_000, commit_seconds=3600)
    told = []
    store.on_full = lambda p, e: told.append((p, e))
    store.record("op", 0)
    store.commit()
    store._db.execute("PRAGMA max_page_count = 5")  # SQLite's own SQLITE_FULL beyond it
    for i in range(1, 200):
        store.record("op", i, "x" * 2000)
    store.commit()  # does not raise
    assert store.halted and len(told) == 1
    assert told[0][0] == str(path) and is_disk_full(told[0][1])
    store.record("op", 999)  # nothing more is written
    store.snapshot({"n": 1})
    store.close()
    again = JournalStore(path)
    assert again.load() == (None, [("op", 0)])  # the last commit, as a kill leaves it
    again.close()


def test_other_store_errors_are_raised(tmp_path):
    store = JournalStore(tmp_path / STATE_FILE)
    store.on_full = lambda p, e: pytest.fail("not a full disk")
    store._db.execute("CREATE TRIGGER no BEFORE INSERT ON journal BEGIN "
                      "SELECT RAISE(ABORT, 'refused'); END")
    store.record("op")
    with pytest.raises(sqlite3.IntegrityError):
        store.commit()


class _Disk(io.FileIO):
    """write(2) on a disk with room for ``room`` bytes of this file: short, then ENOSPC."""

    room = 0

    def write(self, data):  # type: ignore[override]
        free = self.room - os.fstat(self.fileno()).st_size
        if free <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.name)
        return super().write(memoryview(data).cast("B")[:free])


class _FillingLineFile(LineFile, _Disk):
    room = 20


def test_a_line_cut_short_by_a_full_disk_is_taken_back(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"url": "a"}\n')
    f = _FillingLineFile(str(path), "ab")
    with pytest.raises(OSError) as raised:
        f.write(b'{"url": "b"}\n')  # 7 bytes fit, then the disk is full
    assert is_disk_full(raised.value)
    assert path.read_bytes() == b'{"url": "a"}\n'  # the half line was cut off again
    f.close()


# --------------------------------------------------------------------------- end to end
FAULTS = {
    # the feed fills (short write, then ENOSPC) after about 40 of the 150 lines
    "feed": {"FOCUS_TEST_FEED_ROOM": "14000"},
    # the JOBDIR database may not grow beyond 10 pages of 4 KiB: SQLite's SQLITE_FULL
    "journal": {"FOCUS_TEST_JOURNAL_PAGES": "10"},
}
REPORT: list[tuple[str, str, int, int]] = []


@pytest.fixture(scope="module")
def server():
    with ServerProcess(pages=site(), delay_ms=5) as srv:
        yield srv


@pytest.fixture(scope="module")
def undisturbed(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("whole")
    out = tmp / "whole.jsonl"
    cmd = crawl_command(out, tmp / "job", len(page_urls(site())), **SETTINGS)
    assert start_crawl(cmd, server, tmp / "whole.log").wait(timeout=180) == 0
    return read_lines(out)


def _run(cmd, server, log: Path, env: dict[str, str]) -> tuple[int, float, float, str]:
    """One run of ``cmd``: exit status, its window on the server's clock, its own log."""
    before = log.stat().st_size if log.exists() else 0
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # start_crawl copies os.environ
    try:
        started = time.time()
        proc = start_crawl(cmd, server, log)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    code = proc.wait(timeout=180)
    return code, started, time.time(), log.read_bytes()[before:].decode("utf-8", "replace")


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_full_disk_stops_the_crawl_and_the_same_command_resumes(
        server, undisturbed, tmp_path, fault):
    everything = page_urls(site())
    out, jobdir, log = tmp_path / "out.jsonl", tmp_path / "job", tmp_path / "crawl.log"
    cmd = crawl_command(out, jobdir, len(everything), **SETTINGS)
    full_path = str(out) if fault == "feed" else str(jobdir / STATE_FILE)

    # 1. the disk fills
    paths = [str(INJECT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    inject = {"PYTHONPATH": os.pathsep.join(paths), **FAULTS[fault]}
    code, start1, end1, text = _run(cmd, server, log, inject)
    assert code == 1, text[-3000:]
    errors = [line for line in text.splitlines() if re.search(r"\] (ERROR|CRITICAL):", line)]
    assert len(errors) == 1, errors
    assert full_path in errors[0] and "the disk is full" in errors[0]
    assert "Free space on that disk, then run the same command again" in errors[0]
    assert "Traceback" not in text
    assert "'finish_reason': 'disk_full'" in text
    first = read_lines(out)  # whole lines only
    assert 0 < len(first) < len(everything), "the disk did not fill mid-crawl"

    # 2. space freed: the same command, without the fault
    code, start2, end2, text = _run(cmd, server, log, {})
    assert code == 0, text[-3000:]
    assert "resumed with" in text
    assert not [line for line in text.splitlines() if "] ERROR:" in line]

    rows = server.read_log()
    runs = [page_fetches([r for r in rows if s <= r["time_epoch"] < e])
            for s, e in ((start1, end1), (start2, end2))]
    for fetched in runs:
        assert max(fetched.values(), default=1) == 1  # within one run, never twice
    twice = sorted(set(runs[0]) & set(runs[1]))
    assert len(twice) <= CONCURRENCY, twice  # only what was in flight when the disk filled

    pages = read_lines(out)
    urls = [i["url"] for i in pages]
    assert len(urls) == len(set(urls))  # no page written twice
    assert set(urls) == {i["url"] for i in undisturbed} == everything  # none lost
    assert sorted(i["order"] for i in pages) == list(range(1, len(everything) + 1))
    REPORT.append((f"disk full in the {fault}", f"stopped after {len(first)} lines, exit 1",
                   len(everything) - len(set(urls)), len(twice)))
    print("\nfault | what happened | pages lost | pages fetched twice")
    for row in REPORT:
        print(" | ".join(str(x) for x in row))

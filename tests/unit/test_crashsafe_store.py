"""Crash safety without a crawl: the journal store's commits, the feed's torn line, the line
file's one write (the replays and the kill -9 crawls: tests/integration/test_crashsafe.py)."""

from __future__ import annotations

import io
import json
import sqlite3

import pytest

from focuscrawl.core.frontier.stores import SQLiteStore, StoreError
from focuscrawl.seam.output.feeds import LineFile, SafeJsonLinesExporter, repair, written_urls
from focuscrawl.seam.output.items import PageItem


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

"""Parquet feeds without a crawl: the schema rule, row groups, the atomic write, and the exporter
staging rows crash-safely (kill -9 and resume through ``scrapy crawl``:
tests/integration/test_feeds_killed.py)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from focuscrawl.seam.output import parquet
from focuscrawl.seam.output.feeds import LineFile, ParquetItemExporter, parquet_rows_path
from focuscrawl.seam.output.items import ExplainedPageItem, PageItem


def page(url: str, **fields: Any) -> PageItem:
    values: dict[str, Any] = dict(url=url, status=200, title="t", score=0.5, hot=False, depth=1,
                                  parent=None, anchor="", fetched_at="2026-12-07T00:00:00Z",
                                  content_type="text/html", text_length=1, outlinks=0, order=1,
                                  priority=0.0)
    values.update(fields)
    return PageItem(**values)


def rows_file(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_column_types_are_stable_across_rows_and_extra_fields_become_text(tmp_path) -> None:
    rows = [
        {"url": "u1", "n": 1, "x": None, "why": {"anchor": 0.5}, "lang": "en"},
        {"url": "u2", "n": 2.5, "x": None, "mixed": 3},
        {"url": "u3", "mixed": "three", "flag": True, "tags": ["a", "b"]},
    ]
    target = tmp_path / "out.parquet"
    assert parquet.write_parquet(rows_file(tmp_path, rows), target) == 3
    table = pq.read_table(target)
    assert table.schema == pa.schema([
        ("url", pa.string()), ("n", pa.float64()), ("x", pa.string()), ("why", pa.string()),
        ("lang", pa.string()), ("mixed", pa.string()), ("flag", pa.bool_()),
        ("tags", pa.string())])
    got = table.to_pylist()
    assert [r["n"] for r in got] == [1.0, 2.5, None]  # ints and floats: float64
    assert json.loads(got[0]["why"]) == {"anchor": 0.5}  # a dict: its JSON text
    assert [r["mixed"] for r in got] == [None, "3", "three"]  # a mix: text
    assert json.loads(got[2]["tags"]) == ["a", "b"]
    assert got[1]["lang"] is None and got[2]["x"] is None  # absent or None: null


def test_a_declared_field_keeps_its_type_when_every_value_is_none(tmp_path) -> None:
    declared = parquet.declared_kinds(ExplainedPageItem)
    assert declared["relevance"] == "float" and declared["parent"] == "string"
    assert declared["why"] == "json" and declared["order"] == "int"
    rows = [{"url": "u", "relevance": None, "parent": None}]
    target = tmp_path / "out.parquet"
    parquet.write_parquet(rows_file(tmp_path, rows), target, declared)
    assert pq.read_schema(target).field("relevance").type == pa.float64()


def test_large_files_are_written_a_row_group_at_a_time(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(parquet, "GROUP_ROWS", 100)
    rows = [{"url": f"u{i}", "i": i} for i in range(250)]
    target = tmp_path / "out.parquet"
    assert parquet.write_parquet(rows_file(tmp_path, rows), target) == 250
    meta = pq.ParquetFile(target).metadata
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [100, 100, 50]
    assert [r["i"] for r in parquet.read_rows(target)] == list(range(250))


def test_the_target_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch) -> None:
    target = tmp_path / "out.parquet"
    parquet.write_parquet(rows_file(tmp_path, [{"url": "old"}]), target)

    def fail(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(parquet, "_cell", fail)  # fails half-way through the new file
    with pytest.raises(OSError):
        parquet.write_parquet(rows_file(tmp_path, [{"url": "new"}]), target)
    assert [r["url"] for r in parquet.read_rows(target)] == ["old"]


def test_an_empty_feed_is_a_valid_empty_file(tmp_path) -> None:
    target = tmp_path / "out.parquet"
    assert parquet.write_parquet(rows_file(tmp_path, []), target) == 0
    assert pq.read_table(target).num_rows == 0


def test_the_exporter_stages_rows_skips_pages_written_and_writes_parquet(tmp_path) -> None:
    target = tmp_path / "pages.parquet"
    rows = parquet_rows_path(target)
    # a killed run left two rows, the last one torn
    rows.write_bytes(b'{"url": "http://a.test/1"}\n{"url": "http://a.test/2"}\n{"url": "ht')
    from focuscrawl.seam.output.feeds import repair, written_urls

    repair(rows)
    urls, _ = written_urls(rows)
    f = LineFile(str(rows), "ab", written=urls)
    f.focus_parquet = target
    exporter = ParquetItemExporter(f)
    exporter.start_exporting()
    for url in ("http://a.test/2", "http://a.test/3"):  # 2 fetched again after the kill
        exporter.export_item(page(url))
    exporter.finish_exporting()
    table = pq.read_table(target)
    assert table.column("url").to_pylist() == [
        "http://a.test/1", "http://a.test/2", "http://a.test/3"]
    assert table.schema.field("score").type == pa.float64()  # declared, though two rows lack it
    assert not rows.exists()  # every row is in the Parquet file now


@dataclass
class Other:
    url: str
    size: int | None = None


def test_any_other_storage_gets_the_parquet_file_written_into_it(tmp_path) -> None:
    sink = io.BytesIO()
    exporter = ParquetItemExporter(sink)
    exporter.start_exporting()
    exporter.export_item(Other("http://a.test/1"))
    exporter.export_item({"url": "http://a.test/2", "size": 7})
    exporter.finish_exporting()
    table = pq.read_table(io.BytesIO(sink.getvalue()))
    assert table.to_pylist() == [{"url": "http://a.test/1", "size": None},
                                 {"url": "http://a.test/2", "size": 7}]
    assert table.schema.field("size").type == pa.int64()


def test_appending_to_a_finished_file_keeps_its_rows(tmp_path) -> None:
    """``-o pages.parquet`` onto a file a crawl finished: its rows first, then the new ones."""
    from focuscrawl.seam.output.feeds import SafeFileFeedStorage

    target = tmp_path / "pages.parquet"
    parquet.write_parquet(rows_file(tmp_path, [{"url": "http://a.test/old", "score": 1}]),
                          target)
    storage = SafeFileFeedStorage(target.as_uri(), feed_options={"format": "parquet"})
    assert storage.write_mode == "ab"  # -o, not -O
    exporter = ParquetItemExporter(storage.open(spider=None))  # type: ignore[arg-type]
    exporter.start_exporting()
    exporter.export_item(page("http://a.test/new", score=0.25))
    exporter.finish_exporting()
    got = [(r["url"], r["score"]) for r in parquet.read_rows(target)]
    assert got == [("http://a.test/old", 1.0), ("http://a.test/new", 0.25)]
    assert not parquet_rows_path(target).exists()

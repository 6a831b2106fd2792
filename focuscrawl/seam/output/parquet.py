"""Parquet from a JSON-lines file of rows: the schema rule, written row group by row group.

A Parquet file has its footer at the end, so it cannot be grown one row at a time and survive a
kill.  The feed stages its rows crash-safely as JSON lines (``focuscrawl.seam.output.feeds``)
and this module writes the Parquet file from them when the crawl stops, into a temporary file
renamed over the target: the target is always a whole file, the old one or the new one.

The schema rule (the same for every row of a file):

* one column per field any row has, in the order fields first appear;
* a field's type is what its values are: ``bool``, ``int64``, ``float64`` (ints and floats
  mixed), ``string``; a field declared by the item's class (a dataclass annotation such as
  ``float | None``) has that type even where every value is None;
* lists, dicts and any mix of other types are ``string`` columns holding the value's JSON text
  (strings as they are), so an unknown or extra field never stops the file;
* None is null; a field a row lacks is null in that row.

Memory: two passes over the rows file, the first keeping one type per column, the second a
row group (:data:`GROUP_ROWS` rows or :data:`GROUP_BYTES` of JSON, whichever comes first) at
a time.  No Scrapy import.
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

GROUP_ROWS = 10_000
GROUP_BYTES = 64 * 1024 * 1024
COMPRESSION = "zstd"  # smaller than Parquet's usual snappy on text; every current reader has it

# column kinds, joined over a column's values: None (no value yet) < the others; "json" absorbs
KINDS = ("bool", "int", "float", "string", "json")


def kind_of(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "json"


def join(a: str | None, b: str | None) -> str | None:
    if a is None or a == b:
        return b
    if b is None:
        return a
    if {a, b} == {"int", "float"}:
        return "float"
    return "json"


def declared_kinds(cls: type) -> dict[str, str]:
    """A dataclass item's field -> kind, from its annotations (``float | None`` -> float)."""
    if not dataclasses.is_dataclass(cls):
        return {}
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):  # an annotation that cannot be resolved: values decide
        return {}
    kinds: dict[str, str] = {}
    for f in dataclasses.fields(cls):
        hint = hints.get(f.name)
        args = [a for a in typing.get_args(hint) if a is not type(None)] if isinstance(
            hint, types.UnionType) or typing.get_origin(hint) is typing.Union else [hint]
        simple = {bool: "bool", int: "int", float: "float", str: "string"}
        kinds[f.name] = simple.get(args[0], "json") if len(args) == 1 else "json"  # type: ignore[arg-type]
    return kinds


def _rows(path: Path) -> Iterator[tuple[dict[str, Any], int]]:
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                yield json.loads(line), len(line)


def schema_of(path: Path, declared: dict[str, str] | None = None) -> dict[str, str]:
    """Column -> kind over every row of the JSON-lines file (first pass)."""
    declared = declared or {}
    columns: dict[str, str | None] = {}
    for row, _ in _rows(path):
        for name, value in row.items():
            if name not in columns:
                columns[name] = declared.get(name)
            columns[name] = join(columns[name], kind_of(value))
    return {name: kind or "string" for name, kind in columns.items()}  # all None: string


def _cell(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "float":
        return float(value)
    if kind == "json":
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return value


def write_parquet(rows: Path, target: Path | IO[bytes],
                  declared: dict[str, str] | None = None) -> int:
    """Write the rows of JSON-lines file ``rows`` as Parquet to ``target``: a path (written
    to a temporary file beside it, then renamed over it) or a binary file.  Returns rows."""
    import pyarrow as pa

    arrow = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(),
             "string": pa.string(), "json": pa.string()}
    kinds = schema_of(rows, declared)
    schema = pa.schema([(name, arrow[kind]) for name, kind in kinds.items()])
    if not isinstance(target, Path):
        return _write(rows, target, schema, kinds)
    tmp = target.with_name(target.name + ".tmp")
    try:
        total = _write(rows, str(tmp), schema, kinds)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())  # the rename must not point at blocks not yet on disk
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, target)
    return total


def _write(rows: Path, sink: Any, schema: Any, kinds: dict[str, str]) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    total = 0
    group: list[dict[str, Any]] = []
    size = 0
    with pq.ParquetWriter(sink, schema, compression=COMPRESSION) as writer:
        for row, length in _rows(rows):
            group.append(row)
            size += length
            if len(group) >= GROUP_ROWS or size >= GROUP_BYTES:
                _flush(writer, group, schema, kinds, pa)
                total += len(group)
                group, size = [], 0
        if group:
            _flush(writer, group, schema, kinds, pa)
            total += len(group)
    return total


def _flush(writer: Any, group: list[dict[str, Any]], schema: Any, kinds: dict[str, str],
           pa: Any) -> None:
    columns = {name: [_cell(r.get(name), kind) for r in group] for name, kind in kinds.items()}
    writer.write_table(pa.table(columns, schema=schema), row_group_size=len(group))


def read_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a Parquet file, a row group at a time (to stage a file a crawl appends to)."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(str(path))
    for batch in parquet.iter_batches():
        yield from batch.to_pylist()

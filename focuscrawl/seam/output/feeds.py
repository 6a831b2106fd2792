"""Crash-safe JSON-lines output: whole lines only, a torn tail repaired, no duplicate on resume.

Scrapy's file feed writes through a buffer: a kill -9 loses the buffered items and can leave half
a line.  These two classes replace Scrapy's for local files and the ``jsonlines`` format (see
FEED_STORAGES / FEED_EXPORTERS in ``settings``), so ``-o out.jsonl`` gets them:

* :class:`SafeFileFeedStorage` opens a JSON-lines file unbuffered.  In append mode it first cuts
  a torn last line (the one a kill interrupted) and, with JOBDIR, reads the URLs already written.
  On a resumed JOBDIR crawl it appends even under ``-O``: overwriting would throw away the pages
  the first run wrote.  (``-O`` still starts a new file for a new JOBDIR.)
* :class:`SafeJsonLinesExporter` writes each item as one ``write()`` of a complete line
  (``os.write`` until done; ``fsync`` too with FOCUS_FEED_FSYNC) and skips an item whose URL
  the file already holds: a page fetched again after a kill is not written twice.

The line is in the file before ``item_scraped`` returns, and the scheduler only journals a page
as done after that (``focuscrawl.seam.middlewares.journal``): a page written but not journaled is
fetched again and skipped here; a page journaled is always written.  Other formats and storages
are Scrapy's, unchanged.

A full disk (ENOSPC, or a quota): the line being written is cut back off the file (a write that
stopped half-way would leave a torn line; should even the cut fail, the next run's repair cuts
it), and the exporter writes nothing more and stops the crawl
(``focuscrawl.seam.output.diskfull``) before the page is journaled as done, so the resumed crawl
fetches and writes it again. When the journal's disk fills first, the exporter stops writing as
well: a line is only written for a page whose crawl order is durable.
"""

from __future__ import annotations

import io
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exporters import JsonLinesItemExporter
from scrapy.extensions.feedexport import FileFeedStorage

from focuscrawl import config
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.output.diskfull import is_disk_full, stop_crawl
from focuscrawl.seam.output.parquet import declared_kinds, read_rows, write_parquet
from focuscrawl.seam.services import FocusServices

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

JSONLINES_FORMATS = frozenset({"jsonlines", "jsonl", "jl"})
PARQUET_FORMATS = frozenset({"parquet"})


def parquet_rows_path(target: Path) -> Path:
    """Where a Parquet feed's rows are staged while the crawl runs: ``pages.parquet`` ->
    ``pages.parquet.rows.jsonl``, beside it (gone once the Parquet file is written)."""
    return target.with_name(target.name + ".rows.jsonl")


class LineFile(io.FileIO):
    """An unbuffered file whose ``write`` puts the whole buffer in the file before returning."""

    def __init__(self, path: str, mode: str, *, fsync: bool = False,
                 written: set[str] | None = None) -> None:
        super().__init__(path, mode)
        self.fsync = fsync
        self.focus_written = written  # URLs in the file (None: do not deduplicate)
        self.focus_parquet: Path | None = None  # the Parquet file these rows are staged for

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        total = len(view)
        start = self.tell()
        try:
            while view:
                n = super().write(view)
                if n is None:  # pragma: no cover - only for non-blocking files
                    continue
                view = view[n:]
            if self.fsync:
                os.fsync(self.fileno())
        except OSError:
            self._cut(start)
            raise
        return total

    def _cut(self, start: int) -> None:
        """Take back a partly written line (a failed write): the file ends at ``start``."""
        try:
            if os.fstat(self.fileno()).st_size > start:
                os.ftruncate(self.fileno(), start)  # frees space: works on a full disk
            self.seek(start)
        except OSError:  # pragma: no cover - the next run's repair() cuts the torn line
            pass


def repair(path: str | os.PathLike[str]) -> int:
    """Cut a torn last line (no final newline) off a JSON-lines file; return bytes removed."""
    with open(path, "r+b") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return 0
        # find the last newline, reading backwards in blocks
        pos, block = size, 65536
        keep = 0
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                keep = start + i + 1
                break
            pos = start
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
        return size - keep


def item_key(item: Any) -> str | None:
    """What makes a line one of its own: the page's URL; a continuous crawl's later version of
    a page and its gone line add to it (``focuscrawl.seam.revisit``)."""
    url = item.get("url")
    if not isinstance(url, str):
        return None
    if item.get("gone"):
        return f"{url} gone"
    version = item.get("version")
    return f"{url} v{version}" if isinstance(version, int) and version > 1 else url


def written_urls(path: str | os.PathLike[str]) -> tuple[set[str], int]:
    """The keys (:func:`item_key`: URLs, with versions) of a JSON-lines file's items, and the
    number of unreadable lines."""
    urls: set[str] = set()
    bad = 0
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                value = item_key(json.loads(line))
            except (ValueError, AttributeError):
                bad += 1
                continue
            if value is not None:
                urls.add(value)
    return urls, bad


class SafeFileFeedStorage(FileFeedStorage):
    """Scrapy's local file storage; JSON-lines feeds are opened crash-safe (see module doc)."""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None,
                 crawler: Crawler | None = None) -> None:
        super().__init__(uri, feed_options=feed_options)
        self.feed_options = feed_options or {}
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler, uri: str, *,
                     feed_options: dict[str, Any] | None = None) -> SafeFileFeedStorage:
        return cls(uri, feed_options=feed_options, crawler=crawler)

    def open(self, spider: Spider) -> IO[bytes]:
        fmt = self.feed_options.get("format")
        if fmt not in JSONLINES_FORMATS and fmt not in PARQUET_FORMATS:
            return super().open(spider)
        crawler = self.crawler
        settings = crawler.settings if crawler is not None else None
        jobdir = bool(settings and settings.get("JOBDIR"))
        services = crawler.get_extension(FocusServices) if crawler is not None else None
        resumed = services is not None and services.lifecycle.resumed
        target = Path(self.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        overwrite = self.write_mode == "wb" and not resumed
        if self.write_mode == "wb" and resumed:
            logger.info("Resumed crawl: appending to %s instead of overwriting it", target)
        # Parquet: the rows are staged as JSON lines beside the file (see parquet_rows_path)
        path = parquet_rows_path(target) if fmt in PARQUET_FORMATS else target
        if fmt in PARQUET_FORMATS and not overwrite and not path.exists() and target.exists():
            self._stage(target, path)  # appending to a finished Parquet file: its rows first
        written: set[str] | None = set() if jobdir else None
        if not overwrite and path.exists():
            torn = repair(path)
            if torn:
                logger.warning("%s: cut a torn last line (%d bytes) left by a crash", path, torn)
                self._inc("focus/feed/torn_bytes_cut", torn)
            if written is not None:
                urls, bad = written_urls(path)
                written |= urls
                if bad:
                    self._inc("focus/feed/unreadable_lines", bad)
                self._inc("focus/feed/items_already_written", len(urls))
        fsync = bool(settings and config.get(settings, "FOCUS_FEED_FSYNC"))
        file = LineFile(str(path), "wb" if overwrite else "ab", fsync=fsync, written=written)
        if fmt in PARQUET_FORMATS:
            file.focus_parquet = target
        return file

    @staticmethod
    def _stage(parquet: Path, rows: Path) -> None:
        staging = rows.with_name(rows.name + ".tmp")
        with open(staging, "wb") as f:
            for row in read_rows(parquet):
                f.write(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(staging, rows)

    def _inc(self, key: str, count: int) -> None:
        if self.crawler is not None and self.crawler.stats is not None:
            self.crawler.stats.inc_value(key, count)


class SafeJsonLinesExporter(JsonLinesItemExporter):
    """JSON lines, one complete line per ``write()``; an item already in the file is skipped."""

    def __init__(self, file: Any, *, crawler: Crawler | None = None, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self.crawler = crawler
        self.full = False  # the disk filled: nothing more is written
        if crawler is not None:
            # the journal's disk filled: a page's crawl order may no longer be durable, so its
            # item must not be written either (the resumed crawl fetches and writes it)
            crawler.signals.connect(self._disk_full, signal=focus_signals.disk_full)

    def _disk_full(self, **kwargs: Any) -> None:
        self.full = True

    @classmethod
    def from_crawler(cls, crawler: Crawler, file: Any, *args: Any,
                     **kwargs: Any) -> SafeJsonLinesExporter:
        return cls(file, *args, crawler=crawler, **kwargs)

    def export_item(self, item: Any) -> None:
        written: set[str] | None = getattr(self.file, "focus_written", None)
        url = item_key(ItemAdapter(item)) if written is not None else None
        if url is not None and url in written:  # type: ignore[operator]
            if self.crawler is not None and self.crawler.stats is not None:
                self.crawler.stats.inc_value("focus/feed/duplicates_skipped")
            return
        if self.full:
            return
        try:
            super().export_item(item)
        except OSError as e:
            if not is_disk_full(e):
                raise
            # not written, so not journaled as done: the resumed crawl fetches it again
            self.full = True
            stop_crawl(self.crawler, getattr(self.file, "name", "the feed"), e)
            return
        if url is not None:
            written.add(url)  # type: ignore[union-attr]


class ParquetItemExporter(SafeJsonLinesExporter):
    """``-o pages.parquet``: rows staged as JSON lines (crash-safe, no duplicate on resume, as
    above), the Parquet file written from them when the feed closes
    (``focuscrawl.seam.output.parquet``: the schema rule).  On a storage other than a local
    file (stdout, S3, FTP) the rows are staged in a temporary file and the Parquet file is
    written to the storage's file at the end."""

    def __init__(self, file: Any, *, crawler: Crawler | None = None, **kwargs: Any) -> None:
        kwargs.pop("indent", None)  # no meaning in Parquet
        target: Path | None = getattr(file, "focus_parquet", None)
        self.target: Path | IO[bytes] = target if target is not None else file
        self.rows = Path(file.name) if target is not None else None
        if self.rows is None:  # not a local feed: a temporary rows file
            staging = tempfile.NamedTemporaryFile(prefix="focuscrawl-", suffix=".rows.jsonl",
                                                  delete=False)  # noqa: SIM115
            self.rows = Path(staging.name)
            staging.close()
            file = LineFile(str(self.rows), "wb")
        super().__init__(file, crawler=crawler, **kwargs)
        self.declared: dict[str, str] = {}
        self.classes: set[type] = set()

    def export_item(self, item: Any) -> None:
        cls = type(item)
        if cls not in self.classes:  # a dataclass item's annotations type its columns
            self.classes.add(cls)
            self.declared = {**declared_kinds(cls), **self.declared}
        super().export_item(item)

    def finish_exporting(self) -> None:
        super().finish_exporting()
        if self.full:  # the disk filled: the rows stay staged for the resumed crawl
            return
        assert self.rows is not None
        count = write_parquet(self.rows, self.target, self.declared)
        logger.info("Parquet: %d rows in %s", count, getattr(self.target, "name", self.target))
        self.file.close()
        self.rows.unlink()  # the Parquet file has every row now

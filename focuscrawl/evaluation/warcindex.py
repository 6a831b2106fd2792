"""An in-memory index of the HTTP responses in a WARC file.  warcio only, no Scrapy import.

Shared by the replay download handler (``focuscrawl.seam.replay``) and by
``Repository.from_warc`` so that both read the same answer for a URL.  The index keeps, per
canonical URL, the status line, headers and file offset of one ``response`` record; bodies stay
on disk and are read back by offset, so a repository of thousands of pages costs a few MB.

Which record answers for a URL that was fetched more than once: the last one, except that a
transient failure (5xx, 408, 429) never replaces an earlier non-transient answer.  A crawl that
got a 503 and then a 200 on retry replays as 200; one that only ever got 503 replays as 503.
A download that failed without any response (``WARC-Focus-Error`` metadata, written by
``focuscrawl.seam.output.warc``) counts only for a URL that has no recorded response at all.

Scanning a large WARC takes a while (every record is decompressed), and a comparison replays the
same WARC in many crawls: the index is kept next to it (``<warc>.focusidx.json``, JSON, written
only for a complete file) and reused while the WARC's size and modification time are unchanged.
"""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import ChunkedDataReader

from .text import canonical_url

logger = logging.getLogger(__name__)

SCORE_HEADER = "WARC-Focus-Score"
HOT_HEADER = "WARC-Focus-Hot"
ERROR_HEADER = "WARC-Focus-Error"  # a fetch that failed without a response: the exception class
TRANSIENT = frozenset({408, 429})
INDEX_SUFFIX = ".focusidx.json"  # the saved index, next to the WARC
INDEX_VERSION = 1


def is_transient(status: int) -> bool:
    """A status that says "try again later" rather than anything about the page."""
    return status >= 500 or status in TRANSIENT


@dataclass(frozen=True)
class WarcResponse:
    """Where one recorded response lives, and its HTTP head."""

    url: str  # WARC-Target-URI as recorded
    status: int
    reason: str
    protocol: str
    headers: tuple[tuple[str, str], ...]
    offset: int
    length: int
    record_id: str
    seq: int  # position among the file's response records (fetch order)

    def header(self, name: str) -> str | None:
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None


def _better(new: WarcResponse, old: WarcResponse | None) -> bool:
    if old is None:
        return True
    return not (is_transient(new.status) and not is_transient(old.status))


def _complete(record: Any) -> bool:
    """Read a record's block to its end; False if the file ends before its Content-Length."""
    stream = record.raw_stream
    want = getattr(stream, "limit", None)
    got = 0
    while True:
        chunk = stream.read(1 << 16)
        if not chunk:
            break
        got += len(chunk)
    return want is None or got >= want


def _payload(record: Any, decode_content: bool) -> bytes:
    """The HTTP body of a record, transfer-encoding undone; content-encoding undone on demand."""
    if decode_content:
        return record.content_stream().read()
    te = (record.http_headers.get_header("Transfer-Encoding") or "").lower()
    if "chunked" in te:
        return ChunkedDataReader(record.raw_stream, decomp_type=None).read()
    return record.raw_stream.read()


class WarcIndex:
    """Response records of a WARC, by canonical URL (fragment dropped).

    Also collects the crawl's relevance scores from ``metadata`` records (or response records)
    that carry a ``WARC-Focus-Score`` header, and the order in which responses were recorded.
    """

    def __init__(self, path: str | os.PathLike[str], *, cache: bool = True) -> None:
        self.path = os.fspath(path)
        self.responses: dict[str, WarcResponse] = {}
        self.scores: dict[str, float] = {}
        self.hot: dict[str, bool] = {}
        self.errors: dict[str, tuple[str, str]] = {}  # URL -> (exception class, url) w/o response
        self.order: list[str] = []  # canonical URL of every response record, in file order
        self.records = 0
        self.truncated = False
        self._fh: BinaryIO | None = None
        if not (cache and self._load()):
            self._scan()
            if cache and not self.truncated:
                self._save()

    # -- the saved index ------------------------------------------------------------------------
    def _key(self) -> list[int]:
        st = os.stat(self.path)
        return [INDEX_VERSION, st.st_size, st.st_mtime_ns]

    def _load(self) -> bool:
        try:
            with open(self.path + INDEX_SUFFIX, encoding="utf-8") as f:
                doc = json.load(f)
            if doc.get("key") != self._key():
                return False
            self.responses = {
                k: WarcResponse(**{**e, "headers": tuple((h, v) for h, v in e["headers"])})
                for k, e in doc["responses"].items()
            }
            self.scores = doc["scores"]
            self.hot = doc["hot"]
            self.errors = {k: (e, u) for k, (e, u) in doc["errors"].items()}
            self.order = doc["order"]
            self.records = doc["records"]
        except (OSError, ValueError, KeyError, TypeError):
            return False
        return True

    def _save(self) -> None:
        doc = {"key": self._key(), "records": self.records, "order": self.order,
               "scores": self.scores, "hot": self.hot, "errors": self.errors,
               "responses": {k: asdict(e) for k, e in self.responses.items()}}
        tmp = f"{self.path}{INDEX_SUFFIX}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            os.replace(tmp, self.path + INDEX_SUFFIX)
        except OSError:  # a read-only folder: scan again next time
            try:
                os.unlink(tmp)
            except OSError:
                pass

    def _scan(self) -> None:
        seq = 0
        with open(self.path, "rb") as fh:
            it = ArchiveIterator(fh, check_digests=False)
            try:
                for rec in it:
                    self.records += 1
                    kind = rec.rec_type
                    uri = rec.rec_headers.get_header("WARC-Target-URI") or ""
                    score = rec.rec_headers.get_header(SCORE_HEADER)
                    if score is not None and uri:
                        self._note_score(uri, score, rec.rec_headers.get_header(HOT_HEADER))
                    error = rec.rec_headers.get_header(ERROR_HEADER)
                    if error is not None and uri:
                        try:
                            self.errors[canonical_url(uri)] = (error, uri)
                        except ValueError:
                            pass
                    if kind != "response" or not uri or rec.http_headers is None:
                        continue
                    try:
                        key = canonical_url(uri)
                        status = int(rec.http_headers.get_statuscode() or 0)
                    except ValueError:
                        continue
                    if not _complete(rec):
                        raise EOFError(f"record for {uri} ends early")
                    line = rec.http_headers.statusline or ""
                    entry = WarcResponse(
                        url=uri,
                        status=status,
                        reason=line.partition(" ")[2],
                        protocol=rec.http_headers.protocol or "HTTP/1.1",
                        headers=tuple((k, v) for k, v in rec.http_headers.headers),
                        offset=it.get_record_offset(),  # reads to the record's end
                        length=it.get_record_length(),
                        record_id=rec.rec_headers.get_header("WARC-Record-ID") or "",
                        seq=seq,
                    )
                    seq += 1
                    self.order.append(key)
                    if _better(entry, self.responses.get(key)):
                        self.responses[key] = entry
            except Exception as exc:  # a crawl killed mid-record leaves a truncated tail
                self.truncated = True
                logger.warning("WARC %s: stopped reading at a damaged record: %s", self.path, exc)

    def _note_score(self, uri: str, score: str, hot: str | None) -> None:
        try:
            key = canonical_url(uri)
            self.scores[key] = float(score)
        except ValueError:
            return
        if hot is not None:
            self.hot[key] = hot.strip().lower() in ("1", "true", "yes")

    def __len__(self) -> int:
        return len(self.responses)

    def __contains__(self, url: str) -> bool:
        return self.get(url) is not None

    def __iter__(self) -> Iterator[WarcResponse]:
        return iter(self.responses.values())

    def get(self, url: str) -> WarcResponse | None:
        """The recorded response for ``url`` (any fragment ignored), or None."""
        try:
            return self.responses.get(canonical_url(url))
        except ValueError:
            return None

    def error(self, url: str) -> str | None:
        """The exception class a fetch of ``url`` failed with, if it has no recorded response."""
        try:
            key = canonical_url(url)
        except ValueError:
            return None
        if key in self.responses:
            return None
        failed = self.errors.get(key)
        return failed[0] if failed else None

    def body(self, entry: WarcResponse, decode_content: bool = False) -> bytes:
        """The recorded body: as on the wire (``Content-Encoding`` kept) unless decode_content."""
        if self._fh is None:
            self._fh = open(self.path, "rb")  # noqa: SIM115 -- kept open for the index's life
        self._fh.seek(entry.offset)
        raw = self._fh.read(entry.length)
        for rec in ArchiveIterator(io.BytesIO(raw), check_digests=False):
            return _payload(rec, decode_content)
        raise ValueError(f"no record at offset {entry.offset} of {self.path}")

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> WarcIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""Test-only: a disk that fills, injected into a ``scrapy crawl`` subprocess (PYTHONPATH).

A real small filesystem (tmpfs, a loop device) needs mount privileges a CI machine may not
have, so the tests put this directory on the crawl's PYTHONPATH instead.  Both faults are
deterministic and surface exactly as a full disk does:

* ``FOCUS_TEST_FEED_ROOM=N``: the JSON-lines feed (``focuscrawl.seam.output.feeds.LineFile``) has
room for
  ``N`` bytes.  A write crossing it is short (the bytes that fit are written), the next one
  raises ``OSError(ENOSPC)`` -- what write(2) does when a disk fills mid-line.
* ``FOCUS_TEST_JOURNAL_PAGES=M``: the JOBDIR database (``focus_state.sqlite``) may hold ``M``
  pages (SQLite's ``PRAGMA max_page_count``): SQLite itself then fails the write with
  ``SQLITE_FULL``, "database or disk is full", the error its ENOSPC handling reports.
"""

from __future__ import annotations

import errno
import io
import os
import sqlite3

_FEED_ROOM = os.environ.get("FOCUS_TEST_FEED_ROOM")
_JOURNAL_PAGES = os.environ.get("FOCUS_TEST_JOURNAL_PAGES")

if _FEED_ROOM:
    room = int(_FEED_ROOM)

    class _FillingFile(io.FileIO):
        def write(self, data):  # type: ignore[override]
            free = room - os.fstat(self.fileno()).st_size
            if free <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.name)
            return super().write(memoryview(data).cast("B")[:free])

    from focuscrawl.seam.output import feeds

    feeds.LineFile.__bases__ = (_FillingFile,)

if _JOURNAL_PAGES:
    pages = int(_JOURNAL_PAGES)
    _connect = sqlite3.connect

    def connect(database, *args, **kwargs):  # type: ignore[no-untyped-def]
        db = _connect(database, *args, **kwargs)
        if os.fspath(database).endswith("focus_state.sqlite"):
            db.execute(f"PRAGMA max_page_count = {pages}")
        return db

    sqlite3.connect = connect

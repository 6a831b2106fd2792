"""Near-duplicate pages in a crawl: ``FOCUS_NEAR_DUPLICATES`` = ``mark`` | ``drop`` | ``off``.

The spider asks :meth:`NearDuplicates.check` once a page, before it announces the page's
score: a page that will be exported (``FOCUS_MIN_SCORE``) and whose main text is a near-copy
of a page exported earlier gets that page's URL as ``duplicate_of``
(``focuscrawl.core.neardup``: MinHash of word shingles, LSH, the estimate checked against
``FOCUS_NEAR_DUPLICATES_THRESHOLD``).  A near-copy is no new harvest: the spider counts only
distinct relevant pages, the ``page_scored`` signal carries ``duplicate_of`` (the dashboard
counts the copies apart), and the learned order gets the page labelled "nothing new"
(:func:`nothing_new`), so a mirror host's pages stop looking worth their budget.  With
``drop`` the :class:`NearDuplicatePipeline` leaves the copies out of the output.

The index is the crawl's ``FocusServices.near_duplicate_index``: in this process a
:class:`~focuscrawl.core.neardup.MemoryIndex`, in distributed mode the workers' shared
``RedisIndex``.  With ``JOBDIR`` the in-memory index is kept in its own file beside the
journal (:class:`IndexFile`), rebuilt when the crawl resumes.  It is written as each page is
indexed, before the page's item line: a page in the output is always in the file.  A page in
the file whose item was not written before a kill is not settled in the journal, so the
resumed crawl fetches it again; at its own URL it is no copy of itself, and it is exported then.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import DropItem, NotConfigured

from focuscrawl import config
from focuscrawl.core.learned import PageDigest
from focuscrawl.core.neardup import IndexUnavailable, Layout, NearDuplicateIndex, Signer
from focuscrawl.seam.outcome import BAD_SETTINGS, refuse_start

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

MODES = ("mark", "drop", "off")
INDEX_FILE = "focus_neardup.sqlite"  # in JOBDIR, beside the journal
FOUND = "focus/near_duplicates"  # near-copies found (marked or dropped)
DROPPED = "focus/near_duplicates/dropped"
UNCHECKED = "focus/near_duplicates/unchecked"  # the shared index could not be asked


def nothing_new(digest: PageDigest) -> PageDigest:
    """The digest of a near-copy, for the learned order: its label is 0 ("nothing new",
    whatever its words), through the label's own mix of the classifier's probability."""
    return PageDigest(digest.terms, digest.rest, digest.hits, 0.0, 1.0)


class IndexFile:
    """A JOBDIR's distinct pages exported (URL and signature), in SQLite: one row a page,
    committed as it is indexed (WAL; ``FOCUS_JOURNAL_SYNC`` as the journal).  Signatures made
    otherwise (``signing``: another focuscrawl's) cannot be compared: such a file starts anew."""

    def __init__(self, path: str | Path, synchronous: str = "NORMAL", signing: str = "") -> None:
        self.path = str(path)
        db = sqlite3.connect(self.path, isolation_level=None)
        self._db: sqlite3.Connection | None = db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={synchronous}")
        db.execute("CREATE TABLE IF NOT EXISTS pages (url TEXT PRIMARY KEY, "
                   "signature BLOB NOT NULL)")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        kept = db.execute("SELECT value FROM meta WHERE key = 'signing'").fetchone()
        if kept is not None and kept[0] != signing:
            logger.warning("focuscrawl: the near-duplicate index in %s was signed otherwise "
                           "(%s, now %s): it starts anew, and copies of the pages exported "
                           "before are not found", self.path, kept[0], signing)
            db.execute("DELETE FROM pages")
        db.execute("INSERT OR REPLACE INTO meta VALUES ('signing', ?)", (signing,))

    def pages(self) -> list[tuple[str, np.ndarray]]:
        assert self._db is not None
        return [(url, np.frombuffer(blob, dtype="<u4").astype(np.uint32)) for url, blob in
                self._db.execute("SELECT url, signature FROM pages ORDER BY rowid")]

    def add(self, url: str, signature: np.ndarray) -> None:
        if self._db is None:
            return
        try:
            self._db.execute("INSERT OR IGNORE INTO pages VALUES (?, ?)",
                             (url, np.asarray(signature, dtype="<u4").tobytes()))
        except sqlite3.Error as e:  # a full disk: the journal stops the crawl; say it once
            logger.error("focuscrawl: cannot keep the near-duplicate index in %s (%s): a "
                         "resumed crawl may export copies of the pages indexed from now on",
                         self.path, e)
            self.close()

    def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()


class NearDuplicates:
    """The crawl's near-duplicate check (module docstring)."""

    def __init__(self, crawler: Crawler, index: NearDuplicateIndex | None, *, mode: str,
                 min_score: float, store: IndexFile | None = None) -> None:
        self.stats = crawler.stats
        self.mode = mode
        self.index = index
        self.signer = Signer(index.layout) if index is not None else None
        self.min_score = min_score
        self.store = store
        self._warned = False

    @staticmethod
    def settings_error(settings: Any) -> str | None:
        """What is wrong with the near-duplicate settings, in one line (None: nothing)."""
        mode = config.get(settings, "FOCUS_NEAR_DUPLICATES")
        if mode not in MODES:
            return f"FOCUS_NEAR_DUPLICATES={mode!r}: give one of {', '.join(MODES)}"
        try:
            Layout.for_threshold(config.get(settings, "FOCUS_NEAR_DUPLICATES_THRESHOLD"))
        except ValueError as e:
            return f"FOCUS_NEAR_DUPLICATES_THRESHOLD: {e}"
        return None

    @property
    def active(self) -> bool:
        return self.index is not None

    def check(self, url: str, text: str, score: float) -> str | None:
        """The URL of an earlier exported page whose main text ``text`` is a near-copy of, else
        None (and the page is indexed if it will be exported)."""
        index, signer = self.index, self.signer
        if index is None or signer is None or (self.min_score > 0
                                               and round(score, 6) < self.min_score):
            return None
        signature = signer.signature(text)
        if signature is None:
            return None
        try:
            found = index.add(url, signature)
        except IndexUnavailable:  # the link to the index said why, once
            self.stats.inc_value(UNCHECKED)
            if not self._warned:
                self._warned = True
                logger.warning("focuscrawl: pages are exported unchecked for near-duplicates "
                               "while the shared index cannot be asked; counted in %s",
                               UNCHECKED)
            return None
        if found is not None:
            self.stats.inc_value(FOUND)
        elif self.store is not None:
            self.store.add(url, signature)
        return found

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def near_duplicates(crawler: Crawler, index_of: Any) -> NearDuplicates:
    """The crawl's check, its index made by ``index_of(layout)`` (None with ``off`` or bad
    settings: :class:`NearDuplicatePipeline` refuses those); with a JOBDIR and an in-memory
    index, the index kept in and restored from :data:`INDEX_FILE`."""
    s = crawler.settings
    mode = config.get(s, "FOCUS_NEAR_DUPLICATES")
    min_score = config.get(s, "FOCUS_MIN_SCORE")
    if mode == "off" or NearDuplicates.settings_error(s) is not None:
        return NearDuplicates(crawler, None, mode=mode, min_score=min_score)
    layout = Layout.for_threshold(config.get(s, "FOCUS_NEAR_DUPLICATES_THRESHOLD"))
    index = index_of(layout)
    store = None
    jobdir = s.get("JOBDIR")
    insert = getattr(index, "insert", None)  # an index of this process only
    if jobdir and insert is not None:
        Path(jobdir).mkdir(parents=True, exist_ok=True)
        store = IndexFile(Path(jobdir) / INDEX_FILE, config.get(s, "FOCUS_JOURNAL_SYNC"),
                          layout.signing())
        for url, signature in store.pages():
            insert(url, signature)
    made = NearDuplicates(crawler, index, mode=mode, min_score=min_score, store=store)
    crawler.signals.connect(made.close, signal=signals.spider_closed)
    return made


class NearDuplicatePipeline:
    """``ITEM_PIPELINES``: with ``FOCUS_NEAR_DUPLICATES=drop`` a near-copy is not exported
    (counted in ``focus/near_duplicates/dropped``); bad near-duplicate settings stop the crawl
    at start with one line."""

    def __init__(self, crawler: Crawler, error: str | None) -> None:
        self.crawler = crawler
        self.error = error
        if error is not None:
            crawler.signals.connect(self._refuse, signal=signals.spider_opened)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> NearDuplicatePipeline:
        error = NearDuplicates.settings_error(crawler.settings)
        if error is None and config.get(crawler.settings, "FOCUS_NEAR_DUPLICATES") != "drop":
            raise NotConfigured  # marked copies are exported like any page
        return cls(crawler, error)

    def _refuse(self) -> None:
        assert self.error is not None
        raise refuse_start(self.crawler, logger, BAD_SETTINGS, self.error)

    def process_item(self, item: Any) -> Any:
        original = ItemAdapter(item).get("duplicate_of")
        if original:
            self.crawler.stats.inc_value(DROPPED)
            raise DropItem(f"a near-copy of {original}", log_level="DEBUG")
        return item

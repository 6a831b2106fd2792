"""Crash-safe persistence of FocusScheduler's state in JOBDIR (:class:`JournaledState`).

Every change to the crawl state is journaled as an operation before it is applied (the
operations are ``focuscrawl.seam.persistence.ops.Op``): the frontier's, which the scheduler
reports, and the transitions of each request's life, which this state observes on the crawl's
``focuscrawl.seam.lifecycle.Lifecycle``; what the frontier's own choices change (a batch
chosen, links scored, URLs spilled), which it observes on the frontier (``FrontierEvents``),
is journaled where it happened (a URL handed out, a response counted with its crawl
order, a page settled once everything it produced is queued and its item written; see
``focuscrawl.seam.middlewares.journal``).

Opening restores the last snapshot, replays the journal through the same frontier API
(``Frontier.take`` for a hand-out, so the replay does not depend on timing), then puts back
every URL handed out and not settled, uncounted, keeping its crawl order for the refetch.
Snapshots of older focuscrawl versions are upgraded first (``migrations``).

Commits happen at FINISHED (a crawl order is durable before an item carries it), at DONE (a
page's outlinks and its DONE become durable together, after its item line was written), and
otherwise every FOCUS_JOURNAL_COMMIT_OPS operations or FOCUS_JOURNAL_COMMIT_SECONDS.  A kill
loses only what came after the last commit: a suffix of the history, so the crawl resumes from
an earlier moment of itself, in which every page fetched since is not done and is fetched again
-- at most the pages in flight at the kill.

A full disk (SQLite's SQLITE_FULL, or the feed's ENOSPC reported through the ``disk_full``
signal) halts the journal at its last commit, as a kill would, and stops the crawl
(``focuscrawl.seam.output.diskfull``): nothing more is written, not even the snapshot at
close, and the same command resumes once space is freed.
"""

from __future__ import annotations

import logging
import os
import pickle
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy import signals as scrapy_signals

from focuscrawl.config import JournalOptions
from focuscrawl.core.frontier import Link, LocalFrontier
from focuscrawl.core.frontier.stores import JournalSpill, SQLiteStore, StoreError
from focuscrawl.core.refresh.frontier import RevisitFrontier
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.engine import downloading, has_engine, pages_in_spider
from focuscrawl.seam.meta import lease_of
from focuscrawl.seam.output.diskfull import is_disk_full, stop_crawl
from focuscrawl.seam.persistence.migrations import STATE_VERSION, adopt, upgrade
from focuscrawl.seam.persistence.ops import Op, link_fields

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focuscrawl.seam.lifecycle import Lease, Lifecycle

logger = logging.getLogger(__name__)

STATE_FILE = "focus_state.sqlite"  # in JOBDIR: snapshot + journal (WAL mode)


def _never(host: str) -> bool:
    return False


class JournalStore(SQLiteStore):
    """The SQLite store of a JOBDIR crawl, halted instead of raising when the disk is full.

    Once ``on_full`` is set (after the crawl is loaded), a write that fails for lack of space
    halts the store: the buffered operations are dropped and nothing more is written, so the
    file keeps its last commit -- a prefix of the crawl's history, exactly what a kill -9 at
    that moment leaves -- and ``on_full(path, error)`` is told.  Any other error is raised.
    """

    def __init__(self, path: str | os.PathLike[str], **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.halted = False
        self.on_full: Callable[[str, BaseException], None] | None = None
        self._held: dict[int, bytes] = {}  # spilled batches not written (a full disk)

    def record(self, *op: Any) -> None:
        self._guard(super().record, *op)

    def commit(self) -> None:
        self._guard(super().commit)

    def snapshot(self, state: Any) -> None:
        self._guard(super().snapshot, state)

    def halt(self) -> None:
        """Write nothing more (what is buffered is lost, as at a kill)."""
        self.halted = True
        self._buffer.clear()

    def put_spill(self, batch: int, data: bytes) -> None:
        """Write a spilled batch; once halted, keep it in memory (the crawl is stopping and
        may still take it back)."""
        self._held[batch] = data
        self._guard(super().put_spill, batch, data)
        if not self.halted:
            del self._held[batch]

    def get_spill(self, batch: int) -> bytes:
        data = self._held.get(batch)
        return data if data is not None else super().get_spill(batch)

    def close(self) -> None:
        if not self.halted:
            super().close()
            return
        db, self._db = self._db, None  # type: ignore[assignment]
        if db is not None:
            try:
                db.close()  # an unfinished transaction is rolled back
            except sqlite3.Error:
                pass

    def _guard(self, write: Callable[..., None], *args: Any) -> None:
        if self.halted:
            return
        try:
            write(*args)
        except sqlite3.Error as e:
            if self.on_full is None or not is_disk_full(e):
                raise
            self.halt()
            self.on_full(self.path, e)


class JournaledState:
    """The JOBDIR state of one FocusScheduler crawl (:class:`CrawlState`): its journal store,
    the frontier's operations and, as an observer of the crawl's :class:`Lifecycle`, the
    leases handed out, counted and settled."""

    def __init__(self, crawler: Crawler, path: str, lifecycle: Lifecycle) -> None:
        self.crawler = crawler
        self.settings = crawler.settings
        self.stats = crawler.stats
        self.path = path
        self.lifecycle = lifecycle
        self.store: JournalStore | None = None
        self.frontier: LocalFrontier | None = None
        self.order_options: dict[str, Any] = {}
        self._snapshot_ops = 0
        self._max_open = 0

    @property
    def halted(self) -> bool:
        return self.store is not None and self.store.halted

    def _state_path(self) -> str:
        return os.path.join(self.path, STATE_FILE)

    def load(self, frontier: LocalFrontier, order_options: dict[str, Any]) -> None:
        """Open (or create) JOBDIR's state database and restore the crawl it holds into
        ``frontier`` and the lifecycle; from then on the lifecycle is observed."""
        self.frontier = frontier
        self.order_options = order_options
        os.makedirs(self.path, exist_ok=True)
        try:
            self._open_store()
        except sqlite3.Error as e:
            if not is_disk_full(e):
                raise
            raise StoreError(f"the disk is full: writing {self._state_path()} failed ({e}); "
                             f"free space on that disk, then run the same command again") from e
        assert self.store is not None
        self.store.on_full = self._store_full  # from now on a full disk stops the crawl
        lifecycle = self.lifecycle
        lifecycle.tracks_output = True
        lifecycle.observer = self
        signals = self.crawler.signals
        # connected after the feed exporter's item_scraped: the line is written before "done"
        signals.connect(self._item_settled, signal=scrapy_signals.item_scraped)
        signals.connect(self._item_settled, signal=scrapy_signals.item_dropped)
        signals.connect(self._item_settled, signal=scrapy_signals.item_error)
        # the feed's disk is full: its item is not written, so its page must not become done
        signals.connect(self._disk_full, signal=focus_signals.disk_full)
        # from now on the frontier's own changes are journaled where they happen (a replay
        # above made them again itself)
        frontier.events = self

    def _open_store(self) -> None:
        s = self.settings
        journal = JournalOptions.from_settings(s)
        self.store = JournalStore(
            self._state_path(),
            synchronous=journal.sync,
            commit_every=journal.commit_ops,
            commit_seconds=journal.commit_seconds,
        )
        frontier = self.frontier
        assert frontier is not None
        if frontier.spilled is not None:  # FOCUS_FRONTIER_MEMORY: batches in this database
            frontier.attach_spill(JournalSpill(self.store))
            self.store.spill_live = frontier.spilled.batches
        self._snapshot_ops = journal.snapshot_ops
        self._max_open = journal.max_open or s.getint("CONCURRENT_REQUESTS", 16)
        if not self.store.empty:
            state, ops = self.store.load()
            if state is not None:
                self._restore(state)
            for op in ops:
                self._replay(op)
            self.lifecycle.resumed = True
            self.stats.set_value("focus/journal/replayed_ops", len(ops))
            self._put_back()
            self._check_spider_state()
        self.store.snapshot(self._state())  # the new base

    def _check_spider_state(self) -> None:
        """Scrapy's ``JOBDIR/spider.state`` left unreadable (written when the disk filled):
        removed with a warning, so that the resume does not fail on it."""
        path = os.path.join(self.path, "spider.state")
        try:
            with open(path, "rb") as f:
                pickle.load(f)  # noqa: S301 - the crawl's own file
        except FileNotFoundError:
            return
        except Exception as e:  # noqa: BLE001 - any unreadable file
            logger.warning("%s is unreadable (%s): removed, the spider starts with no state",
                           path, e.__class__.__name__)
            os.remove(path)

    def _store_full(self, path: str, error: BaseException) -> None:
        stop_crawl(self.crawler, path, error)

    def _disk_full(self, **kwargs: Any) -> None:
        if self.store is not None:
            self.store.halt()

    def close(self) -> None:
        """Close the store as it is (a clean stop calls :meth:`save`)."""
        if self.store is not None:
            self.store.close()
            self.store = None

    def save(self) -> None:
        """A clean stop: put back what is not settled, write a fresh snapshot, close.

        Not after a full disk: the file keeps its last commit, which a resume recovers from."""
        assert self.store is not None
        if not self.store.halted:
            self._put_back()
            self.store.snapshot(self._state())
        for name, value in self.store.stats.items():
            self.stats.set_value(f"focus/journal/{name}", value)
        self.close()

    def _state(self) -> dict[str, Any]:
        assert self.frontier is not None
        return {
            "version": STATE_VERSION,
            "frontier": self.frontier.snapshot(),
            **self.lifecycle.snapshot(),
            "order_options": self.order_options,
        }

    def _restore(self, state: dict[str, Any]) -> None:
        frontier = self.frontier
        assert frontier is not None
        taken = upgrade(state, self.order_options, self._state_path())
        adopt(frontier, self.order_options, taken, self.path)
        saved = state.get("order_options")
        if saved is not None:
            self._check_order_options(saved)
        frontier.restore(state["frontier"])
        self.lifecycle.restore(state)

    def _check_order_options(self, saved: dict[str, Any]) -> None:
        """A resumed crawl keeps its crawl order: name the first option that differs."""
        for name in sorted(set(saved) | set(self.order_options)):
            was, now = saved.get(name), self.order_options.get(name)
            if was != now:
                raise StoreError(
                    f"JOBDIR {self.path} holds a crawl with {name}={was!r}, this one asks "
                    f"{name}={now!r}: resume with the same crawl-order settings, or use a new "
                    f"JOBDIR")

    def _replay(self, op: tuple) -> None:
        """Apply one journaled operation, exactly as it was applied live."""
        frontier = self.frontier
        assert frontier is not None
        try:
            kind = Op(op[0])
        except ValueError:
            raise StoreError(f"unknown journal operation {op[0]!r}") from None
        lifecycle = self.lifecycle
        if kind is Op.ADD:
            frontier.add(Link(*op[1]))
        elif kind is Op.TAKE:
            _, lease, url = op
            entry = frontier.take(url)
            lifecycle.replayed_hand_out(lease, entry)
            if entry is None:  # cannot happen with an intact journal; never fatal
                logger.warning("journal: %s was handed out but is not queued", url)
                self.stats.inc_value("focus/journal/inconsistent")
        elif kind is Op.BATCH:
            if frontier.capabilities.batches:
                frontier.open_batch()
            else:
                frontier.pop(_never)
        elif kind is Op.SCORED:
            url, score, hot = op[1:4]
            frontier.crawled(url, score, hot, op[4] if len(op) > 4 else None)
        elif kind is Op.FAILED:
            frontier.failed(op[1], op[2])
        elif kind is Op.INLINK:
            frontier.count_inlink(op[1])
        elif kind is Op.FLUSH:
            frontier.flush()
        elif kind is Op.BALANCE:
            frontier.balance()
        elif kind is Op.FINISHED:
            _, lease, order = op
            lifecycle.replayed_count(lease, order)
        elif kind is Op.DONE:
            lifecycle.replayed_settle(op[1])
        elif kind is Op.REVISIT:
            if not isinstance(frontier, RevisitFrontier):  # the crawl's options say it is
                raise StoreError("journal: a revisit in a crawl that does not revisit")
            frontier.replay(op[1])

    def _put_back(self) -> None:
        """Every URL handed out and not settled goes back to the frontier: fetched again,
        counted once."""
        assert self.frontier is not None
        n = self.lifecycle.put_back(self.frontier)
        if n:
            self.stats.inc_value("focus/journal/requeued", n)

    # -- the live crawl: the frontier's operations -----------------------------------------
    def added(self, link: Link) -> None:
        if self.store is not None:  # None once closed: a late signal is not journaled
            self.store.record(Op.ADD.value, link_fields(link))

    def record(self, op: Op, *args: Any) -> None:
        """Journal one operation (see the module docstring)."""
        if self.store is not None:
            self.store.record(op.value, *args)
            if op is Op.REVISIT:  # a page's new version is durable before an item carries it
                self.store.commit()

    # -- the live crawl: the frontier's own changes (FrontierEvents) -------------------------
    def batch_chosen(self) -> None:
        self.record(Op.BATCH)

    def flushed(self) -> None:
        self.record(Op.FLUSH)

    def balanced(self) -> None:
        self.record(Op.BALANCE)

    # -- the live crawl: the lifecycle's transitions (Observer) -----------------------------
    def handed_out(self, lease: Lease) -> None:
        self.record(Op.TAKE, lease.number, lease.entry.url)

    def counted(self, lease: Lease) -> None:
        """A crawl order is durable before an item carries it."""
        if self.store is not None:
            self.store.record(Op.FINISHED.value, lease.number, lease.order)
            self.store.commit()

    def settled(self, lease: Lease) -> None:
        """Everything the lease's page produced is queued and written: never fetched again."""
        store = self.store
        if store is None:
            return
        store.record(Op.DONE.value, lease.number)
        store.commit()
        frontier = self.frontier
        assert frontier is not None
        # a snapshot costs O(state): taken after at least as many operations, its cost per
        # operation stays constant and a resume replays at most twice the state's size
        if store.ops_since_snapshot >= max(self._snapshot_ops,
                                           2 * (len(frontier) + len(frontier.done))):
            store.snapshot(self._state())

    def _item_settled(self, item: Any, response: Any = None, **kwargs: Any) -> None:
        self.lifecycle.release(lease_of(response))

    def at_open_limit(self) -> bool:
        """FOCUS_JOURNAL_MAX_OPEN pages handed out and not settled: hand out no more for now.

        What a kill makes the crawl fetch again is exactly the pages not settled, so this
        bounds it even when the spider lags behind the downloads.  A page can only stay not
        settled forever if its request vanished on the way (a request_scheduled handler dropped
        an outlink); once nothing is downloading or in the spider, such pages are settled.
        """
        if self.store is None or self.lifecycle.unsettled < self._max_open:
            return False
        if not has_engine(self.crawler):
            return True
        if downloading(self.crawler) or pages_in_spider(self.crawler):
            return True
        stuck = self.lifecycle.settle_all()
        self.stats.inc_value("focus/journal/settled_stuck", stuck)
        return False

"""Crash-safe persistence of FocusScheduler's state in JOBDIR (:class:`Jobdir`, which it holds).

Every change to the crawl state is journaled as an operation before it is applied: "add" (a
link reported), "inlink" (a link the spider dropped unbuilt that the learned order counted as
one more in-link of a URL queued), "batch" (Best-N-First chose its next batch), "take" (a URL
handed out, with its lease), "scored" (a page's score and digest), "failed" (a URL that gave
no page), "flush" (the learned order scored its new links while choosing nothing), "balance"
(a frontier over FOCUS_FRONTIER_MEMORY spilled or took back a batch while choosing nothing; the
batches are in the same database, see ``focuscrawl.core.frontier.stores.JournalSpill``),
"finished" (a response counted against MAX_PAGES, with its crawl order) and "done" (everything
the page produced is queued and its item written; see focuscrawl.seam.middlewares.journal).
Opening restores the last snapshot, replays the journal through the same frontier API
(``Frontier.take`` for a hand-out, so the replay does not depend on timing), then puts back
every URL handed out and not done, uncounted, keeping its crawl order for the refetch.

Commits happen at "finished" (a crawl order is durable before an item carries it), at "done" (a
page's outlinks and its "done" become durable together, after its item line was written), and
otherwise every FOCUS_JOURNAL_COMMIT_OPS operations or FOCUS_JOURNAL_COMMIT_SECONDS.  A kill
loses only what came after the last commit: a suffix of the history, so the crawl resumes from
an earlier moment of itself, in which every page fetched since is not done and is fetched again
-- at most the pages in flight at the kill.

A full disk (SQLite's SQLITE_FULL, or the feed's ENOSPC reported through the ``disk_full``
signal) halts the journal at its last commit, as a kill would, and stops the crawl
(``focuscrawl.seam.output.diskfull``): nothing more is written, not even the snapshot at close, and
the same
command resumes once space is freed.
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
from focuscrawl.core.frontier import Entry, Frontier, Link
from focuscrawl.core.frontier.stores import JournalSpill, SQLiteStore, StoreError
from focuscrawl.core.learned import EXPLORE
from focuscrawl.seam import options
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.completion import lease_of
from focuscrawl.seam.engine import downloading, has_engine, pages_in_spider
from focuscrawl.seam.output.diskfull import is_disk_full, stop_crawl

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focuscrawl.seam.services import FocusServices

logger = logging.getLogger(__name__)

STATE_FILE = "focus_state.sqlite"  # in JOBDIR: snapshot + journal (WAL mode)
STATE_VERSION = 1


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


class _Lease:
    """A URL handed out and not yet done: what a resume must put back."""

    __slots__ = ("entry", "counted", "order")

    def __init__(self, entry: Entry, counted: bool = False, order: int | None = None) -> None:
        self.entry = entry
        self.counted = counted  # its response counted against MAX_PAGES
        self.order = order  # the crawl order it was given


def _link_tuple(link: Link) -> tuple:
    return (link.url, link.host, link.anchor, link.parent, link.parent_score, link.parent_hot,
            link.depth, link.keyword, link.force, link.payload, str(link.context), link.chrome)


class Jobdir:
    """The JOBDIR state of one FocusScheduler crawl: its journal store, the leases handed out
    and not done, the crawl orders they keep.

    The scheduler owns the frontier and its two counters, the pages fetched and the last lease
    given: :meth:`load` restores them (and returns them), and every snapshot asks ``counts()``
    for their current values.
    """

    def __init__(self, crawler: Crawler, path: str, services: FocusServices,
                 counts: Callable[[], tuple[int, int]]) -> None:
        self.crawler = crawler
        self.settings = crawler.settings
        self.stats = crawler.stats
        self.path = path
        self.services = services
        self.completion = services.completion
        self.counts = counts  # the scheduler's (pages fetched, last lease)
        self.store: JournalStore | None = None
        self.resumed = False  # this crawl continues a JOBDIR's earlier run
        self.frontier: Frontier | None = None
        self.order_options: dict[str, Any] = {}
        self.open: dict[int, _Lease] = {}  # leases handed out and not yet done
        self.orders: dict[str, int] = {}  # URL -> crawl order it keeps when fetched again
        self.order = 0  # the highest crawl order given so far
        self._snapshot_ops = 0
        self._max_open = 0
        # the counters while loading (replayed), handed to the scheduler by load()
        self._pages = 0
        self._lease_seq = 0

    def _state_path(self) -> str:
        return os.path.join(self.path, STATE_FILE)

    def load(self, frontier: Frontier, order_options: dict[str, Any]) -> tuple[int, int]:
        """Open (or create) JOBDIR's state database and restore the crawl it holds into
        ``frontier``: the scheduler's (pages fetched, last lease) are returned."""
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
        self.completion.enabled = True
        self.completion.on_done = self.page_done
        self.services.resumed = self.resumed  # the feed storage appends to a resumed crawl's file
        signals = self.crawler.signals
        # connected after the feed exporter's item_scraped: the line is written before "done"
        signals.connect(self._item_settled, signal=scrapy_signals.item_scraped)
        signals.connect(self._item_settled, signal=scrapy_signals.item_dropped)
        signals.connect(self._item_settled, signal=scrapy_signals.item_error)
        # the feed's disk is full: its item is not written, so its page must not become done
        signals.connect(self._disk_full, signal=focus_signals.disk_full)
        return self._pages, self._lease_seq

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
            self.resumed = True
            self.stats.set_value("focus/journal/replayed_ops", len(ops))
            self._pages = self._recover(self._pages)
            self._check_spider_state()
        self.store.snapshot(self._state(self._pages, self._lease_seq))  # the new base

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
        """Close the store as it is (a clean stop calls :meth:`save` first)."""
        if self.store is not None:
            self.store.close()
            self.store = None

    def save(self, pages: int, lease_seq: int) -> int:
        """A clean stop: put back what is not done and write a fresh snapshot; the pages
        fetched, without those put back.

        Not after a full disk: the file keeps its last commit, which a resume recovers from."""
        assert self.store is not None
        if not self.store.halted:
            pages = self._recover(pages)
            self.store.snapshot(self._state(pages, lease_seq))
        for name, value in self.store.stats.items():
            self.stats.set_value(f"focus/journal/{name}", value)
        return pages

    def _state(self, pages: int, lease_seq: int) -> dict[str, Any]:
        assert self.frontier is not None
        return {
            "version": STATE_VERSION,
            "frontier": self.frontier.snapshot(),
            "pages": pages,
            "order": self.order,
            "lease_seq": lease_seq,
            "open": [(lease, held.entry.fields(), held.counted, held.order)
                     for lease, held in sorted(self.open.items())],
            "orders": dict(self.orders),
            "order_options": self.order_options,
        }

    def _restore(self, state: dict[str, Any]) -> None:
        assert self.frontier is not None
        if state.get("version") != STATE_VERSION:
            raise StoreError(f"{self._state_path()} holds state version {state.get('version')}"
                             f", this focuscrawl reads {STATE_VERSION}; use a new JOBDIR")
        saved = state.get("order_options")
        if saved is not None:
            # a JOBDIR from before FOCUS_FRONTIER_MEMORY never spilled: it resumes under it
            saved.setdefault("frontier_memory", self.order_options.get("frontier_memory"))
            saved.setdefault("examples", False)  # a JOBDIR from before -a examples
            # ... and from before the host bandit: it resumes under today's default
            saved.setdefault("explore_hosts", self.order_options.get("explore_hosts"))
            # ... and from before the bounded re-rank (the same order while its frontier is
            # under the bound)
            saved.setdefault("rerank_max", self.order_options.get("rerank_max"))
            saved.setdefault("rerank_batch", self.order_options.get("rerank_batch"))
            if "same_across_schemes" not in saved:  # a JOBDIR from before: as it began
                saved["same_across_schemes"] = False
                self.frontier.same_across_schemes = False
                self.order_options["same_across_schemes"] = False
            self._keep_old_memory_default(saved)
            self._keep_old_explore_default(saved)
            self._check_order_options(saved)
        self.frontier.restore(state["frontier"])
        self._pages = state["pages"]
        self.order = state["order"]
        self._lease_seq = state["lease_seq"]
        self.open = {lease: _Lease(Entry.from_fields(t), counted, order)
                     for lease, t, counted, order in state["open"]}
        self.orders = dict(state["orders"])

    def _keep_old_memory_default(self, saved: dict[str, Any]) -> None:
        """A crawl started under FOCUS_FRONTIER_MEMORY's previous default resumes under it when
        this run leaves the setting at today's default (its journal replays only under the
        limit it spilled at): an upgrade does not strand a crawl."""
        now = self.order_options.get("frontier_memory")
        before = options.FRONTIER_MEMORY_BEFORE
        if saved.get("frontier_memory") != before or now != options.FRONTIER_MEMORY:
            return
        assert self.frontier is not None
        self.frontier.set_memory_limit(before)
        self.order_options["frontier_memory"] = before
        logger.info("JOBDIR %s: this crawl started under FOCUS_FRONTIER_MEMORY=%d (the default "
                    "then) and resumes under it", self.path, before)

    def _keep_old_explore_default(self, saved: dict[str, Any]) -> None:
        """Likewise FOCUS_EXPLORE's default without examples (1.0 -> 2.0): a crawl started
        under the old one resumes under it when this run leaves the setting at today's."""
        # with examples the default is still 1.0: a crawl saved with them has 1.0 and today's
        # 1.0; one saved with them and resumed without them is refused by the check after
        if (saved.get("explore") != options.EXPLORE_BEFORE
                or self.order_options.get("explore") != EXPLORE):
            return
        assert self.frontier is not None
        if hasattr(self.frontier, "explore"):
            self.frontier.explore = options.EXPLORE_BEFORE
        self.order_options["explore"] = options.EXPLORE_BEFORE
        logger.info("JOBDIR %s: this crawl started under FOCUS_EXPLORE=%s (the default then) "
                    "and resumes under it", self.path, options.EXPLORE_BEFORE)

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
        kind = op[0]
        if kind == "add":
            frontier.add(Link(*op[1]))
        elif kind == "take":
            _, lease, url = op
            entry = frontier.take(url)
            self._lease_seq = max(self._lease_seq, lease)
            if entry is None:  # cannot happen with an intact journal; never fatal
                logger.warning("journal: %s was handed out but is not queued", url)
                self.stats.inc_value("focus/journal/inconsistent")
                return
            self.open[lease] = _Lease(entry)
        elif kind == "batch":
            open_batch = getattr(frontier, "open_batch", None)
            if open_batch is not None:
                open_batch()
            else:
                frontier.pop(_never)
        elif kind == "scored":
            url, score, hot = op[1:4]
            frontier.crawled(url, score, hot, op[4] if len(op) > 4 else None)
        elif kind == "failed":
            frontier.failed(op[1], op[2])
        elif kind == "inlink":
            frontier.count_inlink(op[1])
        elif kind == "flush":
            frontier.flush()
        elif kind == "balance":
            frontier.balance()
        elif kind == "finished":
            _, lease, order = op
            self._pages += 1
            self.order = max(self.order, order)
            held = self.open.get(lease)
            if held is not None:
                held.counted, held.order = True, order
                self.orders.pop(held.entry.url, None)
        elif kind == "done":
            self.open.pop(op[1], None)
        else:
            raise StoreError(f"unknown journal operation {kind!r}")

    def _recover(self, pages: int) -> int:
        """Put back every URL handed out and not done: fetched again, counted once.  The pages
        fetched, without those."""
        assert self.frontier is not None
        for _, held in sorted(self.open.items()):
            if held.counted:
                pages -= 1
                if held.order is not None:
                    self.orders[held.entry.url] = held.order
            self.frontier.requeue(held.entry)
        if self.open:
            self.stats.inc_value("focus/journal/requeued", len(self.open))
        self.open.clear()
        self.completion.pending.clear()
        return pages

    # -- the live crawl ---------------------------------------------------------------------
    def record(self, *op: Any) -> None:
        """Journal one operation (see the module docstring)."""
        assert self.store is not None
        self.store.record(*op)

    def take(self, lease: int, entry: Entry) -> None:
        """``entry`` is handed out under ``lease``."""
        self.record("take", lease, entry.url)
        self.open[lease] = _Lease(entry)

    def count(self, lease: int) -> int:
        """A response of ``lease`` counts as a page: its crawl order, journaled and committed."""
        assert self.store is not None
        held = self.open.get(lease)
        order = self.orders.pop(held.entry.url, None) if held is not None else None
        if order is None:
            self.order += 1
            order = self.order
        if held is not None:
            held.counted, held.order = True, order
        self.store.record("finished", lease, order)
        self.store.commit()
        return order

    def page_done(self, lease: int) -> None:
        """Everything ``lease``'s page produced is queued and written: never fetch it again."""
        store = self.store
        if store is None or self.open.pop(lease, None) is None:
            return
        store.record("done", lease)
        store.commit()
        frontier = self.frontier
        assert frontier is not None
        # a snapshot costs O(state): taken after at least as many operations, its cost per
        # operation stays constant and a resume replays at most twice the state's size
        if store.ops_since_snapshot >= max(self._snapshot_ops,
                                           2 * (len(frontier) + len(frontier.done))):
            store.snapshot(self._state(*self.counts()))

    def settle(self, lease: int | None, source: int | None) -> None:
        """A queued request pays what its origin owed: a page's outlink, or a redirect/retry."""
        if self.store is None:
            return
        if source is not None:
            self.completion.release(source)
        elif lease is not None:
            self.completion.finish(lease)

    def _item_settled(self, item: Any, response: Any = None, **kwargs: Any) -> None:
        self.completion.release(lease_of(response))

    def at_open_limit(self) -> bool:
        """FOCUS_JOURNAL_MAX_OPEN pages handed out and not done: hand out no more for now.

        What a kill makes the crawl fetch again is exactly the pages not done, so this bounds
        it even when the spider lags behind the downloads.  A page can only stay not done
        forever if its request vanished on the way (a request_scheduled handler dropped an
        outlink); once nothing is downloading or in the spider, such pages are settled.
        """
        if self.store is None or len(self.open) < self._max_open:
            return False
        if not has_engine(self.crawler):
            return True
        if downloading(self.crawler) or pages_in_spider(self.crawler):
            return True
        for lease in list(self.open):
            self.completion.pending.pop(lease, None)
            self.page_done(lease)
            self.stats.inc_value("focus/journal/settled_stuck")
        return False

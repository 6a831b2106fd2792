"""Crash-safe crawl state: SQLite in WAL mode, a snapshot plus an append-only journal.

No Scrapy import.  A crawl's state (frontier, seen-set, link graph, counters) changes a little
with every request; pickling all of it each time would cost O(frontier) per page.  So the state
is kept as

* one **snapshot** (the pickled state, e.g. ``Frontier.snapshot()`` plus counters), rewritten
  every ``snapshot_ops`` operations and on a clean stop, and
* a **journal** of the operations since that snapshot, appended in small transactions.

Loading restores the snapshot and hands the journal back in order, for the caller to replay
through the same API that produced it.  A snapshot and the deletion of the journal it supersedes
are one transaction, so a kill between the two cannot replay an operation twice.

What a kill can lose: the operations recorded since the last :meth:`SQLiteStore.commit` -- a
suffix of the history, never a hole in it, because commits flush the buffer in order and SQLite
commits atomically.  The state after a crash is therefore the state at some earlier moment of the
same crawl; the caller commits at the points where that matters (see FocusScheduler).  With
``synchronous="NORMAL"`` a commit is a write() into the WAL without fsync: it survives the death
of the process (kill -9, the OOM killer), not a power cut; ``"FULL"`` fsyncs every commit.
"""

from __future__ import annotations

import os
import pickle
import sqlite3
import time
from collections.abc import Callable, Iterable
from typing import Any

from .spill import SPILL_TABLE, read_batch, write_batch

SCHEMA_VERSION = 1
_SYNC_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")


class StoreError(RuntimeError):
    """The state database cannot be used (another version, another crawl)."""


class SQLiteStore:
    """A snapshot row and a journal table in one SQLite file (WAL mode).

    ``record()`` buffers an operation in memory; the buffer is written and committed when
    ``commit()`` is called, when it holds ``commit_every`` operations, or when the last commit
    is ``commit_seconds`` old.  Batching keeps the cost per request to a few microseconds.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "NORMAL",
        commit_every: int = 1000,
        commit_seconds: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        synchronous = synchronous.upper()
        if synchronous not in _SYNC_MODES:
            raise ValueError(f"synchronous must be one of {_SYNC_MODES}, not {synchronous!r}")
        self.path = os.fspath(path)
        self.commit_every = max(1, commit_every)
        self.commit_seconds = commit_seconds
        self.clock = clock
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous}")
        self._db.executescript(
            """
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB);
            CREATE TABLE IF NOT EXISTS snapshot (
                id INTEGER PRIMARY KEY CHECK (id = 1), taken REAL, state BLOB);
            CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, op BLOB);
            """
            + SPILL_TABLE + ";"
        )
        version = self.get_meta("schema")
        if version is None:
            self.set_meta("schema", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            raise StoreError(f"{self.path}: schema {version}, this focuscrawl reads "
                             f"{SCHEMA_VERSION}; use a new JOBDIR")
        row = self._db.execute("SELECT COALESCE(MAX(seq), 0), COUNT(*) FROM journal").fetchone()
        self._seq: int = row[0]
        self.ops_since_snapshot: int = row[1]
        self._buffer: list[tuple[int, bytes]] = []
        self._last_commit = clock()
        self.stats = {"ops": 0, "commits": 0, "snapshots": 0, "snapshot_bytes": 0}
        # the spilled batches the state refers to (see JournalSpill); None: no spilling
        self.spill_live: Callable[[], Iterable[int]] | None = None

    # -- meta ---------------------------------------------------------------------------
    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else pickle.loads(row[0])

    def set_meta(self, key: str, value: Any) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                         (key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)))

    # -- reading ------------------------------------------------------------------------
    def load(self) -> tuple[Any | None, list[tuple]]:
        """(last snapshot or None, the journal's operations after it, oldest first)."""
        row = self._db.execute("SELECT state FROM snapshot WHERE id = 1").fetchone()
        state = pickle.loads(row[0]) if row is not None else None
        ops = [pickle.loads(blob) for (blob,) in
               self._db.execute("SELECT op FROM journal ORDER BY seq")]
        return state, ops

    @property
    def empty(self) -> bool:
        """True for a new store: no snapshot and no journal yet."""
        has_snapshot = self._db.execute("SELECT 1 FROM snapshot").fetchone() is not None
        return not has_snapshot and self._seq == 0 and not self._buffer

    # -- writing ------------------------------------------------------------------------
    def record(self, *op: Any) -> None:
        """Append one operation (a tuple of picklable values) to the journal."""
        self._seq += 1
        self._buffer.append((self._seq, pickle.dumps(op, protocol=pickle.HIGHEST_PROTOCOL)))
        self.ops_since_snapshot += 1
        self.stats["ops"] += 1
        if (len(self._buffer) >= self.commit_every
                or self.clock() - self._last_commit >= self.commit_seconds):
            self.commit()

    def commit(self) -> None:
        """Make every recorded operation durable (one transaction)."""
        self._last_commit = self.clock()
        if not self._buffer:
            return
        with self._transaction():
            self._db.executemany("INSERT INTO journal (seq, op) VALUES (?, ?)", self._buffer)
        self._buffer.clear()
        self.stats["commits"] += 1

    def snapshot(self, state: Any) -> None:
        """Replace the snapshot with ``state`` and drop the journal it supersedes.

        ``state`` must include the effect of every operation recorded so far (buffered ones
        too): they are discarded, not replayed.
        """
        blob = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
        with self._transaction():
            self._db.execute("INSERT OR REPLACE INTO snapshot (id, taken, state) VALUES (1, ?, ?)",
                             (time.time(), blob))
            self._db.execute("DELETE FROM journal")
            self._drop_spilled()
        self._buffer.clear()
        self.ops_since_snapshot = 0
        self._last_commit = self.clock()
        self.stats["snapshots"] += 1
        self.stats["snapshot_bytes"] = len(blob)

    # -- spilled frontier batches -------------------------------------------------------
    def put_spill(self, batch: int, data: bytes) -> None:
        """Write a spilled batch now (its own transaction: see JournalSpill for why)."""
        write_batch(self._db, batch, data)

    def get_spill(self, batch: int) -> bytes:
        data = read_batch(self._db, batch)
        if data is None:
            raise StoreError(f"{self.path}: spilled batch {batch} is missing")
        return data

    def _drop_spilled(self) -> None:
        """In a snapshot's transaction: delete the batches the new state no longer refers to."""
        if self.spill_live is None:
            return
        live = set(self.spill_live())
        stored = [b for (b,) in self._db.execute("SELECT batch FROM spill")]
        gone = [(b,) for b in stored if b not in live]
        if gone:
            self._db.executemany("DELETE FROM spill WHERE batch = ?", gone)

    def close(self) -> None:
        """Commit what is buffered and close the database (checkpointing the WAL)."""
        if self._db is None:
            return
        self.commit()
        self._db.close()
        self._db = None  # type: ignore[assignment]

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on error (autocommit connection)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self.db.execute("ROLLBACK" if exc_type is not None else "COMMIT")


class JournalSpill:
    """A frontier's spilled batches in its JOBDIR state database (``spill.SpillStore``).

    Crash-safe without journaling the batches themselves: a batch is written (committed) when
    it spills, and replaying the journal spills the same URLs into the same batch number again
    (INSERT OR REPLACE, the same bytes), so a batch whose spill the journal lost is
    overwritten by the next spill of that number.  A batch that came back is deleted only by
    the next snapshot, in its transaction, so a kill at any moment leaves every batch the
    snapshot and its journal refer to.
    """

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store

    def put(self, batch: int, data: bytes) -> None:
        self.store.put_spill(batch, data)

    def get(self, batch: int) -> bytes:
        return self.store.get_spill(batch)

    def release(self, batch: int) -> None:
        pass  # deleted by the next snapshot (SQLiteStore.spill_live)

    def close(self) -> None:
        pass  # the store's owner closes it

"""RedisFrontier: one crawl frontier in Redis, shared by every worker of a crawl (no Scrapy).

It speaks the frontier protocol (:class:`.protocol.SharedFrontier`) -- :meth:`add` a :class:`Link`,
:meth:`crawled` a page, ``len()`` -- so ``FocusScheduler``'s request <-> record code works
unchanged, and adds what a cluster needs:

* :meth:`pop` hands a URL to *this worker* as a numbered **lease**: atomically it picks the
  best URL among servers with a free slot cluster-wide (due servers first), checks the MAX_PAGES
  budget (``fetched + reserved < max_pages``), marks the URL seen and reserves its server slot;
* :meth:`downloaded` turns the reservation into a counted page (or frees it: redirect, error);
* :meth:`settle` drops leases once the worker has queued the page's outlinks; until then a
  lease survives its worker: :meth:`reap` (any worker, periodically) puts the URLs of workers
  whose heartbeat key expired back in the frontier, so killing a worker loses no URL;
* :meth:`status` tells whether the whole crawl is done: nothing queued (or no budget left) and
  no lease anywhere;
* :meth:`apply` sends many adds and page scores in one script call (``scripts.ADD_MANY``, each
  operation exactly ADD's or CRAWLED's, in order): a page's outlinks cost one Redis round
  trip, not one per link; settled leases ride along (SETTLE's operation).

Every decision is one Lua script (``lua/``, assembled by ``scripts.py``), so the strategies keep
their single-process semantics: the same calls in the same order give the same URLs as
``focuscrawl.core.frontier``'s classes (Best-N-First's batch shuffle uses its own seeded
generator).
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import config
from ..core.frontier import Entry, Link
from . import scripts
from .client import Client
from .hosts import SlotEnd

#: strategies the Redis frontier implements (the distiller's periodic HITS is not a Lua job)
STRATEGIES = ("breadth-first", "cho", "cho-distance", "best-first", "best-n-first")
# the single-process default (learned) keeps its model in-process
DEFAULT_STRATEGY: str = config.OPTIONS["FOCUS_STRATEGY"].distributed
#: settings every worker of a crawl must agree on: they decide the crawl order
DECISION_KEYS = ("strategy", "reorder", "n", "max_buffer", "max_pages", "limit", "seed",
                 "bloom_m", "bloom_k", "wc")
# crawls in Redis from before a key existed: before work-conserving batches, a barrier; before
# the hold, a dead worker's slots stopped counting at once
OLD_DEFAULTS = {"wc": "0", "hold_ms": "0", "layout": "1"}
#: the key layout the scripts read and write (lua/prelude.lua); a crawl stored in another is
#: refused: its seen-set would be read wrong (layout 2: URLs as fingerprints; 3: a record
#: holds its parent's fingerprint, the parent's URL is stored once under pu:<fp>)
LAYOUT = "3"


def bloom_size(capacity: int, error: float) -> tuple[int, int]:
    """Bits and hash functions of a Bloom filter holding ``capacity`` URLs at ``error``."""
    if capacity <= 0:
        return 0, 0
    if not 0 < error < 1:
        raise ValueError("the Bloom filter error rate must be between 0 and 1")
    bits = math.ceil(-capacity * math.log(error) / math.log(2) ** 2)
    if bits > 2**32:
        raise ValueError("Bloom filter too large for one Redis string (2^32 bits)")
    hashes = max(1, min(16, round(bits / capacity * math.log(2))))
    return bits, hashes


@dataclass(slots=True)
class ClusterStatus:
    """The crawl's counters, as one consistent snapshot."""

    counters: dict[str, int]
    max_pages: int

    def __getitem__(self, name: str) -> int:
        return self.counters.get(name, 0)

    @property
    def budget_left(self) -> bool:
        return not self.max_pages or self["fetched"] + self["reserved"] < self.max_pages

    @property
    def has_work(self) -> bool:
        """Something queued that the budget allows to hand out."""
        return self["entries"] > 0 and self.budget_left

    @property
    def done(self) -> bool:
        """Nothing to hand out and nothing in flight anywhere: the crawl is over."""
        return not self.has_work and self["inflight"] == 0


class RedisFrontier:
    """The crawl's frontier, leases and budget in Redis, seen from one worker."""

    name = "redis"

    def __init__(self, client: Client, prefix: str, worker: str) -> None:
        self.client = client
        self.prefix = prefix
        self._route = [prefix + "cfg"]  # the slot a Redis Cluster runs its scripts in
        self.worker = worker
        self.config: dict[str, str] = {}
        self.max_pages = 0
        self.wait: float | None = None  # after pop(late=True): seconds until a server is due
        self._scripts = {
            name: client.register_script(getattr(scripts, name))
            for name in ("INIT", "ADD", "ADD_MANY", "CRAWLED", "POP", "DOWNLOADED", "SETTLE",
                         "RELEASE", "ORPHANS", "HEARTBEAT", "REAP", "LEAVE", "STATUS")
        }

    def _run(self, script: str, *args: Any) -> Any:
        return self._scripts[script](keys=self._route, args=[self.prefix, *args])

    # -- configuration ---------------------------------------------------------------------
    def configure(self, options: dict[str, Any]) -> dict[str, str]:
        """Store this crawl's configuration, or check it against the one already stored.

        Raises ValueError if a setting that decides the crawl order differs from the crawl's;
        returns the politeness settings that differ (the crawl's values apply).
        """
        strategy = options["strategy"]
        if strategy not in STRATEGIES:
            why = (" (its model learns in one process; run it without Redis)"
                   if strategy == "learned" else "")
            raise ValueError(f"strategy {strategy!r} is not available in distributed mode"
                             f"{why}; choose one of: {', '.join(STRATEGIES)}")
        if options.get("round_robin"):
            raise ValueError("FOCUS_ROUND_ROBIN is not available in distributed mode")
        n = int(options.get("n") or 1) if strategy == "best-n-first" else 1
        if n < 1:
            raise ValueError("N must be at least 1")
        bits, hashes = bloom_size(int(options.get("bloom_capacity") or 0),
                                  float(options.get("bloom_error") or 0.001))
        mine = {
            "strategy": strategy,
            "cho": "1" if strategy.startswith("cho") else "0",
            "distance": "1" if strategy == "cho-distance" else "0",
            "reorder": str(options.get("reorder") or "none")
            if strategy.startswith("cho") else "none",
            "n": str(n),
            # Best-N-First opens the next batch for idle servers (FOCUS_BEST_N_BARRIER: not)
            "wc": "1" if n > 1 and options.get("work_conserving") else "0",
            "max_buffer": str(int(options.get("max_buffer") or 0)),
            "max_pages": str(int(options.get("max_pages") or 0)),
            "limit": str(int(options.get("distance_limit") or 3)),
            "seed": str(int(options.get("seed") or 0)),
            "bloom_m": str(bits),
            "bloom_k": str(hashes),
            "conc": str(int(options.get("concurrency") or 1)),
            "delay_ms": _ms(options.get("delay", 0.0)),
            "slow_ms": _ms(options.get("slow_seconds", 5.0)),
            "slow_factor": repr(float(options.get("slow_factor", 2.0))),
            "max_delay_ms": _ms(options.get("max_delay", 30.0)),
            "start_log": str(int(options.get("start_log") or 0)),
            # a dead worker's started request holds its server this long after its start
            "hold_ms": _ms(options.get("hold", 0.0)),
            "layout": LAYOUT,
        }
        if mine["reorder"] not in ("none", "backlinks", "score"):
            raise ValueError(f"reorder must be none, backlinks or score, not {mine['reorder']!r}")
        flat: list[str] = []
        for key, value in mine.items():
            flat += [key, value]
        stored = _pairs(self._run("INIT", *flat))
        for key, value in OLD_DEFAULTS.items():  # a crawl stored before the key existed
            stored.setdefault(key, value)
        if stored["layout"] != LAYOUT:
            raise ValueError(
                f"the crawl under {self.prefix!r} in Redis was stored by another version of "
                f"focuscrawl (key layout {stored['layout']}, this one reads layout {LAYOUT}); "
                "finish it with that version, or use another FOCUS_REDIS_KEY")
        conflicts = {k: (stored.get(k), mine[k]) for k in DECISION_KEYS if stored.get(k) != mine[k]}
        if conflicts:
            detail = ", ".join(f"{k}: crawl has {a!r}, this worker {b!r}"
                               for k, (a, b) in conflicts.items())
            raise ValueError(f"this worker's settings differ from the crawl's in Redis "
                             f"({detail}); use another FOCUS_REDIS_KEY for a new crawl")
        self.config = stored
        self.max_pages = int(stored["max_pages"])
        return {k: stored[k] for k in mine if k not in DECISION_KEYS and stored.get(k) != mine[k]}

    # -- the frontier protocol ---------------------------------------------------------------
    def add(self, link: Link) -> bool:
        """Record a discovered link; True if its URL was queued or moved up."""
        return bool(self._run("ADD", *add_op(link)[1:]))

    def crawled(self, url: str, score: float, hot: bool, digest: Any = None) -> None:
        """A fetched page's score (the first report counts); hot pages warm their neighbours
        (``digest``: none of the Redis orders learns from text)."""
        self._run("CRAWLED", *crawled_op(url, score, hot)[1:])

    def add_many(self, links: Iterable[Link]) -> list[bool]:
        """:meth:`add` for every link, in one round trip; each one's answer."""
        return self.apply([add_op(link) for link in links])

    def apply(self, ops: Sequence[Op]) -> list[bool]:
        """Run :func:`add_op` / :func:`crawled_op` / :func:`settle_op` operations in order, in
        one script call: the same effects and answers as calling :meth:`add` /
        :meth:`crawled` / :meth:`settle` one by one."""
        if not ops:
            return []
        flat: list[Any] = []
        for op in ops:
            flat += op
        return [bool(r) for r in self._run("ADD_MANY", *flat)]

    def __len__(self) -> int:
        """URLs queued (and in a Best-N-First batch), cluster-wide."""
        return int(self.client.hget(self.prefix + "c", "entries") or 0)

    # -- leases ------------------------------------------------------------------------------
    def pop(self, *, late: bool = False, seeding: bool = False) -> tuple[int, Entry] | None:
        """Lease the next URL to this worker, or None (nothing ready, or no budget left).

        ``seeding``: this worker's spider may still yield seeds, so held servers are waited
        for (POP ends holds only once no live worker says so).

        ``late``: only from a server that is due now; when the best free server is still
        waiting out its delay, None, with :attr:`wait` set to the seconds until it is due (the
        worker asks again then, with every link parsed meanwhile, and so does every other
        idle worker: the URL goes to whichever is first, not always to the last one busy).
        """
        self.wait = None
        reply = self._run("POP", self.worker, int(late), int(seeding))
        if not reply or reply[0] == b"budget":
            return None
        if reply[0] == b"wait":
            self.wait = int(reply[1]) / 1000.0
            return None
        lease, url, host, score, depth, parent, anchor, payload = reply
        entry = Entry(
            url.decode(), host.decode(), 0, score=float(score), depth=int(depth),
            parent=parent.decode() or None, anchor=anchor.decode(),
            payload=pickle.loads(payload) if payload else None,
        )
        return int(lease), entry

    def downloaded(self, lease: int, counted: bool, slot: SlotEnd | None = None) -> int:
        """The lease's download ended: its page number if ``counted``, 0 if not, -1 if lost.

        ``slot``: the request's server slot, freed first in the same script call (as
        ``RedisHosts.finish``)."""
        extra = slot.args() if slot is not None else []
        return int(self._run("DOWNLOADED", self.worker, lease, int(counted), *extra))

    def settle(self, leases: Iterable[int]) -> int:
        """This worker is done with these leases (their outlinks are queued)."""
        leases = list(leases)
        return int(self._run("SETTLE", self.worker, *leases)) if leases else 0

    def release(self, leases: Iterable[int]) -> int:
        """Put never-fetched leases back in the frontier, at their old place."""
        leases = list(leases)
        return int(self._run("RELEASE", self.worker, *leases)) if leases else 0

    def orphans(self, known: Iterable[int]) -> int:
        """Requeue this worker's leases in Redis that it does not know (``scripts.ORPHANS``)."""
        return int(self._run("ORPHANS", self.worker, *known))

    # -- workers -------------------------------------------------------------------------------
    def heartbeat(self, ttl: float) -> bool:
        """Keep this worker alive for ``ttl`` seconds; False if it had been reaped meanwhile."""
        existed, new = self._run("HEARTBEAT", self.worker, max(1, int(ttl * 1000)))
        return bool(existed) or not new

    def reap(self) -> int:
        """Requeue the leases of workers that stopped sending heartbeats; how many were dead."""
        return int(self._run("REAP"))

    def leave(self) -> None:
        """A clean exit: whatever this worker still holds goes back to the frontier."""
        self._run("LEAVE", self.worker)

    def status(self) -> ClusterStatus:
        counters = {k: int(v) for k, v in _pairs(self._run("STATUS")).items()}
        return ClusterStatus(counters, self.max_pages)

    def describe(self) -> dict[str, int]:
        """Queue sizes and counters for the crawl stats."""
        st = self.status()
        out = {
            "frontier": st["entries"], "pages_fetched": st["fetched"], "in_flight": st["inflight"],
            "workers": st["workers"],
        }
        if self.config.get("cho") == "1":
            out["hot_queue"] = st["hot"]
            out["url_queue"] = st["queued"] - st["hot"]
        if self.config.get("strategy") == "best-n-first":
            out["batch"] = st["batch_len"]
        for name in ("pages", "pages_hot", "promotions", "evicted", "batches", "duplicates",
                     "requeued", "reaped", "dropped_full", "robots_fetches", "holds_ended"):
            out[name] = st[name]
        return out

    def clear(self) -> int:
        """Delete every key of this crawl (a fresh start under the same FOCUS_REDIS_KEY)."""
        n = 0
        batch: list[bytes] = []
        for key in self.client.scan_iter(match=_glob_escape(self.prefix) + "*", count=1000):
            batch.append(key)
            if len(batch) >= 500:
                n += self.client.unlink(*batch)
                batch = []
        if batch:
            n += self.client.unlink(*batch)
        return n


#: one operation of :meth:`RedisFrontier.apply`: a tag and its script arguments
Op = tuple[Any, ...]


def add_op(link: Link) -> Op:
    """The operation that adds ``link`` (its payload pickled now: a bad one fails here)."""
    payload = b"" if link.payload is None else pickle.dumps(link.payload, protocol=5)
    return ("a", link.url, link.host, link.anchor or "", link.parent or "",
            repr(float(link.parent_score)), int(link.parent_hot), int(link.depth),
            int(link.keyword), int(link.force), payload)


def crawled_op(url: str, score: float, hot: bool) -> Op:
    """The operation that reports a fetched page's score."""
    return ("c", url, repr(float(score)), int(hot))


def settle_op(worker: str, lease: int) -> Op:
    """The operation that settles ``worker``'s ``lease`` (:meth:`RedisFrontier.settle`)."""
    return ("s", worker, int(lease))


def _ms(seconds: Any) -> str:
    return str(round(float(seconds) * 1000))


def _pairs(flat: list[Any]) -> dict[str, str]:
    def text(v: Any) -> str:
        return v.decode() if isinstance(v, bytes) else str(v)

    return {text(flat[i]): text(flat[i + 1]) for i in range(0, len(flat), 2)}


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)

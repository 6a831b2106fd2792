"""Per-server politeness state shared by the scheduler and the politeness middleware.

No Scrapy import.  A request goes through two steps:

1. the scheduler *reserves* a slot on its server when it hands the request out
   (:meth:`HostPolicy.reserve`), and only hands out requests for servers where
   ``pending + active < concurrency`` (:meth:`HostPolicy.can_dispatch`), preferring servers whose
   delay has passed (:meth:`HostPolicy.is_due`);
2. the downloader middleware *starts* it (:meth:`HostPolicy.start`) just before the download, once
   ``active < concurrency`` and the delay since the previous start has passed, and *finishes* it
   (:meth:`HostPolicy.finish`) when the response or the error comes back.

Requests the scheduler never saw (robots.txt) only take step 2, so a page request waiting for its
server's robots.txt never blocks the robots.txt fetch itself.

Slow servers (a response slower than ``slow_seconds``, or a timeout) drop to one connection for the
rest of the crawl (WebBase) and, from then on, wait ``slow_factor`` times the last response time
after the end of each fetch, never less than the normal delay and never more than ``max_delay``
(Heritrix's ``delayFactor`` rule, recomputed per fetch so a server that recovers speeds up again).

The first request to a server (robots.txt, usually) opens the connection and reaches the server
late by the connection's set-up time: the next start waits a delay after its end, not its start,
so the server never sees two requests closer than the delay.

A robots.txt ``Crawl-delay`` raises the delay of its server (capped at ``max_delay``, like
Heritrix's ``respectCrawlDelayUpToSeconds``) and applies to the gap after the robots.txt fetch too.

A server can be *held* (:meth:`HostPolicy.hold`): none of its URLs is due until a time, because
its robots.txt is unreachable and a URL handed out meanwhile could only be refused.  Only a
scheduler that keeps held servers' URLs back (and ends the holds when nothing else is left)
turns holding on; without one :meth:`HostPolicy.hold` says no and the URL is refused.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ...config import PolitenessOptions, default


@dataclass(slots=True)
class ServerState:
    concurrency: int
    delay: float
    pending: int = 0  # handed out by the scheduler, not started yet
    active: int = 0  # being downloaded
    next_start: float = 0.0  # monotonic time before which no request may start
    crawl_delay: float = 0.0  # from robots.txt
    slow: bool = False
    slow_delay: float = 0.0  # factor * last response time, while slow
    last_response_time: float = 0.0
    last_start: float | None = None
    started: int = 0
    connected: bool = False  # a request to this server has ended: its connection is open
    # with start_log only: when requests left (an empty deque takes 760 bytes, per server)
    starts: deque[float] | None = None


class HostPolicy:
    def __init__(
        self,
        options: PolitenessOptions | None = None,
        *,
        start_log: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``options``: the per-server limits (the settings' declared defaults when None);
        ``start_log``: FOCUS_START_LOG's (its default when None)."""
        o = options if options is not None else PolitenessOptions()
        if o.concurrency < 1:
            raise ValueError("per-server concurrency must be at least 1")
        self.concurrency = o.concurrency
        self.delay = o.delay
        self.slow_seconds = o.slow_seconds
        self.slow_factor = o.slow_factor
        self.max_delay = o.max_delay
        if start_log is None:
            start_log = default("FOCUS_START_LOG")
        self.start_log = start_log  # keep each server's last this many start times (an audit)
        self.clock = clock
        self.servers: dict[str, ServerState] = {}
        # the shortest gap seen between two request starts to one server (an audit on the
        # crawler's clock: arrival times at a server jitter on a loaded machine, these do not)
        self.min_start_gap: float | None = None
        #: servers held until a monotonic time (:meth:`hold`); holding is on only while a
        #: scheduler that keeps their URLs back says so; a server whose hold was ended early
        #: (:meth:`end_holds`) is not held again
        self.held: dict[str, float] = {}
        self.holding = False
        self.released: set[str] = set()

    def server(self, host: str) -> ServerState:
        state = self.servers.get(host)
        if state is None:
            state = self.servers[host] = ServerState(self.concurrency, self.delay)
        return state

    # -- scheduler side --------------------------------------------------------------------
    def can_dispatch(self, host: str) -> bool:
        state = self.servers.get(host)
        return state is None or state.pending + state.active < state.concurrency

    def is_due(self, host: str, now: float | None = None) -> bool:
        state = self.servers.get(host)
        if now is None:
            now = self.clock()
        return (state is None or now >= state.next_start) and not (
            self.held and self.is_held(host, now))

    def hold(self, host: str, until: float) -> bool:
        """Keep ``host``'s URLs back until ``until`` (monotonic): its robots.txt is unreachable.

        False if nothing keeps URLs back (no scheduler turned holding on, or it ended this
        server's hold because nothing else was left to crawl): the caller refuses the URL.
        """
        if not self.holding or host in self.released:
            return False
        self.held[host] = max(self.held.get(host, until), until)
        return True

    def is_held(self, host: str, now: float | None = None) -> bool:
        until = self.held.get(host)
        if until is None:
            return False
        if (now if now is not None else self.clock()) < until:
            return True
        del self.held[host]
        return False

    def holds(self, now: float | None = None) -> list[float]:
        """When the holds in force end; the ended ones are forgotten."""
        now = now if now is not None else self.clock()
        for host in [h for h, until in self.held.items() if until <= now]:
            del self.held[host]
        return list(self.held.values())

    def end_holds(self) -> int:
        """End every hold now: the held servers' URLs are handed out, and refused while their
        robots.txt is still unreachable (those servers are not held again: that would hold the
        same URLs at once).  Servers that fail later are held as before.  How many were held."""
        n = len(self.held)
        self.released.update(self.held)
        self.held.clear()
        return n

    def reserve(self, host: str) -> None:
        self.server(host).pending += 1

    def unreserve(self, host: str) -> None:
        state = self.server(host)
        state.pending = max(0, state.pending - 1)

    # -- downloader side -------------------------------------------------------------------
    def wait_time(self, host: str, now: float | None = None) -> float | None:
        """Seconds to wait before a request may start, or None while the server is full."""
        state = self.server(host)
        if state.active >= state.concurrency:
            return None
        now = now if now is not None else self.clock()
        return max(0.0, state.next_start - now)

    def start(self, host: str, *, reserved: bool, now: float | None = None) -> float:
        state = self.server(host)
        now = now if now is not None else self.clock()
        if reserved:
            state.pending = max(0, state.pending - 1)
        state.active += 1
        state.started += 1
        if state.last_start is not None:
            gap = now - state.last_start
            if self.min_start_gap is None or gap < self.min_start_gap:
                self.min_start_gap = gap
        state.last_start = now
        state.next_start = now + self.current_delay(host)
        if self.start_log:
            if state.starts is None:
                state.starts = deque(maxlen=self.start_log)
            state.starts.append(now)
        return now

    def sent(self, host: str, now: float | None = None) -> None:
        """The last started request left only now: the next start waits a delay from here."""
        state = self.server(host)
        now = now if now is not None else self.clock()
        if state.last_start is not None and now > state.last_start:
            state.last_start = now
            state.next_start = max(state.next_start, now + self.current_delay(host))
            if state.starts:
                state.starts[-1] = now

    def finish(
        self, host: str, elapsed: float, *, timed_out: bool = False, now: float | None = None
    ) -> None:
        """A request to ``host`` ended after ``elapsed`` seconds (or timed out)."""
        state = self.server(host)
        state.active = max(0, state.active - 1)
        state.last_response_time = elapsed
        if not state.connected:
            # The first request to a server also opened the connection (through a proxy: two),
            # so it reached the server late, and the next one, on the open connection, would
            # arrive less than a delay after it.  After the first fetch the delay counts from
            # its end.
            state.connected = True
            now = now if now is not None else self.clock()
            state.next_start = max(state.next_start, now + self.current_delay(host))
        if timed_out or elapsed > self.slow_seconds:
            state.slow = True
            state.concurrency = 1
        if state.slow:
            state.slow_delay = min(self.max_delay, self.slow_factor * elapsed)
            now = now if now is not None else self.clock()
            # Heritrix waits after the end of a slow fetch, not just after its start.
            state.next_start = max(state.next_start, now + self.current_delay(host))

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        """robots.txt's Crawl-delay for ``host``; the next start waits for it from the last one."""
        state = self.server(host)
        state.crawl_delay = min(self.max_delay, max(0.0, seconds))
        if state.last_start is not None:
            state.next_start = max(state.next_start, state.last_start + state.crawl_delay)

    def current_delay(self, host: str) -> float:
        """The gap this server needs between request starts (after a fetch end when slow)."""
        state = self.server(host)
        return max(state.delay, state.crawl_delay, state.slow_delay)

    def describe(self) -> dict[str, float]:
        """Counts for the crawl stats: servers seen, slow servers, servers with a Crawl-delay,
        and the shortest gap between two starts to one server (seconds; once there is one)."""
        servers = self.servers.values()
        out: dict[str, float] = {
            "servers": len(self.servers),
            "slow_servers": sum(1 for s in servers if s.slow),
            "crawl_delay_servers": sum(1 for s in servers if s.crawl_delay > 0),
        }
        if self.min_start_gap is not None:
            out["min_start_gap"] = round(self.min_start_gap, 4)
        return out

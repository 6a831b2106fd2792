"""RedisHosts: per-server politeness for the whole cluster, not per worker (no Scrapy).

A server's slots live in Redis (``hs:<host>``: token -> worker and state), so its concurrency
limit holds across workers, and its next allowed start time (``h:<host>``) spaces request starts
by the delay whichever worker sends them.  The two steps of ``focuscrawl.core.frontier.hosts`` stay:

1. the frontier's pop *reserves* a pending slot when it leases a URL (only if
   ``pending + active < concurrency``);
2. :meth:`RedisHosts.start` makes a slot *active* just before the download, once fewer than
   ``concurrency`` requests are active and the delay has passed -- one atomic script, so two
   workers can never both start; requests the frontier never leased (robots.txt) take a slot
   here, so a page waiting for its robots.txt never blocks that fetch.

A slot belongs to a worker; when the worker's heartbeat key expires (the worker died), its
pending slots stop counting at once, without anyone cleaning up, and its active ones once
``DOWNLOAD_TIMEOUT`` has passed since their start: the server may still be answering a request
sent just before the worker died, or by a worker frozen between starting a request and sending
it.  Slow servers and Crawl-delay follow the same rules as the single-process policy, with
times from Redis's clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import scripts
from .client import Client, text


class LeaseLost(Exception):
    """A leased request may not start: its lease is no longer this worker's (the worker froze
    past its heartbeat TTL and the others requeued the URL)."""


@dataclass(slots=True)
class SlotEnd:
    """A request's server slot to free when its download ends (HOST_FINISH's arguments).

    The end of a leased download also counts its page (``RedisFrontier.downloaded``): whoever
    sends that call takes the slot with it (:attr:`taken`), one round trip instead of two."""

    host: str
    token: str
    elapsed: float | None  # seconds; None if the request never started
    timed_out: bool = False
    taken: bool = False

    def args(self) -> list[str | int]:
        return [self.host, self.token, round((self.elapsed or 0.0) * 1000),
                int(self.timed_out), int(self.elapsed is not None)]


class RedisHosts:
    def __init__(self, client: Client, prefix: str, worker: str) -> None:
        self.client = client
        self.prefix = prefix
        self._route = [prefix + "cfg"]  # the slot a Redis Cluster runs its scripts in
        self.worker = worker
        self._start = client.register_script(scripts.HOST_START)
        self._finish = client.register_script(scripts.HOST_FINISH)
        self._delay = client.register_script(scripts.CRAWL_DELAY)
        self._hold = client.register_script(scripts.HOST_HOLD)

    def start(self, host: str, token: str, crawl_delay: float = 0.0,
              lease: int | None = None) -> float | None:
        """Start a request now if the cluster allows: 0.0 if started, else seconds to wait,
        or None while the server has no free slot.  ``crawl_delay`` is what this worker's
        robots.txt said (the cluster keeps the largest).  ``lease``: the request's lease,
        which must still be this worker's (else :class:`LeaseLost`).
        """
        wait = int(self._start(keys=self._route, args=[
            self.prefix, self.worker, host, token, round(crawl_delay * 1000),
            "" if lease is None else lease]))
        if wait == -2:
            raise LeaseLost(f"lease {lease} is no longer this worker's")
        if wait < 0:
            return None
        return wait / 1000.0

    def finish(self, host: str, token: str, elapsed: float | None, *,
               timed_out: bool = False) -> None:
        """Free the slot; ``elapsed`` (None if the request never started) feeds the slow rule."""
        self.end(SlotEnd(host, token, elapsed, timed_out))

    def end(self, slot: SlotEnd) -> None:
        """:meth:`finish` a :class:`SlotEnd`."""
        self._finish(keys=self._route, args=[self.prefix, self.worker, *slot.args()])

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        self._delay(keys=self._route, args=[self.prefix, host, round(seconds * 1000)])

    def hold(self, host: str, seconds: float) -> int:
        """Hand out none of the server's URLs for ``seconds``, cluster-wide (its robots.txt
        answered 5xx/429): 1 if held now, 2 if held already (extended), 0 if the crawl ended
        its hold early before (then refuse)."""
        return int(self._hold(keys=self._route, args=[self.prefix, host, round(seconds * 1000)]))

    def starts(self, host: str) -> list[tuple[float, str, str]]:
        """With FOCUS_REDIS_START_LOG: the server's last request starts, cluster-wide, as
        (Redis time in seconds, worker, slot token), oldest first."""
        out = []
        for item in self.client.lrange(self.prefix + "starts:" + host, 0, -1):
            ms, worker, token = text(item).split(" ", 2)
            out.append((int(ms) / 1000.0, worker, token))
        return out

    def server(self, host: str) -> dict[str, str]:
        """The server's cluster state (next start, delays, slow flag, counts), for tests/stats."""
        raw = self.client.hgetall(self.prefix + "h:" + host)
        return {text(k): text(v) for k, v in raw.items()}

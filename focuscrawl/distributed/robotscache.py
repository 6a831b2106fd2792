"""RedisRobotsCache: robots.txt fetched once per cluster, not once per worker (no Scrapy).

The first worker that needs a host's robots.txt takes a *lease* on it (``rl:<robots key>``,
holding its worker id, expiring after the worker TTL unless the fetching worker renews it) and
fetches it like any request -- through the cluster-wide server slot, spaced by the server's
delay (``focuscrawl.distributed.politeness``).  It then stores the raw outcome in
``rb:<robots key>`` (the file and its status, or "unreachable"), expiring after
``FOCUS_ROBOTSTXT_TTL`` (``FOCUS_ROBOTSTXT_ERROR_TTL`` for unreachable: disallow all until
then), and gives the lease back.  A 5xx/429 answer also counts one more failed fetch in a row
for the cluster (``rf:<robots key>``), so ``FOCUS_ROBOTSTXT_HOLDS`` bounds the holds of the
whole cluster, not of each worker.  Every other worker reads that entry instead of fetching; one
that finds the lease taken waits for the entry, and takes the lease itself if it expires first
(the fetching worker died or froze).  Each worker parses the shared file itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import scripts
from .client import Client, text


@dataclass(slots=True, frozen=True)
class SharedRobots:
    """A robots.txt outcome stored for the cluster."""

    kind: str  # focuscrawl.seam.middlewares.robots' RESPONSE, ERROR or IGNORED
    status: int
    body: bytes
    ttl: float  # seconds it still holds
    failures: int = 0  # the cluster's fetches in a row that the server answered 5xx/429


class RedisRobotsCache:
    def __init__(self, client: Client, prefix: str, worker: str) -> None:
        self.client = client
        self.prefix = prefix
        self._route = [prefix + "cfg"]  # the slot a Redis Cluster runs its scripts in
        self.worker = worker
        self._claim = client.register_script(scripts.ROBOTS_CLAIM)
        self._renew = client.register_script(scripts.ROBOTS_RENEW)
        self._store = client.register_script(scripts.ROBOTS_STORE)

    def claim(self, key: str, lease: float) -> SharedRobots | bool:
        """The cluster's entry for robots key ``key``; else True if this worker now holds the
        lease (for ``lease`` seconds) and must fetch it, False while another worker does."""
        got = self._claim(keys=self._route, args=[self.prefix, self.worker, key, _ms(lease)])
        what = got[0].decode()
        if what == "entry":
            kind, status, body, left = got[1].decode(), int(got[2]), got[3], int(got[4])
            return SharedRobots(kind, status, body, max(0, left) / 1000.0, int(got[5]))
        return what == "fetch"

    def renew(self, key: str, lease: float) -> bool:
        """Extend this worker's lease while its fetch lasts; False if the lease is gone."""
        return bool(self._renew(keys=self._route, args=[self.prefix, self.worker, key, _ms(lease)]))

    def store(self, key: str, kind: str, status: int, body: bytes, ttl: float, *,
              failed: bool = False, keep: float = 0.0) -> int:
        """The fetch's outcome, for every worker during ``ttl`` seconds; the lease is given
        back.  ``failed``: the server answered 5xx/429; the cluster's count of such fetches in
        a row goes up and lasts ``keep`` seconds past this fetch; any other outcome sets it
        to 0.  Returns it."""
        return int(self._store(keys=self._route, args=[
            self.prefix, self.worker, key, kind, status, body, _ms(ttl), int(failed),
            _ms(keep)]))

    def release(self, key: str) -> None:
        """Give the lease back without an outcome (the fetch was aborted): another worker
        fetches."""
        self._store(keys=self._route, args=[self.prefix, self.worker, key, "", 0, b"", 1, 0, 1])

    def entry(self, key: str) -> dict[str, bytes]:
        """The stored entry as it is in Redis (for tests and inspection)."""
        raw = self.client.hgetall(self.prefix + "rb:" + key)
        return {text(k): v if isinstance(v, bytes) else v.encode() for k, v in raw.items()}


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))

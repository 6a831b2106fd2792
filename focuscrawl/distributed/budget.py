"""MAX_PAGES across the shards of a Redis Cluster (no Scrapy).

A shard counts only its own pages, so the budget lives on the crawl's global slot and is handed
to workers in small blocks (``scripts.GRANT``): a worker pops a URL only with a page of budget in
hand.  A download that counts takes its page for good (``scripts.SPEND``, which also numbers
the page across the crawl); one that does not (a redirect, an error), or a URL put back unfetched,
returns its page to the worker's hand; what a worker holds unused goes back when it finds nothing
to pop and when it leaves, and a dead worker's grant comes back at the next GRANT.  So the pages
counted never exceed MAX_PAGES, and the crawl stops at exactly MAX_PAGES.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import scripts

if TYPE_CHECKING:
    from redis.cluster import RedisCluster

#: pages of budget a worker asks for at a time (few: a worker holding budget it cannot use
#: makes the others wait for it near the end of the crawl)
BLOCK = 4
#: once fewer than SCARCE blocks are left to grant, a worker gives back what it cannot use now
SCARCE = 16


class Budget:
    """One worker's share of the crawl's MAX_PAGES (``max_pages`` 0: no budget, never asks)."""

    def __init__(self, client: RedisCluster, prefix: str, worker: str) -> None:
        self.prefix = prefix
        self.worker = worker
        self.max_pages = 0
        self.free = 0  # granted, not yet attached to a lease
        self.scarce = False  # little budget left to grant: give back what cannot be used now
        self._leases: set[int] = set()  # leases holding a page of the budget
        self._grant = client.register_script(scripts.GRANT)
        self._spend = client.register_script(scripts.SPEND)

    def _run(self, script: Any, *args: Any) -> Any:
        return script(keys=[self.prefix + "cfg"], args=[self.prefix, self.worker, *args])

    def take(self) -> bool:
        """A page of budget for the next pop: False if none is left for this worker."""
        if not self.max_pages:
            return True
        if self.free == 0:
            give, left = self._run(self._grant, BLOCK)
            self.free += int(give)
            self.scarce = int(left) < SCARCE * BLOCK
        return self.free > 0

    def attach(self, lease: int) -> None:
        """The page taken went to ``lease``."""
        if self.max_pages:
            self.free -= 1
            self._leases.add(lease)

    def counted(self, lease: int) -> int:
        """``lease``'s download counted: its page is spent; its number across the crawl."""
        self._leases.discard(lease)
        return int(self._run(self._spend, lease, 0))

    def back(self, leases: Any) -> None:
        """These leases' pages return to this worker's hand (not counted, or put back)."""
        for lease in leases:
            if lease in self._leases:
                self._leases.discard(lease)
                self.free += 1

    def give_back(self) -> None:
        """Return the pages held unused (nothing to pop now) once the budget left is scarce:
        another worker may need them."""
        if self.max_pages and self.free > 0 and self.scarce:
            self._run(self._spend, "", self.free)
            self.free = 0

    def leave(self) -> None:
        if self.max_pages:
            self._run(self._spend, "", "all")
        self.free = 0
        self._leases.clear()

    def forget(self) -> None:
        """This worker was declared dead: its grant went back to the crawl."""
        self.free = 0
        self._leases.clear()

"""RedisIndex: the near-duplicate index (``focuscrawl.core.neardup``) shared by a crawl's workers.

One Lua script a page (``lua/neardup/add.lua``) finds the candidates, checks them and indexes
the page if it is no copy, atomically: of two workers adding near-copies at the same moment,
Redis runs one script after the other, and the second is answered with the first page.  All of
the index is under one Redis Cluster hash tag, ``{<FOCUS_REDIS_KEY>nd}``, so the script touches
one slot and runs alike on a single redis-server and on a Redis Cluster.  datasketch's Redis
storage is not used: it keeps no signatures to check a candidate against, inserts with a
separate query (two workers both find nothing and both index), and reads the buckets in one
MULTI over keys of many slots, which a Redis Cluster refuses.

The price of one slot is that one node of a Redis Cluster holds the whole index: per distinct
page exported its check values (two bytes a permutation), its URL and one entry a band
(docs/distributed.md says how much that is).  No Scrapy import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from focuscrawl.core.neardup import (
    MAX_BUCKET,
    Layout,
    band_keys,
    check_values,
)

from . import scripts

if TYPE_CHECKING:
    from .client import Client

INDEXED, COPY, SAME_URL = 1, 2, 3  # the script's answers


def index_prefix(key: str) -> str:
    """The index's keys' common part: the crawl's key prefix in a hash tag of its own."""
    return "{" + key + "nd}"


class RedisIndex:
    """:class:`focuscrawl.core.neardup.NearDuplicateIndex` in Redis (module docstring)."""

    def __init__(self, client: Client, key: str, layout: Layout) -> None:
        self.client = client
        self.layout = layout
        prefix = index_prefix(key)
        self.keys = [f"{prefix}:meta", f"{prefix}:checks", f"{prefix}:urls",
                     f"{prefix}:buckets"]
        self._described = layout.describe()
        self._add = client.register_script(scripts.NEARDUP_ADD)

    def add(self, url: str, signature: np.ndarray) -> str | None:
        bands = [key.to_bytes(8, "little") for key in band_keys(signature, self.layout)]
        answer = self._add(keys=self.keys, args=[
            self._described, self.layout.need, url, check_values(signature).tobytes(),
            MAX_BUCKET, *bands])
        if int(answer[0]) == COPY:
            found = answer[1]
            return found.decode("utf-8", "surrogateescape") if isinstance(found, bytes) else found
        return None

    def __len__(self) -> int:
        return int(self.client.hget(self.keys[0], "n") or 0)


"""Equal priorities on one Redis: URLs leave in the order they were queued.

Queue members carry a URL's fingerprint, not the URL (key layout 2); a sorted set orders equal
scores by member, so the members' zero-padded sequence prefix must decide, never the fingerprint
(breadth-first and best-first ties are the common case on a real crawl).
"""

from __future__ import annotations

import hashlib

import pytest

from focuscrawl.core.frontier import Link
from focuscrawl.distributed.frontier import crawled_op, settle_op
from tests.support.distributed import frontier_for
from tests.support.redis_server import redis_server_fixture  # noqa: F401 - the redis_server fixture

# long enough that a sorted set could not hold them compactly; several servers, interleaved
URLS = [f"http://h{i % 3}.test/docs/a-long-section-name/another-level/page-{i:03d}.html"
        for i in range(40)]


def fingerprint(url: str) -> str:
    return hashlib.sha1(url.encode()).hexdigest()[:14]


@pytest.mark.parametrize("strategy", ["breadth-first", "best-first"])
def test_equal_priorities_leave_in_queue_order(redis_server, strategy):
    assert sorted(URLS, key=fingerprint) != URLS  # the fingerprints' order is another one
    f = frontier_for(redis_server.client(), f"ties:{strategy}:", "w1", strategy=strategy)
    f.add_many([Link(u, host=u.split("/")[2], parent="http://p.test/", parent_score=0.5)
                for u in URLS])
    popped = []
    while (got := f.pop()) is not None:
        lease, entry = got
        popped.append(entry.url)
        f.downloaded(lease, True)
        f.apply([crawled_op(entry.url, 0.5, False), settle_op("w1", lease)])
    assert popped == URLS

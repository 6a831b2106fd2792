"""Near-duplicates: precision and recall on a web with known copies, in one process and with two
distributed workers on one redis-server; the index's memory in Redis a distinct page.

    .venv/bin/python bench/neardup.py [--rounds 3]

The web is the tests' (``tests/support/neardup_web.py``): 30 articles on a news site, their copies
under other navigation, printer-friendly, on a mirror host and with another date (40 copies),
and pages that look alike but are no copies (condensed versions, a series, hubs).  Each round
crawls all of it with ``scrapy crawl topic`` (breadth-first) at the default threshold, once in
one process and once with two workers sharing a redis-server; a mark is right when it names a
page of the same group, and a group of n pages exported should have n - 1 marked.  The memory
is Redis's own ``MEMORY USAGE`` of the index's keys over the distinct pages indexed: after the
distributed crawl (small hashes, Redis's compact encoding) and for ``--memory`` distinct
random pages with URLs of 60 characters (``FOCUS_REDIS_KEY``'s hashes in their large
encoding), added as a crawl adds them.  The CPU cost of the check a page is ``bench/throughput.py
--near-duplicates``'s.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from focuscrawl.core.neardup import Layout  # noqa: E402
from focuscrawl.demo.webserver import ServerProcess  # noqa: E402
from focuscrawl.distributed.neardup import RedisIndex  # noqa: E402
from tests.support import neardup_web  # noqa: E402
from tests.support.distributed import Cluster  # noqa: E402
from tests.support.jobdir_site import read_lines, start_crawl  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

ARGS = ["-a", f"keywords={neardup_web.KEYWORDS}", "-a", f"seeds={neardup_web.SEED_URL}",
        "-a", "strategy=breadth-first", "-a", "max_pages=200", "-s", "FOCUS_DELAY=0"]


def single(server: ServerProcess, work: Path, group: dict[str, str]) -> dict[str, Any]:
    out = work / "single.jsonl"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-O", str(out), *ARGS,
           "-s", "DOWNLOAD_TIMEOUT=60"]  # the slow seed
    proc = start_crawl(cmd, server, work / "single.log")
    if proc.wait(timeout=600) != 0:
        raise RuntimeError((work / "single.log").read_text()[-3000:])
    return figures(read_lines(out), group)


def distributed(server: ServerProcess, redis: RedisServer, work: Path, group: dict[str, str],
                key: str) -> dict[str, Any]:
    cluster = Cluster(server, redis.url, work, key)
    try:
        if cluster.wait(cluster.start(2, *ARGS), timeout=600) != [0, 0]:
            raise RuntimeError(cluster.tails())
        items = [i for w in range(2) for i in cluster.exported(w)]
    finally:
        cluster.kill_all()
    result = figures(items, group)
    index = RedisIndex(redis.client(), key, Layout.for_threshold(0.9))
    used = sum(int(redis.client().memory_usage(k) or 0) for k in index.keys)
    result["redis_bytes_a_page"] = round(used / max(len(index), 1))
    result["per_worker"] = [len(cluster.exported(w)) for w in range(2)]
    return result


def figures(items: list[dict[str, Any]], group: dict[str, str]) -> dict[str, Any]:
    precision, recall, evidence = neardup_web.precision_recall(items, group)
    return {"pages": len(items), "precision": round(precision, 4), "recall": round(recall, 4),
            "marked": evidence["marked"], "should": evidence["should"],
            "wrong": evidence["wrong"], "missed": evidence["missed"]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--memory", type=int, default=20000, metavar="N",
                   help="distinct pages for the memory figure (0: none)")
    args = p.parse_args()
    # the seed is slow: both workers are up before its links, however loaded the machine
    pages, group = neardup_web.build(seed_delay_ms=10000)
    with ServerProcess(pages=pages) as server, RedisServer() as redis, \
            tempfile.TemporaryDirectory(prefix="neardup-") as tmp:
        for r in range(args.rounds):
            work = Path(tmp) / f"r{r}"
            work.mkdir()
            one = single(server, work, group)
            two = distributed(server, redis, work, group, f"bench-neardup-{r}:")
            print(json.dumps({"round": r + 1, "single": one, "distributed": two}))
        if args.memory:
            print(json.dumps({"redis_bytes_a_page": memory(redis, args.memory)}))
    return 0


def memory(redis: RedisServer, n: int) -> int:
    """Bytes a distinct page of an index of ``n`` random distinct pages."""
    rng = np.random.default_rng(1)
    index = RedisIndex(redis.client(), "bench-neardup-memory:", Layout.for_threshold(0.9))
    for i in range(n):
        signature = rng.integers(0, 2**32, size=index.layout.num_perm, dtype=np.uint32)
        index.add(f"http://host{i % 97}.example/{i:012d}/" + "p" * 30, signature)
    used = sum(int(redis.client().memory_usage(k) or 0) for k in index.keys)
    return round(used / len(index))


if __name__ == "__main__":
    raise SystemExit(main())

"""How focused a crawl on a sharded frontier stays: harvest on one Redis vs a Redis Cluster.

    .venv/bin/python bench/cluster_harvest.py [--max-pages 300] [--workers 2] [--topics 6]
        [--no-cluster]

docweb (``../shared/docweb``, set up as for ``bench/harvest.py``) is served on a free loopback
port; for each of its first ``--topics`` topics (Pant's "examples" task: its seeds and keywords),
``--workers`` best-first workers crawl ``--max-pages`` pages live, first sharing one redis-server,
then a local 3-master Redis Cluster (``tests/support/redis_cluster.py``) where the frontier is
sharded and a pop looks at 3 shards, not all (``focuscrawl/distributed/sharded.py``).  The judge
(docweb's scores, read here and never by the crawler) gives each crawl's harvest rate: the share
of its pages that are relevant.  The two runs of a topic differ also by the workers' timing, so
the mean difference over topics is the figure, not one topic's.  ``--no-cluster``: one Redis
only (to compare two commits' single-instance harvest).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harvest import docweb_server  # noqa: E402
from focuscrawl.evaluation.compare import load_topics  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402


def crawl(topic, redis_url: str, key: str, proxy: str, args: argparse.Namespace,
          tmp: Path) -> list[str]:
    env = {**os.environ, "http_proxy": proxy, "https_proxy": proxy,
           "SCRAPY_SETTINGS_MODULE": "settings.distributed"}
    procs, outs = [], []
    for w in range(args.workers):
        out = tmp / f"{key}{w}.jsonl"
        outs.append(out)
        cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a",
               f"keywords={topic.keywords}", "-a", f"seeds={','.join(topic.seeds)}",
               "-a", "strategy=best-first", "-a", f"max_pages={args.max_pages}",
               "-s", f"FOCUS_DELAY={args.delay}", "-s", f"REDIS_URL={redis_url}",
               "-s", f"FOCUS_REDIS_KEY={key}", "-s", "LOG_LEVEL=INFO",
               "-s", f"LOG_FILE={tmp / f'{key}{w}.log'}", "-O", str(out)]
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL))
    codes = [p.wait() for p in procs]
    if any(codes):
        raise RuntimeError(f"{key}: workers exited {codes}; logs in {tmp}")
    rows = [json.loads(line) for out in outs if out.exists()
            for line in out.read_text().splitlines() if line]
    return [r["url"] for r in sorted(rows, key=lambda r: r.get("order") or 0)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-pages", type=int, default=300)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--topics", type=int, default=6, help="the first this many topics")
    ap.add_argument("--delay", type=float, default=0.01, help="FOCUS_DELAY (s)")
    ap.add_argument("--masters", type=int, default=3)
    ap.add_argument("--no-cluster", action="store_true",
                    help="one Redis only (e.g. to compare commits' single-instance harvest)")
    ap.add_argument("--topics-file", type=Path,
                    default=Path(os.environ.get("DOCWEB_DATA") or Path.home() / ".cache/docweb")
                    / "topics.json")
    args = ap.parse_args()
    topics = load_topics(args.topics_file, ["examples"])["examples"][:args.topics]
    tmp = Path(tempfile.mkdtemp(prefix="bench-cluster-harvest-"))
    results = []
    if args.no_cluster:
        cluster: contextlib.AbstractContextManager = contextlib.nullcontext()
    else:
        from tests.support.redis_cluster import RedisCluster
        cluster = RedisCluster(masters=args.masters, replicas=0)
    with docweb_server() as proxy, RedisServer() as one, cluster as cl:
        for n, topic in enumerate(topics):
            scores = topic.judge_scores or {}
            row = []
            for name, url in (("one", one.url), ("cluster", cl and cl.url)):
                if url is None:
                    row.append((0, float("nan")))
                    continue
                urls = crawl(topic, url, f"t{n}{name}:", proxy, args, tmp)
                relevant = sum(scores.get(u, 0.0) >= topic.threshold for u in urls)
                row.append((len(urls), relevant / max(1, len(urls))))
            results.append(row)
            line = f"topic {n + 1}: one Redis {row[0][0]} pages, harvest {row[0][1]:.3f}"
            if not args.no_cluster:
                line += f"; cluster {row[1][0]} pages, harvest {row[1][1]:.3f}"
            print(line, flush=True)
    one_h = [r[0][1] for r in results]
    if args.no_cluster:
        print(f"\nmean harvest over {len(results)} topics, {args.workers} workers, MAX_PAGES "
              f"{args.max_pages}: one Redis {sum(one_h) / len(one_h):.3f} "
              f"({' '.join(f'{h:.3f}' for h in one_h)}); logs in {tmp}")
        return 0
    cl_h = [r[1][1] for r in results]
    diffs = [b - a for a, b in zip(one_h, cl_h, strict=True)]
    print(f"\nmean harvest over {len(results)} topics, {args.workers} workers, "
          f"MAX_PAGES {args.max_pages}: one Redis {sum(one_h) / len(one_h):.3f}, cluster "
          f"{sum(cl_h) / len(cl_h):.3f} (cluster - one: mean {sum(diffs) / len(diffs):+.3f}, "
          f"min {min(diffs):+.3f}, max {max(diffs):+.3f}); logs in {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

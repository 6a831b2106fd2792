"""Frontier speed and memory: push then pop N URLs per strategy, against a plain heapq.

    .venv/bin/python bench/frontier.py [--n 1000000] [--strategies cho-distance,best-first]

For each strategy it pushes N links with realistic priorities (parent scores drawn from a beta
distribution, 5% keyword anchors, 20 links per parent page, 200 servers) and pops them all, then
prints operations per second and peak bytes per queued URL (tracemalloc, a separate run) next to
a plain ``heapq`` holding the same (key, url) tuples, measured in the same run.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import random
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from focuscrawl.core.frontier import Link, make_frontier  # noqa: E402

STRATEGIES = ["breadth-first", "cho", "cho-distance", "best-first", "best-n-first", "distiller"]


def workload(n: int, seed: int = 1) -> list[Link]:
    rng = random.Random(seed)
    links = []
    for i in range(n):
        parent_page = i // 20
        host = f"host{rng.randrange(200)}.example"
        links.append(Link(
            f"https://{host}/docs/{i % 997}/page{i}.html",
            host=host,
            parent=f"https://host{parent_page % 200}.example/p/{parent_page}.html",
            parent_score=round(rng.betavariate(1.2, 6.0), 4),
            parent_hot=rng.random() < 0.02,
            keyword=rng.random() < 0.05,
        ))
    return links


def baseline_key(name: str):
    """The same priority tuples a minimal queue would build per push."""
    if name == "breadth-first":
        return lambda i, link: (i, link.url)
    if name.startswith("cho"):
        return lambda i, link: (0 if link.keyword else 1, 0, i, link.url)
    return lambda i, link: (-link.parent_score, i, link.url)


def run_frontier(name: str, links: list[Link]) -> float:
    frontier = make_frontier(name, n=256, seed=0, every=10**9)
    t0 = time.perf_counter()
    for link in links:
        frontier.add(link)
    while frontier.pop() is not None:
        pass
    return time.perf_counter() - t0


def run_heapq(key, links: list[Link]) -> float:
    heap: list[tuple] = []
    t0 = time.perf_counter()
    for i, link in enumerate(links):
        heapq.heappush(heap, key(i, link))
    while heap:
        heapq.heappop(heap)
    return time.perf_counter() - t0


def peak_bytes(fn) -> int:
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    keep = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del keep
    return peak


def fill_frontier(name: str, links: list[Link]):
    frontier = make_frontier(name, n=256, seed=0, every=10**9)
    for link in links:
        frontier.add(link)
    return frontier


def fill_heapq(key, links: list[Link]):
    heap: list[tuple] = []
    for i, link in enumerate(links):
        heapq.heappush(heap, key(i, link))
    return heap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    args = parser.parse_args()
    links = workload(args.n)
    print(f"push then pop {args.n:,} URLs (2N operations); memory = peak while all are queued")
    header = (f"{'strategy':<14} {'ops/s':>11} {'heapq ops/s':>12} {'speed ratio':>11} "
              f"{'bytes/URL':>10} {'heapq B/URL':>11} {'mem ratio':>9}")
    print(header)
    print("-" * len(header))
    for name in args.strategies.split(","):
        key = baseline_key(name)
        t_base = run_heapq(key, links)
        t = run_frontier(name, links)
        m_base = peak_bytes(lambda key=key: fill_heapq(key, links))
        m = peak_bytes(lambda name=name: fill_frontier(name, links))
        ops = 2 * args.n
        print(f"{name:<14} {ops / t:>11,.0f} {ops / t_base:>12,.0f} {t_base / t:>11.2f} "
              f"{m / args.n:>10,.0f} {m_base / args.n:>11,.0f} {m / max(m_base, 1):>9.2f}",
              flush=True)
    print("speed ratio = frontier ops/s / heapq ops/s; mem ratio = frontier bytes / heapq bytes."
          "\nThe URL strings themselves (shared by both) are not counted in either.")


if __name__ == "__main__":
    main()

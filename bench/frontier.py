"""Frontier speed and memory: push then pop N URLs per strategy, against a plain heapq.

    .venv/bin/python bench/frontier.py [--n 1000000] [--strategies cho-distance,best-first]
        [--spill 1000000] [--memory rss]

For each strategy it pushes N links with realistic priorities (parent scores drawn from a beta
distribution, 5% keyword anchors, 20 links per parent page, 200 servers) and pops them all, then
prints operations per second and peak bytes per queued URL (tracemalloc, a separate run) next to
a plain ``heapq`` holding the same (key, url) tuples, measured in the same run; and the bytes
per URL of the frontier's seen-set once every URL was handed out, next to a Python set of the
same URL strings.  Times are the process's CPU time, not the wall clock: on a shared machine
other processes' load would otherwise decide the figures.  ``--n 10000000`` needs about 8 GB
for best-first (tracemalloc's own bookkeeping included) and a few minutes per strategy;
``--memory rss`` takes the RSS growth of the timed runs instead of two traced ones: half the
time and less memory.

``--spill 500000,2000000`` adds, per strategy, a run with each FOCUS_FRONTIER_MEMORY limit (RSS
growth, whatever ``--memory`` says: what is on disk is the point), printed under the unbounded
run with the URLs spilled and reloaded and the bytes a URL takes on disk.

``--own-strings`` counts the URL strings too, as a crawl holds them: they are made a chunk at a
time (a URL's parent string shared by its 20 links, as a response's URL is), so the queue, not
the bench, keeps them alive, and a spilled URL's string is freed; the heapq baseline then owns
its strings the same way.  ``--bounded-only`` skips the unbounded frontier run (at 10,000,000
URLs the learned order's would need ~15 GB) and keeps the heapq baseline.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import os
import random
import sys
import time
import tracemalloc
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from focuscrawl.core.frontier import Link  # noqa: E402
from focuscrawl.core.orders import make_frontier  # noqa: E402

STRATEGIES = ["breadth-first", "cho", "cho-distance", "best-first", "best-n-first", "distiller"]
KEYWORDS = ["docs"]  # for ``--strategies learned`` (its links have no anchor nor context here)


class Workload:
    """N links as columns, turned into :class:`Link` objects a chunk at a time.

    The URL, parent and host strings and the scores exist before any run (a crawl has them
    too: they come from the pages), so neither side's memory counts them; only a chunk of
    Link objects exists at once, which keeps ``--n 10000000`` within a few GB.
    """

    CHUNK = 10_000  # a multiple of 20: a chunk holds whole parents

    def __init__(self, n: int, seed: int = 1, own_strings: bool = False) -> None:
        rng = random.Random(seed)
        self.host_names = [f"host{h}.example" for h in range(200)]
        self.n = n
        self.own_strings = own_strings
        self.host_ids = array("B")
        self.scores = array("d")
        self.flags = bytearray(n)  # bit 0: parent hot, bit 1: keyword
        for i in range(n):  # the draws of the links this bench always used, in that order
            self.host_ids.append(rng.randrange(200))
            self.scores.append(round(rng.betavariate(1.2, 6.0), 4))
            self.flags[i] = (rng.random() < 0.02) | (rng.random() < 0.05) << 1
        # without --own-strings the strings exist before any run (a crawl has them too: they
        # come from the pages), so neither side's memory counts them
        self.urls = [] if own_strings else self._urls(0, n)
        self.parents = [] if own_strings else self._parents(0, n)

    def _urls(self, start: int, stop: int) -> list[str]:
        names, ids = self.host_names, self.host_ids
        return [f"https://{names[ids[i]]}/docs/{i % 997}/page{i}.html" for i in range(start, stop)]

    @staticmethod
    def _parents(start: int, stop: int) -> list[str]:
        """The parent of links ``start // 20`` to ``(stop - 1) // 20``."""
        return [f"https://host{p % 200}.example/p/{p}.html"
                for p in range(start // 20, (stop + 19) // 20)]

    def all_urls(self) -> list[str]:
        return self._urls(0, self.n) if self.own_strings else self.urls

    def chunks(self) -> Iterator[list[Link]]:
        names, ids, scores, flags = self.host_names, self.host_ids, self.scores, self.flags
        for start in range(0, self.n, self.CHUNK):
            stop = min(self.n, start + self.CHUNK)
            if self.own_strings:
                urls, parents, first, base = self._urls(start, stop), self._parents(start, stop), \
                    start, start // 20
            else:
                urls, parents, first, base = self.urls, self.parents, 0, 0
            yield [Link(urls[i - first], host=names[ids[i]], parent=parents[i // 20 - base],
                        parent_score=scores[i], parent_hot=bool(flags[i] & 1),
                        keyword=bool(flags[i] & 2))
                   for i in range(start, stop)]


def set_bytes(urls: Iterable[str]) -> int:
    """A Python set of these URL strings: its table and the strings (which it alone keeps
    alive once the URLs have left the queue)."""
    urls = list(urls)
    return sys.getsizeof(set(urls)) + sum(sys.getsizeof(u) for u in urls)


def seen_bytes(done: Any) -> int:
    """The frontier's seen-set: a compact set reports ``nbytes``; a set of strings as above."""
    nbytes = getattr(done, "nbytes", None)
    return int(nbytes) if nbytes is not None else set_bytes(done)


def baseline_key(name: str):
    """The same priority tuples a minimal queue would build per push."""
    if name == "breadth-first":
        return lambda i, link: (i, link.url)
    if name.startswith("cho"):
        return lambda i, link: (0 if link.keyword else 1, 0, i, link.url)
    return lambda i, link: (-link.parent_score, i, link.url)


def rss() -> int:
    """This process's resident set size in bytes (Linux)."""
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# the options these figures were always measured with (the library's defaults before they
# became the settings'): no http/https twins, the learned order left to decide on examples
AS_MEASURED = {"same_across_schemes": False, "examples": None}


def run_frontier(name: str, work: Workload, memory: int = 0, keep: list | None = None
                 ) -> tuple[float, float, int]:
    """CPU seconds to push then pop every link, the seen-set's bytes per URL handed out, and
    the RSS growth while every link was queued (``memory``: FOCUS_FRONTIER_MEMORY; the
    frontier is appended to ``keep``, for its counters)."""
    gc.collect()
    rss0 = rss()
    frontier = make_frontier(name, n=256, seed=0, every=10**9, frontier_memory=memory,
                             keywords=KEYWORDS, learn_every=10**9, **AS_MEASURED)
    if keep is not None:
        keep.append(frontier)
    t = 0.0
    for chunk in work.chunks():
        t0 = time.process_time()
        for link in chunk:
            frontier.add(link)
        frontier.flush()  # the learned order scores (and queues) its links in batches ...
        frontier.balance()  # ... and spills when it next chooses: as a crawl's pops would
        t += time.process_time() - t0
    grown = rss() - rss0
    if keep is not None:  # with every URL queued
        keep.append(frontier.memory_stats() if frontier.spilled is not None else {})
    t0 = time.process_time()
    while frontier.pop() is not None:
        pass
    t += time.process_time() - t0
    frontier.close()
    return t, seen_bytes(frontier.done) / max(len(frontier.done), 1), grown


def spill_row(name: str, work: Workload, memory: int, t_base: float, m_base: int) -> str:
    """One bounded run, as a row under the unbounded one."""
    keep: list = []
    t, _, m = run_frontier(name, work, memory, keep)
    frontier, peak = keep
    st = frontier.stats
    ops = 2 * work.n
    del keep, frontier
    gc.collect()
    return (f"{'  memory=' + format(memory, ',') :<14} {ops / t:>11,.0f} {ops / t_base:>12,.0f} "
            f"{t_base / t:>11.2f} {m / work.n:>10,.0f} {m_base / work.n:>11,.0f} "
            f"{m / max(m_base, 1):>9.2f}   spilled {st['spilled']:,} in {st['spills']} "
            f"batches, reloaded {st['reloaded']:,}; disk "
            f"{peak.get('disk_bytes_per_url', 0):,.0f} B/URL with all queued; "
            f"{peak.get('bytes_per_url', 0):,} B/URL in memory (estimate)")


def run_heapq(key, work: Workload) -> tuple[float, int]:
    gc.collect()
    rss0 = rss()
    heap: list[tuple] = []
    t = 0.0
    i = 0
    for chunk in work.chunks():
        t0 = time.process_time()
        for link in chunk:
            heapq.heappush(heap, key(i, link))
            i += 1
        t += time.process_time() - t0
    grown = rss() - rss0
    t0 = time.process_time()
    while heap:
        heapq.heappop(heap)
    return t + time.process_time() - t0, grown


def peak_bytes(fn) -> int:
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    keep = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del keep
    return peak


def fill_frontier(name: str, work: Workload):
    frontier = make_frontier(name, n=256, seed=0, every=10**9, keywords=KEYWORDS,
                             learn_every=10**9, frontier_memory=0, **AS_MEASURED)
    for chunk in work.chunks():
        for link in chunk:
            frontier.add(link)
        frontier.flush()
    return frontier


def fill_heapq(key, work: Workload):
    heap: list[tuple] = []
    i = 0
    for chunk in work.chunks():
        for link in chunk:
            heapq.heappush(heap, key(i, link))
            i += 1
    return heap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--memory", choices=("tracemalloc", "rss"), default="tracemalloc",
                        help="rss: the RSS growth of the timed runs, no traced runs (about "
                             "half the time, for --n 10000000; counts freed memory the "
                             "allocator kept, so a little higher)")
    parser.add_argument("--spill", default="",
                        help="comma-separated FOCUS_FRONTIER_MEMORY limits to run as well")
    parser.add_argument("--own-strings", action="store_true",
                        help="count the URL strings too, made a chunk at a time as a crawl "
                             "makes them (a spilled URL's string is freed)")
    parser.add_argument("--bounded-only", action="store_true",
                        help="with --spill: only the bounded runs (and the heapq baseline)")
    args = parser.parse_args()
    if args.bounded_only and not args.spill:
        parser.error("--bounded-only needs --spill")
    limits = [int(x) for x in args.spill.split(",") if x]
    work = Workload(args.n, own_strings=args.own_strings)
    set_per_url = set_bytes(work.all_urls()) / args.n
    gc.collect()
    print(f"push then pop {args.n:,} URLs (2N operations); memory = peak while all are queued "
          f"({args.memory}); URL strings {'counted' if args.own_strings else 'not counted'}")
    header = (f"{'strategy':<14} {'ops/s':>11} {'heapq ops/s':>12} {'speed ratio':>11} "
              f"{'bytes/URL':>10} {'heapq B/URL':>11} {'mem ratio':>9} "
              f"{'seen B/URL':>10} {'set B/URL':>9} {'seen ratio':>10}")
    print(header)
    print("-" * len(header))
    for name in args.strategies.split(","):
        key = baseline_key(name)
        t_base, m_base = run_heapq(key, work)
        if args.bounded_only:
            print(f"{name:<14} {'-':>11} {2 * args.n / t_base:>12,.0f} {'-':>11} {'-':>10} "
                  f"{m_base / args.n:>11,.0f}   (heapq baseline only)", flush=True)
        else:
            t, seen, m = run_frontier(name, work)
            if args.memory == "tracemalloc":
                m_base = peak_bytes(lambda key=key: fill_heapq(key, work))
                m = peak_bytes(lambda name=name: fill_frontier(name, work))
            ops = 2 * args.n
            print(f"{name:<14} {ops / t:>11,.0f} {ops / t_base:>12,.0f} {t_base / t:>11.2f} "
                  f"{m / args.n:>10,.0f} {m_base / args.n:>11,.0f} {m / max(m_base, 1):>9.2f} "
                  f"{seen:>10,.1f} {set_per_url:>9,.1f} {seen / set_per_url:>10.3f}",
                  flush=True)
        for memory in limits:
            if args.memory == "tracemalloc" and not args.bounded_only:
                t_base, m_base = run_heapq(key, work)  # RSS, like the bounded run
            print(spill_row(name, work, memory, t_base, m_base), flush=True)
    print("speed ratio = frontier ops/s / heapq ops/s; mem ratio = frontier bytes / heapq bytes."
          + ("\nThe URL strings are counted in both (each holds its own)."
             if args.own_strings else
             "\nThe URL strings themselves (shared by both) are not counted in either.")
          + "\n"
          "seen B/URL = the frontier's seen-set (URLs handed out) per URL once all are popped; "
          "set B/URL = a Python set of the same URL strings, the strings included (once "
          "popped, nothing else keeps them); seen ratio = seen / set.")


if __name__ == "__main__":
    main()

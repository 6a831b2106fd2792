"""What grew between two tracemalloc snapshots of a crawl, by allocation site, per page.

    .venv/bin/python bench/memdiff.py TRACE_DIR [--a PAGES] [--b PAGES] [--top 30]

TRACE_DIR is what ``bench/scale.py --trace N --trace-dir TRACE_DIR`` wrote: snapshots
``pages-<n>.snap`` and ``points.jsonl`` (pages, RSS, traced bytes, URLs queued and handed out
at each).  Between snapshot A and snapshot B (default: the second and the last) every live
block is charged to a site: the allocating line (innermost frame) and the innermost frame in
the project's own code (``focuscrawl/``, ``bench/``, ``spiders/``), so that a ``dict``
grown in Scrapy's code on behalf of a project call is found under both.  Printed per site:
bytes grown, bytes per page fetched and per URL discovered (queued + handed out) in between,
blocks; and the RSS growth against the traced growth (what tracemalloc does not see: C
libraries' own allocators, the allocator's fragmentation).
"""

from __future__ import annotations

import argparse
import json
import re
import tracemalloc
from collections import defaultdict
from pathlib import Path

_OWN = re.compile(r"/(focuscrawl|bench|spiders)/")


def _site(tb: tracemalloc.Traceback) -> tuple[str, str]:
    """(innermost frame, innermost project frame) of an allocation, as ``file:line``."""
    frames = list(tb)  # most recent call first (tracemalloc's default order)

    def short(f: tracemalloc.Frame) -> str:
        name = f.filename
        for cut in ("/site-packages/", "/focuscrawl/", "/bench/", "/lib/python3"):
            if cut in name:
                name = name.split(cut, 1)[1]
                name = ("focuscrawl/" + name) if cut == "/focuscrawl/" else name
                name = ("bench/" + name) if cut == "/bench/" else name
                break
        return f"{name}:{f.lineno}"

    inner = short(frames[0]) if frames else "?"
    own = next((short(f) for f in frames if _OWN.search(f.filename)), "-")
    return inner, own


def _sums(snap: tracemalloc.Snapshot) -> dict[tuple[str, str], list[int]]:
    sums: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for trace in snap.traces:
        s = sums[_site(trace.traceback)]
        s[0] += trace.size
        s[1] += 1
    return sums


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", type=Path)
    p.add_argument("--a", type=int, help="pages of snapshot A (default: the second)")
    p.add_argument("--b", type=int, help="pages of snapshot B (default: the last)")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--by", choices=("both", "inner", "own"), default="both",
                   help="group by the allocating line, the project frame or both")
    args = p.parse_args()
    points = {r["pages"]: r for r in map(json.loads, (args.dir / "points.jsonl").open())}
    pages = sorted(points)
    a = args.a if args.a is not None else pages[1 if len(pages) > 2 else 0]
    b = args.b if args.b is not None else pages[-1]
    pa, pb = points[a], points[b]
    d_pages = b - a
    d_urls = (pb["queued"] + pb["handed_out"]) - (pa["queued"] + pa["handed_out"])
    print(f"A {a:,} pages, B {b:,} pages: {d_pages:,} pages fetched, {d_urls:,} URLs "
          f"discovered (queued {pa['queued']:,} -> {pb['queued']:,})")
    d_rss, d_traced = pb["rss"] - pa["rss"], pb["traced"] - pa["traced"]
    print(f"RSS +{d_rss / 2**20:.1f} MB ({d_rss / d_pages:,.0f} B/page), traced "
          f"+{d_traced / 2**20:.1f} MB ({d_traced / d_pages:,.0f} B/page; tracemalloc's own "
          f"bookkeeping is in the RSS too)")
    sa = _sums(tracemalloc.Snapshot.load(str(args.dir / f"pages-{a}.snap")))
    sb = _sums(tracemalloc.Snapshot.load(str(args.dir / f"pages-{b}.snap")))
    grouped: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for key in set(sa) | set(sb):
        g = (key if args.by == "both" else (key[0], "") if args.by == "inner"
             else ("", key[1]))
        va, vb = sa.get(key, [0, 0]), sb.get(key, [0, 0])
        grouped[g][0] += vb[0] - va[0]
        grouped[g][1] += vb[1] - va[1]
        grouped[g][2] += vb[0]
    rows = sorted(grouped.items(), key=lambda kv: -abs(kv[1][0]))
    total = sum(v[0] for v in grouped.values())
    print(f"traced growth over the sites: {total / 2**20:.1f} MB\n")
    print(f"{'grown KB':>9} {'B/page':>7} {'B/URL':>6} {'blocks':>8} {'at B KB':>8}  "
          f"site (allocating line | project frame)")
    for (inner, own), (grown, blocks, at_b) in rows[:args.top]:
        print(f"{grown / 1024:9.0f} {grown / d_pages:7.0f} {grown / max(d_urls, 1):6.1f} "
              f"{blocks:8,d} {at_b / 1024:8.0f}  {inner} | {own}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

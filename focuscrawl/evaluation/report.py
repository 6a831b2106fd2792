"""Summarise a crawl's JSON lines: harvest rate, hot pages, the best pages found.

    python -m focuscrawl.evaluation.report pages.jsonl [--relevant 0.1] [--top 10]
        [--html report.html [--label focused] [--compare other.jsonl [--compare-label bfs]]]

No Scrapy import.  Torn or malformed lines (a crawl killed mid-write) are counted and skipped.
``--html`` also writes the report with pictures (:mod:`focuscrawl.evaluation.htmlreport`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from focuscrawl.evaluation.summary import Summary, read_rows, summarise, summarise_rows

__all__ = ["Summary", "main", "summarise"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Summarise a focuscrawl JSON-lines file.")
    parser.add_argument("path")
    parser.add_argument("--relevant", type=float, default=0.1,
                        help="score at which a page counts as relevant (default 0.1)")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--html", metavar="FILE",
                        help="also write a self-contained HTML report with pictures to FILE")
    parser.add_argument("--label", help="this crawl's name in the HTML report (default: file "
                        "name)")
    parser.add_argument("--compare", metavar="OTHER.jsonl",
                        help="another crawl whose harvest curve is drawn beside this one")
    parser.add_argument("--compare-label", help="the other crawl's name (default: file name)")
    args = parser.parse_args(argv)
    try:
        with open(args.path, encoding="utf-8") as f:
            rows, bad = read_rows(f)
    except OSError as e:
        print(f"focuscrawl.evaluation.report: {e}", file=sys.stderr)
        return 1
    s = summarise_rows(rows, bad, args.relevant, args.top)
    print(f"{args.path}: {s.pages} pages from {len(s.hosts)} hosts; "
          f"harvest rate {s.harvest_rate:.1%} (score >= {args.relevant}, distinct pages); "
          f"{s.hot} hot pages"
          + (f"; {s.near_duplicates} near-duplicates" if s.near_duplicates else "")
          + (f"; {s.bad_lines} unreadable lines skipped" if s.bad_lines else ""))
    if s.languages:
        print(f"languages: {s.language_mix()}")
    print(f"top {len(s.top)} by score:")
    for row in s.top:
        print(f"  {float(row['score']):.3f}  {'hot ' if row.get('hot') else '    '}"
              f"#{row.get('order') or '?':<5} {row.get('title', '')[:60]:<60}  {row['url']}")
    opening = opening_lines(s.top[0]) if s.top else []
    if opening:  # a crawl with content (-a content=text or markdown)
        print(f"the best page's opening lines ({s.top[0]['url']}):")
        print("\n".join(f"  {line}" for line in opening))
    if args.html or args.compare:
        return _html(args, rows, bad)
    return 0


def opening_lines(row: dict[str, Any], lines: int = 5, width: int = 100) -> list[str]:
    """The first lines of a page's main text (or Markdown), each cut to ``width``."""
    text = row.get("text") or row.get("markdown") or ""
    found = [line.strip() for line in str(text).splitlines() if line.strip()][:lines]
    return [line if len(line) <= width else line[:width - 1] + "…" for line in found]


def _html(args: argparse.Namespace, rows: list[dict[str, Any]], bad: int) -> int:
    from focuscrawl.evaluation import htmlreport

    crawl = htmlreport.Crawl(args.label or Path(args.path).stem, rows, bad)
    other = None
    if args.compare:
        try:
            other = htmlreport.Crawl.read(args.compare, args.compare_label)
        except OSError as e:
            print(f"focuscrawl.evaluation.report: {e}", file=sys.stderr)
            return 1
        print(htmlreport.comparison_line(crawl, other, args.relevant))
    if args.html:
        try:
            htmlreport.write_html(args.html, crawl, relevant=args.relevant, top=args.top,
                                  compare=other)
        except ImportError as e:  # matplotlib is the eval extra
            print(f"focuscrawl.evaluation.report: --html needs matplotlib ({e}); "
                  "pip install 'focuscrawl[eval]'", file=sys.stderr)
            return 1
        print(f"HTML report: {args.html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

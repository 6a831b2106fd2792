"""Summarise a crawl's JSON lines: harvest rate, hot pages, the best pages found.

    python -m focuscrawl.evaluation.report pages.jsonl [--relevant 0.2] [--top 10]

No Scrapy import.  Torn or malformed lines (a crawl killed mid-write) are counted and skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO
from urllib.parse import urlsplit


@dataclass
class Summary:
    pages: int = 0
    relevant: int = 0
    hot: int = 0
    bad_lines: int = 0
    hosts: set[str] = field(default_factory=set)
    top: list[dict[str, Any]] = field(default_factory=list)

    @property
    def harvest_rate(self) -> float:
        return self.relevant / self.pages if self.pages else 0.0


def summarise(lines: TextIO, relevant: float = 0.2, top: int = 10) -> Summary:
    summary = Summary()
    rows: list[dict[str, Any]] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            score = float(row["score"])
        except (ValueError, KeyError, TypeError):
            summary.bad_lines += 1
            continue
        summary.pages += 1
        summary.relevant += score >= relevant
        summary.hot += bool(row.get("hot"))
        summary.hosts.add(urlsplit(str(row.get("url", ""))).hostname or "")
        rows.append(row)
    rows.sort(key=lambda r: (-float(r["score"]), r.get("order") or 0))
    summary.top = rows[:top]
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Summarise a focuscrawl JSON-lines file.")
    parser.add_argument("path")
    parser.add_argument("--relevant", type=float, default=0.1,
                        help="score at which a page counts as relevant (default 0.1)")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args(argv)
    try:
        with open(args.path, encoding="utf-8") as f:
            s = summarise(f, args.relevant, args.top)
    except OSError as e:
        print(f"focuscrawl.evaluation.report: {e}", file=sys.stderr)
        return 1
    print(f"{args.path}: {s.pages} pages from {len(s.hosts)} hosts; "
          f"harvest rate {s.harvest_rate:.1%} (score >= {args.relevant}); {s.hot} hot pages"
          + (f"; {s.bad_lines} unreadable lines skipped" if s.bad_lines else ""))
    print(f"top {len(s.top)} by score:")
    for row in s.top:
        print(f"  {float(row['score']):.3f}  {'hot ' if row.get('hot') else '    '}"
              f"#{row.get('order') or '?':<5} {row.get('title', '')[:60]:<60}  {row['url']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A crawl's pages as rows, and what the reports count in them (no Scrapy, no plotting).

A page is relevant when its score is at or above the threshold and it is no near-copy of a page
exported before it (``duplicate_of``: a copy is no new harvest): :func:`is_relevant`, the one
rule the text report and the HTML report share.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO
from urllib.parse import urlsplit


@dataclass
class Summary:
    pages: int = 0
    relevant: int = 0
    near_duplicates: int = 0  # pages marked duplicate_of another (FOCUS_NEAR_DUPLICATES)
    hot: int = 0
    bad_lines: int = 0
    hosts: set[str] = field(default_factory=set)
    top: list[dict[str, Any]] = field(default_factory=list)
    # the main text's language -> pages, most first ("unknown": none found); empty for a
    # crawl that exported no content (-a content=none)
    languages: dict[str, int] = field(default_factory=dict)

    @property
    def harvest_rate(self) -> float:
        return self.relevant / self.pages if self.pages else 0.0

    def language_mix(self, shown: int = 8) -> str:
        """"en 91% · de 6% · ...": the languages' shares of the pages, most first."""
        total = sum(self.languages.values())
        parts = [f"{code} {n / total:.0%}" for code, n in list(self.languages.items())[:shown]]
        return " · ".join(parts + (["…"] if len(self.languages) > shown else []))


def read_rows(lines: Iterable[str]) -> tuple[list[dict[str, Any]], int]:
    """The readable rows (each with a float ``score``) in file order, and the unreadable count."""
    rows: list[dict[str, Any]] = []
    bad = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            row["score"] = float(row["score"])
        except (ValueError, KeyError, TypeError):
            bad += 1
            continue
        rows.append(row)
    return rows, bad


def host_of(row: dict[str, Any]) -> str:
    return urlsplit(str(row.get("url", ""))).hostname or ""


def is_relevant(row: dict[str, Any], relevant: float) -> bool:
    """The one rule every part of the report uses: score at or above the threshold, and no
    near-copy of a page exported earlier."""
    return float(row["score"]) >= relevant and not row.get("duplicate_of")


def summarise_rows(rows: list[dict[str, Any]], bad_lines: int = 0, relevant: float = 0.2,
                   top: int = 10) -> Summary:
    summary = Summary(bad_lines=bad_lines)
    languages: Counter[str] = Counter()
    for row in rows:
        if "language" in row:  # a crawl with content
            languages[row["language"] or "unknown"] += 1
        summary.pages += 1
        summary.relevant += is_relevant(row, relevant)
        summary.near_duplicates += bool(row.get("duplicate_of"))
        summary.hot += bool(row.get("hot"))
        summary.hosts.add(host_of(row))
    distinct = [r for r in rows if not r.get("duplicate_of")]  # a copy's original is there
    ranked = sorted(distinct, key=lambda r: (-float(r["score"]), r.get("order") or 0))
    summary.top = ranked[:top]
    summary.languages = dict(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0])))
    return summary


def summarise(lines: TextIO, relevant: float = 0.2, top: int = 10) -> Summary:
    rows, bad = read_rows(lines)
    return summarise_rows(rows, bad, relevant, top)

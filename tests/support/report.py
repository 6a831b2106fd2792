"""Crawl files for the report tests."""

from __future__ import annotations

import json


def crawl_rows(scores: list[float], host: str) -> list[dict]:
    """A crawl file's rows: one page per score, fetched in this order, one of them hot."""
    return [{"url": f"http://{host}{i % 3}.test/p{i}.html", "title": f"Page {i} $x$ <b>",
             "score": s, "hot": i == 0, "order": i + 1} for i, s in enumerate(scores)]


def write_crawl(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows[::-1]))  # order field wins
    return str(path)

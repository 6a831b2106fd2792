"""What a dashboard shows of a crawl order, as plain data (read only, no Scrapy)."""

from __future__ import annotations

from itertools import islice
from typing import Any


def queue_insight(frontier: Any, sample: int = 20_000, bins: int = 10) -> dict[str, Any]:
    """What a dashboard shows of this order, as plain data (read only): URLs queued in
    memory and on disk, and how the priorities of those in memory spread over ``bins``
    equal bins of [0, 1] (the last one takes every priority above; an evenly strided
    sample of at most ``sample`` entries, counts scaled back up)."""
    entries = frontier.entries
    step = max(1, -(-len(entries) // sample))
    counts = [0] * bins
    value = frontier.valuation.value
    for entry in islice(entries.values(), 0, None, step):
        v = value(entry)
        v = entry.score if v is None else v
        counts[min(bins - 1, max(0, int(v * bins)))] += step
    return {"strategy": frontier.name, "memory": len(entries),
            "disk": len(frontier.spilled) if frontier.spilled is not None else 0,
            "priorities": {"edges": [round(i / bins, 3) for i in range(bins + 1)],
                           "counts": counts}}

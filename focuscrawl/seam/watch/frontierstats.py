"""A crawl order's figures as crawl stats (``focus/*``), for the stats dump and the dashboard."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

    from focuscrawl.core.frontier import LocalFrontier

#: the order's counters the stats carry as they are
COUNTERS = ("pages", "pages_hot", "promotions", "evicted", "batches", "duplicates",
            "scheme_twins")


def record_frontier_stats(stats: StatsCollector, f: LocalFrontier) -> None:
    """The order's counters, its queue sizes, its memory figures (FOCUS_FRONTIER_MEMORY) and
    its slack's (FOCUS_SLACK), and the share of the pages fetched that were hot."""
    for name in COUNTERS:
        stats.set_value(f"focus/{name}", f.stats.get(name, 0))
    for name, value in f.describe().items():
        stats.set_value(f"focus/{name}", value)
    if f.spilled is not None:  # FOCUS_FRONTIER_MEMORY
        for name, value in f.memory_stats().items():
            stats.set_value(f"focus/frontier/{name}", value)
    if f.slack_waits:
        stats.set_value("focus/slack_waits", f.slack_waits)
    if f.adaptive_slack is not None:
        for name, value in f.adaptive_slack.describe().items():
            stats.set_value(f"focus/slack{name}", value)
    if f.stats.get("pages"):
        stats.set_value("focus/hot_rate", round(f.stats["pages_hot"] / f.stats["pages"], 4))

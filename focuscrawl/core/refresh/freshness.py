"""Exact time-averaged freshness of a crawler's copies, from the true change times.

A copy fetched at time v is fresh until the page's first change after v (a change at the very
moment of the fetch is in the copy), or until the next fetch; before the first fetch it is
stale.  The measure is Cho & Garcia-Molina's F(p; t) averaged over an interval, weighted by
relevance over pages.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence


def fresh_time(visits: Sequence[float], changes: Sequence[float], start: float,
               end: float) -> float:
    """Seconds of [start, end] during which the copy made by the sorted ``visits`` equals the
    page changing at the sorted ``changes``."""
    total = 0.0
    for k, v in enumerate(visits):
        if v >= end:
            break
        stop = visits[k + 1] if k + 1 < len(visits) else end
        i = bisect_right(changes, v)
        if i < len(changes):
            stop = min(stop, changes[i])
        lo, hi = max(v, start), min(stop, end)
        if hi > lo:
            total += hi - lo
    return total


def weighted_freshness(visits: Mapping[str, Sequence[float]],
                       changes: Mapping[str, Sequence[float]], weights: Mapping[str, float],
                       start: float, end: float) -> float:
    """Relevance-weighted time-averaged freshness of every page in ``weights``."""
    num = den = 0.0
    span = end - start
    if span <= 0:
        raise ValueError("the interval must not be empty")
    for url, w in weights.items():
        num += w * fresh_time(visits.get(url, ()), changes.get(url, ()), start, end) / span
        den += w
    return num / den if den > 0 else 0.0

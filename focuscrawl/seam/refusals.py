"""A guard's refusals, counted and said once per reason.

A request a guard refuses (the private-address guard, the link and gate filters, robots.txt) is
counted as ``<prefix>/<reason>``, and the first refusal for each reason is said in the log at
INFO with its URL and what refused it: a crawl that fetched nothing says why without a look at
the stats, and a crawl that refuses thousands of links does not say it thousands of times.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

    from scrapy.statscollectors import StatsCollector


class Refusals:
    def __init__(self, stats: StatsCollector, prefix: str, guard: str,
                 log: logging.Logger) -> None:
        self.stats = stats
        self.log = log
        self.prefix = prefix
        self.guard = guard
        self._said: set[str] = set()

    def refused(self, reason: str, url: str) -> None:
        """Count one refusal; say the first of each reason."""
        name = f"{self.prefix}/{reason}"
        self.stats.inc_value(name)
        if reason not in self._said:
            self._said.add(reason)
            self.log.info("Refused %s (%s, %s); further refusals for this reason are only "
                        "counted, in %s", url[:200], reason, self.guard, name)

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


class SayOnce:
    """The first refusal of each reason said at INFO; the caller counts every one (a guard
    that batches its counts, as the link filter does, keeps doing so)."""

    def __init__(self, guard: str, log: logging.Logger) -> None:
        self.guard = guard
        self.log = log
        self._said: set[str] = set()

    def __call__(self, reason: str, url: str, stat: str) -> None:
        if reason not in self._said:
            self._said.add(reason)
            self.log.info("Refused %s (%s, %s); further refusals for this reason are only "
                          "counted, in %s", url[:200], reason, self.guard, stat)


class Refusals:
    def __init__(self, stats: StatsCollector, prefix: str, guard: str,
                 log: logging.Logger) -> None:
        self.stats = stats
        self.prefix = prefix
        self.say = SayOnce(guard, log)

    def refused(self, reason: str, url: str) -> None:
        """Count one refusal; say the first of each reason."""
        name = f"{self.prefix}/{reason}"
        self.stats.inc_value(name)
        self.say(reason, url, name)

"""The scheduler's crawl state, journaled or not, behind one interface.

:class:`CrawlState` is what ``FocusScheduler`` holds: with JOBDIR a
:class:`~focuscrawl.seam.persistence.jobdir.JournaledState` (crash-safe in SQLite), without
one a :class:`NullState` that keeps nothing.  The scheduler reports every frontier operation
to it and never asks which one it has; the request's life is reported by the
:class:`~focuscrawl.seam.lifecycle.Lifecycle`, which the journaled state observes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from focuscrawl.seam.persistence.jobdir import JournaledState

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focuscrawl.core.frontier import Link, LocalFrontier
    from focuscrawl.seam.lifecycle import Lifecycle
    from focuscrawl.seam.persistence.ops import Op


class CrawlState(Protocol):
    @property
    def halted(self) -> bool:
        """The crawl may not go on writing (a full disk): hand out nothing more."""
        ...

    def load(self, frontier: LocalFrontier, order_options: dict[str, Any]) -> None:
        """Restore the crawl it holds (if any) into ``frontier`` and the lifecycle."""
        ...

    def added(self, link: Link) -> None:
        """A link reported to the frontier (journaled before it is applied)."""
        ...

    def record(self, op: Op, *args: Any) -> None:
        """Any other frontier operation, before it is applied."""
        ...

    def at_open_limit(self) -> bool:
        """Too many pages not settled: hand out nothing for now."""
        ...

    def save(self) -> None:
        """A clean stop: keep what a resume needs, then close."""
        ...

    def close(self) -> None:
        """Close as it is (a crawl that could not start)."""
        ...


class NullState:
    """No JOBDIR: nothing is kept, nothing is restored."""

    halted = False

    def load(self, frontier: LocalFrontier, order_options: dict[str, Any]) -> None:
        pass

    def added(self, link: Link) -> None:
        pass

    def record(self, op: Op, *args: Any) -> None:
        pass

    def at_open_limit(self) -> bool:
        return False

    def save(self) -> None:
        pass

    def close(self) -> None:
        pass


def crawl_state(crawler: Crawler, jobdir: str | None, lifecycle: Lifecycle) -> CrawlState:
    """The crawl's state: journaled in ``jobdir`` (observing ``lifecycle``), or none."""
    return JournaledState(crawler, jobdir, lifecycle) if jobdir else NullState()

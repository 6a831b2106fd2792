"""The relevance slack of a crawl (FOCUS_SLACK): a fixed value, or an adaptive one the crawl
order's frontier keeps (``focuscrawl.core.frontier.slack.AdaptiveSlack``), told when the crawl
ends: Scrapy's CLOSESPIDER_TIMEOUT, and MAX_PAGES as the lifecycle budgets it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from focuscrawl import config
from focuscrawl.core.frontier.slack import AdaptiveSlack

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

    from focuscrawl.core.frontier import HostPolicy, LocalFrontier
    from focuscrawl.seam.lifecycle import Lifecycle


def fixed_slack(settings: BaseSettings) -> float | None:
    """FOCUS_SLACK, checked (None: unset)."""
    value: float | None = config.get(settings, "FOCUS_SLACK")
    if value is not None and not 0.0 <= value <= 1.0:
        raise NotConfigured(f"FOCUS_SLACK must be between 0 and 1, not {value}")
    return value


def crawl_slack(settings: BaseSettings, frontier: LocalFrontier, policy: HostPolicy,
                lifecycle: Lifecycle) -> float | None:
    """The slack the scheduler gives each pop: FOCUS_SLACK if set; else None for an order
    that waits for its best URL (FOCUS_SLACK_ADAPTIVE: ``frontier.adaptive_slack`` decides
    then), or the order's own default."""
    value = fixed_slack(settings)
    if value is not None:
        return value
    if frontier.default_slack >= 1.0 or not config.get(settings, "FOCUS_SLACK_ADAPTIVE"):
        return frontier.default_slack
    clock = policy.clock
    timeout = settings.getfloat("CLOSESPIDER_TIMEOUT")  # Scrapy's CloseSpider's
    frontier.adaptive_slack = AdaptiveSlack(
        frontier.default_slack, clock=clock,
        deadline=clock() + timeout if timeout > 0 else None,
        pages_left=lambda: lifecycle.budget() if lifecycle.max_pages else None)
    return None

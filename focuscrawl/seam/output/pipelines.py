"""Item pipelines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem, NotConfigured

from focuscrawl import config

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class MinScorePipeline:
    """Keep only pages scoring at least FOCUS_MIN_SCORE (all pages are still crawled)."""

    def __init__(self, crawler: Crawler, threshold: float) -> None:
        self.crawler = crawler
        self.threshold = threshold

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MinScorePipeline:
        threshold = config.get(crawler.settings, "FOCUS_MIN_SCORE")
        if threshold <= 0:
            raise NotConfigured  # FOCUS_MIN_SCORE is 0: every page is exported
        return cls(crawler, threshold)

    def process_item(self, item: Any) -> Any:
        score = ItemAdapter(item).get("score") or 0.0
        if score < self.threshold:
            self.crawler.stats.inc_value("focus/items_below_min_score")
            raise DropItem(f"score {score:.3f} < FOCUS_MIN_SCORE {self.threshold}")
        return item

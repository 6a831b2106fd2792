"""The project's settings for tests, the focuscrawl parts of a bare crawler, and a real
Scrapy crawl of the topic spider."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.crawler import CrawlerRunner
from scrapy.settings import Settings


def project_settings(**overrides: Any) -> Settings:
    """The project's settings module, with overrides (as -s would give them)."""
    s = Settings()
    s.setmodule("settings", priority="project")
    s.set("LOG_LEVEL", "WARNING", priority="cmdline")
    s.set("FEEDS", {}, priority="cmdline")  # tests collect items through the signal
    for name, value in overrides.items():
        s.set(name, value, priority="cmdline")
    return s


def crawl_settings(settings: Settings | None = None, spider: Any = None) -> Settings:
    """The settings a crawl of ``spider`` (the topic spider) runs with: the project's (or
    ``settings``) once Scrapy has applied the spider's and the add-ons' own."""
    from scrapy.crawler import Crawler

    if spider is None:
        from spiders.topic import TopicSpider as spider
    crawler = Crawler(spider, settings if settings is not None else project_settings())
    crawler.addons.load_settings(crawler.settings)
    return crawler.settings


def write_project(root: Path, package: str, settings_py: str, spiders: dict[str, str]) -> Path:
    """A throwaway Scrapy project of someone else's in ``root``: scrapy.cfg, ``package``'s
    settings.py and one module per spider (name -> source)."""
    (root / "scrapy.cfg").write_text(f"[settings]\ndefault = {package}.settings\n")
    (root / package / "spiders").mkdir(parents=True)
    (root / package / "__init__.py").write_text("")
    (root / package / "settings.py").write_text(settings_py)
    (root / package / "spiders" / "__init__.py").write_text("")
    for name, source in spiders.items():
        (root / package / "spiders" / f"{name}.py").write_text(textwrap.dedent(source))
    return root


#: the extension that owns the crawl's shared parts (focuscrawl.seam.services), for a bare
#: get_crawler() whose focuscrawl components are built by hand
SERVICES: dict[str, Any] = {"EXTENSIONS": {"focuscrawl.seam.services.FocusServices": 0}}

#: the extension and middlewares FocusScheduler refuses to start without, for a bare
#: get_crawler()
SCHEDULER_PARTS: dict[str, Any] = {
    **SERVICES,
    "DOWNLOADER_MIDDLEWARES": {"focuscrawl.seam.middlewares.politeness.PolitenessMiddleware": 950},
    "SPIDER_MIDDLEWARES": {"focuscrawl.seam.middlewares.journal.PageCompletionMiddleware": 1},
}


def open_scheduler(crawler: Any, spider_cls: type) -> Any:
    """A FocusScheduler opened for ``spider_cls`` on a bare crawler, no engine running."""
    from types import SimpleNamespace

    from focuscrawl.seam.scheduler import FocusScheduler

    crawler.engine = SimpleNamespace(_slot=None)  # no engine runs: nothing to wake
    sched = FocusScheduler.from_crawler(crawler)
    spider = spider_cls()
    spider.crawler = crawler
    sched.open(spider)
    return sched


@dataclass
class CrawlResult:
    items: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    crawler: Any = None

    @property
    def urls(self) -> list[str]:
        return [i["url"] for i in self.items]


async def crawl(settings: Settings | None = None, spider: Any = None, **spider_args: Any
                ) -> CrawlResult:
    """Run one crawl through the real engine; return its items (in export order) and stats."""
    from dataclasses import asdict, is_dataclass

    if spider is None:
        from spiders.topic import TopicSpider as spider
    runner = CrawlerRunner(settings if settings is not None else project_settings())
    crawler = runner.create_crawler(spider)
    result = CrawlResult(crawler=crawler)

    def collect(item: Any) -> None:
        result.items.append(asdict(item) if is_dataclass(item) else dict(item))

    crawler.signals.connect(collect, signal=signals.item_scraped)
    await runner.crawl(crawler, **spider_args)
    result.stats = crawler.stats.get_stats()
    return result

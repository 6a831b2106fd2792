"""Distributed mode: one focused crawl shared by many worker processes through Redis.

    SCRAPY_SETTINGS_MODULE=settings.distributed scrapy crawl topic -a keywords=... -a seeds=...

Everything in ``settings`` applies; the frontier (seen-set, queues, link graph, MAX_PAGES
counter) and per-server politeness move to Redis, so N workers crawl as one focused crawler
(``focuscrawl.distributed``; README, "Distributed crawling: many workers, one focused
crawl").  Every worker of a crawl must use the same crawl-order settings (strategy, N,
MAX_BUFFER, MAX_PAGES, seed, ...): a worker whose settings differ from the crawl's in Redis
refuses to join.
"""

from focuscrawl import config
from settings import *  # noqa: F403 - the project's settings, then the switches below
from settings import DOWNLOADER_MIDDLEWARES as _PROJECT_DOWNLOADER_MIDDLEWARES
from settings import EXTENSIONS as _PROJECT_EXTENSIONS
from settings import SPIDER_MIDDLEWARES as _PROJECT_SPIDER_MIDDLEWARES

# the Redis settings (REDIS_URL, FOCUS_REDIS_*), the Redis scheduler, best-first (the learned
# order's model lives in one process) and a feed file per worker: focuscrawl.config
globals().update(config.distributed_defaults())
DOWNLOADER_MIDDLEWARES = {
    **_PROJECT_DOWNLOADER_MIDDLEWARES,
    "focuscrawl.seam.middlewares.politeness.PolitenessMiddleware": None,
    # same place as the single-process one: last on the way out, first on the way back
    "focuscrawl.distributed.politeness.RedisPolitenessMiddleware": 950,
    # robots.txt fetched once per cluster (a Redis lease, the file shared), same place
    "focuscrawl.seam.middlewares.robots.RobotsTxtMiddleware": None,
    "focuscrawl.distributed.robots.RedisRobotsTxtMiddleware": 105,
}
SPIDER_MIDDLEWARES = {
    **_PROJECT_SPIDER_MIDDLEWARES,
    # tells the worker when a page's requests have all been yielded: its outlinks go to Redis
    # in one script call (outside every middleware that filters requests)
    "focuscrawl.distributed.pagemw.PageOutputMiddleware": 2,
}
EXTENSIONS = {
    **_PROJECT_EXTENSIONS,
    # the crawl's shared parts, plus this worker's link to Redis (scheduler + middleware)
    "focuscrawl.seam.services.FocusServices": None,
    "focuscrawl.distributed.connection.RedisServices": 0,
}

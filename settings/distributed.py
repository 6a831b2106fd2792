"""Distributed mode: one focused crawl shared by many worker processes through Redis.

    SCRAPY_SETTINGS_MODULE=settings.distributed scrapy crawl topic -a keywords=... -a seeds=...

Everything in ``settings`` applies; the frontier (seen-set, queues, link graph, MAX_PAGES
counter) and per-server politeness move to Redis, so N workers crawl as one focused crawler
(``focuscrawl.distributed``; README, "Distributed crawling: many workers, one focused
crawl").  Every worker of a crawl must use the same crawl-order settings (strategy, N,
MAX_BUFFER, MAX_PAGES, seed, ...): a worker whose settings differ from the crawl's in Redis
refuses to join.
"""

from settings import *  # noqa: F403 - the project's settings, then the switches below
from settings import DOWNLOADER_MIDDLEWARES as _PROJECT_DOWNLOADER_MIDDLEWARES
from settings import EXTENSIONS as _PROJECT_EXTENSIONS
from settings import SPIDER_MIDDLEWARES as _PROJECT_SPIDER_MIDDLEWARES

SCHEDULER = "focuscrawl.distributed.scheduler.RedisFocusScheduler"
FOCUS_STRATEGY = "best-first"  # the learned order is single-process (its model lives in memory)
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

# -- Redis (connection settings as scrapy-redis reads them: REDIS_URL, REDIS_PARAMS, ...) ----
REDIS_URL = "redis://127.0.0.1:6379/0"  # the crawl's Redis server; every worker uses the same
FOCUS_REDIS_KEY = "focuscrawl:%(spider)s:"  # key prefix: one crawl; reuse it to resume a crawl,
#                                             change it (or delete its keys) for a new one
FOCUS_REDIS_WORKER_TTL = 10.0  # seconds without a heartbeat before a worker counts as dead and
#                                its URLs are queued again (heartbeats every TTL/4); also the
#                                lease on a robots.txt being fetched for the cluster (renewed
#                                every TTL/4 while the fetch lasts; a dead fetcher's expires)
FOCUS_REDIS_POLL = 0.1  # seconds between a worker's checks for work other workers made possible
#                         (and for a robots.txt another worker is fetching)
FOCUS_REDIS_OUTAGE_TIMEOUT = 0.0  # Redis unreachable mid-crawl: a worker pauses (one WARNING)
#                                   and goes on when it is back; after this many seconds it
#                                   stops instead (reason redis_unavailable, exit 1; 0: waits
#                                   as long as it takes).  Back without the crawl's keys (no
#                                   persistence): it stops (redis_crawl_lost, exit 1)
FOCUS_REDIS_BLOOM_CAPACITY = 0  # >0: the seen-set is a Bloom filter sized for this many URLs
#                                 (bounded memory; a false positive skips an unseen URL)
FOCUS_REDIS_BLOOM_ERROR = 0.001  # ... and this false-positive rate
FOCUS_REDIS_BATCH = 200  # a page's score and outlinks go to Redis in one script call, at most
#                          this many links a call (a bigger call holds Redis longer for every
#                          worker); 1: one call per link
FOCUS_REDIS_KNOWN = 100_000  # URLs a worker remembers as handed out or linked to (about 160 B
#                             each), so its spider drops a link Redis would ignore without
#                             sending it (as the single process does); 0: every link goes to Redis
FOCUS_REDIS_START_LOG = 0  # >0: keep each server's last this many request starts in Redis
#                            (starts:<host>: time, worker): an audit of cluster-wide politeness

# each worker writes its own feed file
FOCUS_DEFAULT_FEED = "output/%(name)s-%(time)s-%(worker)s.jsonl"
FEED_URI_PARAMS = "focuscrawl.distributed.connection.feed_uri_params"

"""Distributed mode: one focused crawl shared by many worker processes through Redis.

    SCRAPY_SETTINGS_MODULE=settings.distributed scrapy crawl topic -a keywords=... -a seeds=...

Everything in ``settings`` applies, plus the distributed add-on: the frontier (seen-set,
queues, link graph, MAX_PAGES counter) and per-server politeness move to Redis, so N workers
crawl as one focused crawler (``focuscrawl.distributed``; docs/distributed.md).  Every worker
of a crawl must use the same crawl-order settings (strategy, N, MAX_BUFFER, MAX_PAGES, seed,
...): a worker whose settings differ from the crawl's in Redis refuses to join.
"""

import settings as _project
from settings import *  # noqa: F403 - the project's settings, then the switch below

ADDONS = {**_project.ADDONS, "focuscrawl.distributed.addon.Distributed": 10}

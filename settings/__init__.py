"""focuscrawl's Scrapy project settings.

Every ``FOCUS_*`` setting, the scheduler, the Scrapy settings focuscrawl needs and the
focuscrawl components come from ``focuscrawl.config`` (declared there once, with what each
does; listed in docs/settings.md), so the project and the add-on never disagree.  What stays
here is this project's own Scrapy setup.

Spider arguments (``-a strategy=...``) override the matching ``FOCUS_*`` setting for one crawl;
``-s NAME=VALUE`` overrides any of them.
"""

from focuscrawl import __version__, config

globals().update(config.project_defaults())

BOT_NAME = "focuscrawl"
SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"

# -- Scrapy, made safe and predictable -------------------------------------------------------
USER_AGENT = f"focuscrawl/{__version__} (+focused research crawler; obeys robots.txt)"
TELNETCONSOLE_ENABLED = False  # no open console port on a crawler machine
REMOTE_CONTROL_ENABLED = False
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
COOKIES_ENABLED = False  # a crawler needs no sessions; session-id traps are filtered instead
# Pant et al.: 10 s per page (distributed: how long a dead worker's request holds its server)
DOWNLOAD_TIMEOUT = 10
RETRY_TIMES = 1
REDIRECT_MAX_TIMES = 10
LOG_LEVEL = "INFO"
# Per-server limits are enforced by FocusScheduler + PolitenessMiddleware; Scrapy's own slots
# must never be the bottleneck (nor the only guard)
CONCURRENT_REQUESTS = 32

# -- Output: JSON-lines feeds written whole-line-per-write, torn tail cut and duplicates
# skipped on resume (focuscrawl.seam.output.feeds) ------------------------------------------
FEED_EXPORT_ENCODING = "utf-8"
FEED_STORAGES = {"": "focuscrawl.seam.output.feeds.SafeFileFeedStorage",
                 "file": "focuscrawl.seam.output.feeds.SafeFileFeedStorage"}
FEED_EXPORTERS = {"jsonlines": "focuscrawl.seam.output.feeds.SafeJsonLinesExporter",
                  "jsonl": "focuscrawl.seam.output.feeds.SafeJsonLinesExporter",
                  "jl": "focuscrawl.seam.output.feeds.SafeJsonLinesExporter"}

# -- Safety: only http(s), bounded downloads (FOCUS_BLOCK_PRIVATE guards the addresses) -------
DOWNLOAD_HANDLERS = {"http": config.HTTP_HANDLER, "https": config.HTTP_HANDLER,  # http(s) only
                     "file": None, "s3": None, "ftp": None, "data": None}
# a bigger body (or gzip bomb, inflated) is dropped: memory stays bounded; FOCUS_MAX_PAGE_BYTES
# truncates pages first
DOWNLOAD_MAXSIZE = 32 * 1024 * 1024
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024  # log pages announcing more than this

"""focuscrawl's Scrapy project settings: the add-on, and this project's own choices.

Everything focuscrawl needs -- the scheduler and its components, every ``FOCUS_*`` default, the
download handlers, the crash-safe feeds -- comes from the add-on enabled below, exactly as in
anyone else's project (``focuscrawl.config`` declares it all; docs/settings.md lists it).  What
stays here is what any Scrapy project chooses for itself.

Spider arguments (``-a strategy=...``) override the matching ``FOCUS_*`` setting for one crawl;
``-s NAME=VALUE`` overrides any of them.
"""

from focuscrawl import __version__, config

ADDONS = {"focuscrawl.addon.FocusCrawl": 0}

BOT_NAME = "focuscrawl"
SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"
# the crawl command (a usage line naming the spider) and CONCURRENT_ITEMS: declared in config
globals().update(config.project_defaults())

# -- Scrapy, made safe and predictable -------------------------------------------------------
USER_AGENT = f"focuscrawl/{__version__} (+focused research crawler; obeys robots.txt)"
TELNETCONSOLE_ENABLED = False  # no open console port on a crawler machine
REMOTE_CONTROL_ENABLED = False
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
COOKIES_ENABLED = False  # a crawler needs no sessions; session-id traps are filtered instead
RETRY_TIMES = 1
REDIRECT_MAX_TIMES = 10
LOG_LEVEL = "INFO"
# Per-server limits are enforced by focuscrawl's scheduler and politeness middleware; the
# global cap only bounds the whole crawl
CONCURRENT_REQUESTS = 32
FEED_EXPORT_ENCODING = "utf-8"

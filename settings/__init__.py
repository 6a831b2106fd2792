"""focuscrawl's default settings: every setting we add is documented here, in one place.

Spider arguments (``-a strategy=...``) override the matching ``FOCUS_*`` setting for one crawl;
``-s NAME=VALUE`` overrides any of them.
"""

BOT_NAME = "focuscrawl"
SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"

# -- Scrapy, made safe and predictable -------------------------------------------------------
USER_AGENT = "focuscrawl/0.1 (+focused research crawler; obeys robots.txt)"
TELNETCONSOLE_ENABLED = False  # no open console port on a crawler machine
REMOTE_CONTROL_ENABLED = False
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
ROBOTSTXT_OBEY = False  # Scrapy's middleware lets requests through while robots.txt loads; ours
COOKIES_ENABLED = False  # a crawler needs no sessions; session-id traps are filtered instead
DOWNLOAD_TIMEOUT = 10  # Pant et al.: 10 s per page
RETRY_TIMES = 1
REDIRECT_MAX_TIMES = 10
LOG_LEVEL = "INFO"
# Per-server limits are enforced by FocusScheduler + PolitenessMiddleware; Scrapy's own slots
# must never be the bottleneck (nor the only guard: it was seen exceeding them).
CONCURRENT_REQUESTS = 32
CONCURRENT_REQUESTS_PER_DOMAIN = 32
DOWNLOAD_DELAY = 0
AUTOTHROTTLE_ENABLED = False

SCHEDULER = "focuscrawl.scheduler.FocusScheduler"

FEED_EXPORT_ENCODING = "utf-8"

ITEM_PIPELINES = {
    "focuscrawl.pipelines.MinScorePipeline": 100,
}

# -- The topic and the crawl ---------------------------------------------------------------
FOCUS_KEYWORDS = ""  # the topic; the spider argument `keywords` overrides it
FOCUS_SEEDS = ""  # comma-separated URLs or a file of URLs; spider argument `seeds`
FOCUS_MAX_PAGES = 2000  # Pant's MAX_PAGES: pages fetched before the crawl stops
FOCUS_HOT_BODY_COUNT = 10  # Cho: a page is hot with a keyword in its title or this many in its body
FOCUS_IDF = False  # weight the cosine by IDF learnt from the pages fetched so far
FOCUS_MIN_SCORE = 0.0  # items scoring below this are not exported (all are still crawled)
FOCUS_DEFAULT_FEED = "output/%(name)s-%(time)s.jsonl"  # JSON lines written when no -o/-O/FEEDS
FOCUS_RELEVANT_SCORE = 0.2  # a page at least this similar counts as relevant in focus/harvest_rate

# -- The crawl order (focuscrawl.frontier) ---------------------------------------------------
FOCUS_STRATEGY = "best-first"  # breadth-first | cho | cho-distance | best-first | best-n-first
#                                | distiller
FOCUS_BEST_N = 256  # Best-N-First: links popped per batch (Pant: N=1 greedy, N=256 explores)
FOCUS_MAX_BUFFER = 0  # frontier bound; the lowest-scored link is evicted beyond it (0: none;
#                       Pant et al. used 256)
FOCUS_RANDOM_SEED = 0  # Best-N-First's random order within a batch is reproducible
FOCUS_HOT_DISTANCE = 3  # Cho's modified crawler: hot if distance_from_hotpage < this
FOCUS_REORDER = "none"  # Cho's reorder_queue: none (FIFO) | backlinks | score
FOCUS_DISTILLER_WEIGHT = 0.5  # distiller: share of the parent's hub weight in a link's priority
FOCUS_DISTILLER_EVERY = 50  # distiller: recompute HITS hub weights every this many pages
FOCUS_STRICT_ORDER = False  # hand out a URL only once every fetched page's outlinks are queued:
#                             the papers' sequential crawler (deterministic with
#                             CONCURRENT_REQUESTS=1, as replayed evaluations use); slower

# -- Politeness (focuscrawl.frontier.hosts + focuscrawl.middlewares.politeness) -------------
FOCUS_SERVER_KEY = "host"  # a "server" is a host name, or "ip" to group hosts by address
FOCUS_CONCURRENCY_PER_SERVER = 1  # requests in flight per server
FOCUS_DELAY = 1.0  # seconds between request starts on one server
FOCUS_ROUND_ROBIN = 0  # >0: WebBase's hashed queues, read one URL per queue in turn
FOCUS_SLOW_SECONDS = 5.0  # a response slower than this marks a slow server ...
FOCUS_SLOW_FACTOR = 2.0  # ... whose delay becomes this times its response time (Heritrix)
FOCUS_MAX_DELAY = 30.0  # cap on any per-server delay, Crawl-delay included
FOCUS_ROBOTSTXT_OBEY = True  # robots.txt, including Crawl-delay, checked by our own middleware

DOWNLOADER_MIDDLEWARES = {
    # last on the way out, first on the way back: see focuscrawl.middlewares.politeness
    "focuscrawl.middlewares.politeness.PolitenessMiddleware": 950,
}

# -- JavaScript rendering (focuscrawl.render: scrapy-playwright + the system Chromium) -------
# Off unless one of the first two asks: then, and only then, the browser handler is installed.
FOCUS_RENDER = ""  # "js": render every page in Chromium; spider argument `render` overrides it
FOCUS_RENDER_DOMAINS = ""  # comma-separated hosts/domains to render (subdomains too); others
#                            download as usual, so only the sites that need a browser pay for it
FOCUS_RENDER_WAIT_UNTIL = "networkidle"  # page.goto waits for this: text fetched by scripts
#                                          arrives after "load"; "load" is faster but misses it
FOCUS_CHROMIUM_PATH = ""  # the browser; "" finds chromium on PATH (no browser is downloaded)
FOCUS_RENDER_PROXY = ""  # the browser's proxy; "" uses $http_proxy, as Scrapy's downloads do

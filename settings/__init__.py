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
# Pant et al.: 10 s per page (distributed: how long a dead worker's request holds its server)
DOWNLOAD_TIMEOUT = 10
RETRY_TIMES = 1
REDIRECT_MAX_TIMES = 10
LOG_LEVEL = "INFO"
COMMANDS_MODULE = "focuscrawl.seam.commands"  # scrapy crawl exits 1 when the crawl cannot start
# Per-server limits are enforced by FocusScheduler + PolitenessMiddleware; Scrapy's own slots
# must never be the bottleneck (nor the only guard: it was seen exceeding them).
CONCURRENT_REQUESTS = 32
CONCURRENT_REQUESTS_PER_DOMAIN = 32
# Scrapy runs a response's output through CONCURRENT_ITEMS asyncio tasks, started for every
# response whatever its output (default 100); the item pipeline never waits, so a few are as
# fast: replayed docweb, best-first, 1,500 pages, 17.0 -> 15.0 CPU ms a page; a Redis worker,
# ~1.3 of its ~8 CPU ms a page (bench/distributed.py, 1 worker, alternating runs)
CONCURRENT_ITEMS = 16
DOWNLOAD_DELAY = 0
AUTOTHROTTLE_ENABLED = False

SCHEDULER = "focuscrawl.seam.scheduler.FocusScheduler"
EXTENSIONS = {
    # required: the parts the scheduler and the middlewares share (per-server politeness state,
    # page completion, robots.txt rules, directory statistics), built once per crawl, before
    # them; FocusScheduler refuses to start without it, a middleware fails to build
    "focuscrawl.seam.services.FocusServices": 0,
    # a focus line every LOGSTATS_INTERVAL (pages/MAX_PAGES, harvest, hot, queued, servers,
    # ETA) and a summary line at the end; FOCUS_LOGSTATS = False switches it off
    "focuscrawl.seam.watch.logstats.FocusLogStats": 0,
}
FOCUS_LOGSTATS = True

FEED_EXPORT_ENCODING = "utf-8"

ITEM_PIPELINES = {
    "focuscrawl.seam.output.pipelines.MinScorePipeline": 100,
}

# -- The topic and the crawl ---------------------------------------------------------------
FOCUS_KEYWORDS = ""  # the topic; the spider argument `keywords` overrides it
FOCUS_SEEDS = ""  # comma-separated URLs or a file of URLs; spider argument `seeds`
FOCUS_MAX_PAGES = 2000  # Pant's MAX_PAGES: pages (2xx HTML responses) fetched, then the crawl stops
FOCUS_HOT_BODY_COUNT = 10  # Cho: a page is hot with a keyword in its title or this many in its body
FOCUS_IDF = False  # weight the cosine by IDF learnt from the pages fetched so far
FOCUS_MIN_SCORE = 0.0  # items scoring below this are not exported (all are still crawled)
FOCUS_DEFAULT_FEED = "output/%(name)s-%(time)s.jsonl"  # JSON lines written when no -o/-O/FEEDS
FOCUS_RELEVANT_SCORE = 0.1  # a page at least this similar counts as relevant in focus/harvest_rate

# -- The crawl order (focuscrawl.core.frontier) ---------------------------------------------------
FOCUS_STRATEGY = "learned"  # learned | breadth-first | cho | cho-distance | best-first
#                             | best-n-first | distiller (the seed papers' orders, unchanged)
FOCUS_BEST_N = 256  # Best-N-First: links popped per batch (Pant: N=1 greedy, N=256 explores)
FOCUS_MAX_BUFFER = 0  # frontier bound; the lowest-scored link is evicted beyond it (0: none;
#                       Pant et al. used 256)
FOCUS_RANDOM_SEED = 0  # Best-N-First's random order within a batch is reproducible
FOCUS_BEST_N_BARRIER = False  # Best-N-First: True chooses the next batch only once every URL of
#                               the current one was handed out (Pant et al.); False (default)
#                               opens it early while the batch's URLs all wait on busy servers
#                               and others idle.  FOCUS_STRICT_ORDER implies the barrier
FOCUS_HOT_DISTANCE = 3  # Cho's modified crawler: hot if distance_from_hotpage < this
FOCUS_REORDER = "none"  # Cho's reorder_queue: none (FIFO) | backlinks | score
FOCUS_DISTILLER_WEIGHT = 0.5  # distiller: share of the parent's hub weight in a link's priority
FOCUS_DISTILLER_EVERY = 50  # distiller: recompute HITS hub weights every this many pages
FOCUS_SLACK = None  # politeness vs focus: while the best URL waits on a busy server, another
#                     server's URL is handed out only if its value is at least (1 - SLACK) x
#                     the best one's; 1.0 takes any idle server's best URL, 0 always waits for
#                     the best (orders ranked by a value: learned, best-first, distiller).
#                     None: 0.5 for learned (bench/live_focus.py on docweb: 6-38% more
#                     relevant pages in the same number of pages than 1.0; 0.86x the pages/s
#                     at a 0.25 s delay, 0.38x at 1 s when the topic sits on 2-3 servers),
#                     1.0 for the seed strategies (as in the papers)
FOCUS_STRICT_ORDER = False  # hand out a URL only once every fetched page's outlinks are queued:
#                             the papers' sequential crawler (deterministic with
#                             CONCURRENT_REQUESTS=1, as replayed evaluations use); slower
FOCUS_FRONTIER_MEMORY = 500_000  # URLs queued in memory at most (0: no limit).  Past it the
#   lowest-priority quarter of the in-memory queue goes to disk (JOBDIR/focus_state.sqlite, or
#   an SQLite temporary file in $SQLITE_TMPDIR, $TMPDIR or /var/tmp, deleted even by kill -9)
#   in batches of 1/8 of the limit, and the best spilled batch comes back when fewer than half
#   the limit are queued in memory.
#   The approximation: a spilled URL's priority is frozen at spill time until it comes back
#   (re-ranks and better links to it do not reach it; it counts as a duplicate), and batches
#   come back by the best priority they left with; back in memory a URL is keyed again (the
#   learned order re-scores it).  Below the limit every order is exactly as without it.
#   Measured (bench/frontier.py --memory rss --own-strings, URL strings counted): with
#   --spill 500000, 10,000,000 URLs queued take 52 bytes each in all for best-first (500 MB;
#   ~330 a URL in memory, the rest on disk); the learned order (its feature rows) with 2,000,000
#   URLs and --spill 100000 127 bytes each (254 MB), ~1.1 GB at 10M and 500,000 in memory by
#   the same costs (extrapolated): a queue of 10M URLs fits 1.5 GB with the crawler's own
#   ~100 MB; what a crawl keeps per page fetched comes on top.  The default was 2,000,000
#   (~3 GB in memory for the learned order with real link text).
#   A URL on disk keeps 11-16 bytes in memory (its fingerprint, so that a link to it is
#   known).  Part of the crawl order: a JOBDIR crawl resumes only with the value it started
#   with (one started under the old default, 2,000,000, resumes under it when this is left
#   at the default).  FocusPriorityQueue
#   (focuscrawl's order inside Scrapy's own scheduler) never spills
FOCUS_SAME_ACROSS_SCHEMES = True  # http://host/p and https://host/p are one page: a link to
#   one is a duplicate while the other is queued or was fetched as a page (not when it only
#   redirected: its target is fetched).  Only without a port in the URL.  Sites serve both
#   (old absolute links, http redirecting to https), and a crawl that takes them for two
#   pages fetches the page twice or pays a redirect: on docweb one topic's 500-page learned
#   crawl fetched 154 pages twice this way (counted in focus/scheme_twins, and among
#   focus/duplicates).  Every order; part of the crawl order (a JOBDIR from
#   before the setting resumes without it).  The distributed mode takes them as two URLs.

# -- The learned order (focuscrawl.core.frontier.learned, focuscrawl.core.learning) --------------
# A link's priority is P(its target is relevant), predicted from its anchor text, URL, nearby
# text, its parent's and grandparent's relevance and what the crawl learnt about its host and
# directory; the model trains on the crawl's own pages (labels from each page's keyword match,
# see focuscrawl.core.frontier.learned).
FOCUS_EXPLAIN = False  # each item gets "why": the parts of its URL's priority when it was
#                       handed out (learned: bias, each link feature's weight x value, its
#                       words' learned weights, the topic profile on its words, the
#                       exploration bonus; their sum's sigmoid is the value under the model of
#                       that moment, +1 for a seed; the item's priority is the value when the
#                       link was last scored).  Read only: the order is the same.  Orders
#                       without parts (the seed strategies) and distributed workers add none
FOCUS_LEARN_EVERY = 25  # pages between retrains: the topic profile is rebuilt, recent examples
#                         replayed and the frontier re-scored (vectorised)
FOCUS_LEARN_RERANK = 65536  # a retrain re-scores the whole frontier up to this many queued
#                            links (a docweb crawl's, ~50,000 at most, keeps its order); 0:
#                            always the whole frontier (bench/scale.py: a full re-rank is ~5 us a
#                            link, 21 ms a page at 100,000 links, and pages per CPU second fell
#                            from 43 to 13 over a 25-minute crawl)
FOCUS_LEARN_RERANK_BATCH = 4096  # past FOCUS_LEARN_RERANK, the links a retrain re-scores: the
#                                  best quarter and a window of the others that moves on at each
#                                  retrain, re-keyed in place (~9 us a link: ~1.5 ms a page),
#                                  whatever the frontier's size.  Both are part of the crawl
#                                  order (a JOBDIR resumes only with the values it started with)
FOCUS_EXPLORE = None  # exploration: a UCB bonus (in log-odds) for links into hosts and
#                       directories the crawl knows little about; 0 exploits only; None: 2.0,
#                       or 1.0 with examples (docweb from the neighbours, 500 pages, 30 crawls
#                       each leaving a seed out: 935 relevant vs 882 with 1.0; from the
#                       examples 2.0 found 328 vs 325 but 175 vs 190 in the first 100)
FOCUS_EXPLORE_HOSTS = None  # share of the URLs handed out that a bandit over hosts chooses (the
#                             best link of the host with the highest value + FOCUS_EXPLORE /
#                             sqrt(1 + pages fetched there); a host that never answered is not
#                             its choice); 0: off; None: 0.5, or 0 with examples (docweb, 500
#                             pages, leaving a seed out: from the neighbours 1,215 relevant
#                             vs 962 at 0.1; from the examples 310 vs 317 at 0.1)
FOCUS_LEARN_DISCOUNT = 0.5  # a relevant page raises its parent's label to this times its own,
#                             its grandparent's to the square (links to hubs that lead on); 0 off
FOCUS_EXAMPLES = False  # the seeds are on-topic examples (also `-a examples=true`): they are
#                        labelled relevant and grow the topic profile, and a page similar to
#                        that profile is relevant as a label (FOCUS_PROFILE_SCORE 0.3)
FOCUS_PROFILE_SCORE = None  # >0: a page this similar to the grown topic profile is fully
#                            relevant as a label; 0: labels from the keywords alone (the
#                            profile still scores link text); None (default): 0.3 with
#                            examples, else 0. Without examples, on docweb's dev topics a
#                            profile label let one false positive pull the crawl into its
#                            neighbourhood.
FOCUS_LEARN_MEMORY = 5000  # training examples kept (the most recent), and the parents whose
#                            links' order is kept for link nearness; bounds memory and time
# The slides' link nearness and hub evidence, on only with examples by default: on docweb's dev
# topics (replayed, 500 pages) window 4 / weight 2 / hub 1 found 317 vs 307 relevant pages from
# the examples (190 vs 161 at 100 pages) but 192 vs 194 from the neighbours (92 vs 109 at 250
# pages); window 8 / weight 4: 287 and 175 (before the examples option)
FOCUS_SIBLING_WINDOW = None  # links on each side of a fetched one that nearness reaches (0: off;
#                              None: 4 with examples, else 0)
FOCUS_SIBLING = 2.0  # prior weight of nearness: the fetched page's label x 0.7 per place away
FOCUS_HUB = None  # prior weight of a parent's hub evidence (how relevant its fetched links
#                   were); 0: off; None: 1.0 with examples, else 0.  Off, no parent page is
#                   kept for it (~50 bytes a page fetched on a long crawl)

# -- Politeness (focuscrawl.core.frontier.hosts + focuscrawl.seam.middlewares.politeness) ----------
FOCUS_SERVER_KEY = "host"  # a "server" is a host name, or "ip" to group hosts by address (looked
#                            up by the reactor's resolver before a request is scheduled:
#                            focuscrawl.seam.servers, focuscrawl.seam.middlewares.addresses)
FOCUS_CONCURRENCY_PER_SERVER = 1  # requests in flight per server
FOCUS_DELAY = 1.0  # seconds between request starts on one server
FOCUS_ROUND_ROBIN = 0  # >0: WebBase's hashed queues, read one URL per queue in turn
FOCUS_SLOW_SECONDS = 5.0  # a response slower than this marks a slow server ...
FOCUS_SLOW_FACTOR = 2.0  # ... whose delay becomes this times its response time (Heritrix)
FOCUS_MAX_DELAY = 30.0  # cap on any per-server delay, Crawl-delay included
FOCUS_ROBOTSTXT_OBEY = True  # robots.txt, including Crawl-delay, checked by our own middleware
FOCUS_START_LOG = 0  # >0: keep each server's last this many request start times (monotonic, as
#                      the delay counts them): an audit of politeness from the crawler's side,
#                      where a loaded machine's late sends do not blur it as arrivals at the
#                      server do
FOCUS_GC_FREEZE = True  # gc.freeze() the objects alive at spider open: full GC passes over them
#                         stalled the event loop 60-170 ms, so requests left late and the next
#                         one reached the server less than a delay after
FOCUS_GC_THRESHOLD = 10_000  # allocations between collections of the youngest objects
#                              (Python's 700: a replayed crawl spent ~10% of its CPU in the
#                              collector; 10,000: 23% less collector time for best-first, 37%
#                              less for learned); 0: Python's own, untouched

DOWNLOADER_MIDDLEWARES = {
    # holds a request right before its download; sees every outcome on the way back before any
    # middleware can turn it into a redirect or retry: see focuscrawl.seam.middlewares.politeness
    "focuscrawl.seam.middlewares.politeness.PolitenessMiddleware": 950,
    # above RetryMiddleware, so failures are recorded too (off unless FOCUS_WARC is set)
    "focuscrawl.seam.output.warc.WarcRecorder": 990,
    # FOCUS_SERVER_KEY = "ip" only: a redirect target's host resolved before RedirectMiddleware
    # (600) schedules it: see focuscrawl.seam.middlewares.addresses
    "focuscrawl.seam.middlewares.addresses.RedirectAddressMiddleware": 610,
}

# -- robots.txt (focuscrawl.seam.middlewares.robots; FOCUS_ROBOTSTXT_OBEY above switches it) -------
FOCUS_ROBOTSTXT_TTL = 86400.0  # seconds a fetched robots.txt is trusted (RFC 9309: 24 h)
FOCUS_ROBOTSTXT_ERROR_TTL = 600.0  # robots.txt 5xx/429/network error: disallow the host this
#                                    long, then fetch again (RFC 9309 and Google: unreachable
#                                    means disallow; a cached copy stays in force meanwhile)
FOCUS_ROBOTSTXT_HOLDS = 3  # robots.txt answered 5xx/429 (the server is up: come back later):
#                            under FocusScheduler the host's URLs are not refused but wait
#                            FOCUS_ROBOTSTXT_ERROR_TTL, their server held (focus/robots/held),
#                            then robots.txt is fetched again; this many times in a row (as
#                            Nutch's http.robots.503.defer.visits), then refused.  Holds end
#                            once held servers are all a crawl has left (their URLs refused,
#                            those servers not held again: focus/robots/holds_ended).  0:
#                            refuse at once.  A host that could not be reached at all
#                            (network error, timeout) has its URLs refused, as every
#                            unreachable host's are under Scrapy's own scheduler; distributed
#                            workers hold the server for the whole cluster (in Redis)
FOCUS_ROBOTSTXT_HOSTS = 10_000  # hosts whose rules are kept (1-2 KB each); past it the one
#                                no request needed for longest is forgotten, and its robots.txt
#                                fetched again if a request for it comes
# Distributed mode (settings.distributed) fetches each robots.txt once per cluster and shares
# the raw file, or "unreachable", through Redis with these same two TTLs
# (focuscrawl.distributed.robots; the lease uses FOCUS_REDIS_WORKER_TTL and FOCUS_REDIS_POLL)
# (the FOCUS_REDIS_* settings, FOCUS_REDIS_OUTAGE_TIMEOUT included, are in settings/distributed.py)

# -- Crawl hygiene: traps and junk (focuscrawl.seam.middlewares.filters, focuscrawl.core.traps) ---
# trap and junk filters on outlinks (focuscrawl.seam.middlewares.filters.LinkFilterMiddleware)
FOCUS_FILTERS_ENABLED = True  # False switches every outlink filter below off at once
FOCUS_FILTER_SCHEMES = True  # drop mailto:, javascript:, file:, data:, ... (only http(s) fetched)
FOCUS_FILTER_CGI = True  # drop /cgi-bin/ URLs: WebBase's rule against generated page sets
FOCUS_FILTER_REPEATED_SEGMENT = 3  # drop a path with one segment this many times (0: off); /a/a/a
FOCUS_MAX_URL_LENGTH = 256  # drop longer URLs (0: off): long URLs are generated, rarely content
FOCUS_FILTER_CALENDAR = True  # drop calendar navigation (?month=..&year=.., /calendar/<x>)
FOCUS_FILTER_SESSION_ID = True  # drop session-id URLs (?sid=, ;jsessionid=): endless duplicates
FOCUS_FILTER_ROBOTS = True  # drop outlinks a host's already-fetched robots.txt refuses
FOCUS_MAX_PAGES_PER_SERVER = 0  # distinct URLs queued per server (0: no cap); ends what a trap
#                                 heuristic misses (Cho's SLAC server had 352,944 URLs)
# the slides' refinements (001_*), off by default so the papers' crawl orders stay comparable
FOCUS_NEARNESS = False  # same-site links only under the page's directory, off-site ones only
#                         with a keyword in URL or anchor; stats focus/not_fetched/nearness_pct
FOCUS_IRRELEVANT_DIRS = False  # stop fetching a directory that proved irrelevant; stats
#                                focus/not_fetched/irrelevant_dir_pct
FOCUS_IRRELEVANT_DIR_PAGES = 25  # ... once more than this many of its pages were fetched
FOCUS_IRRELEVANT_DIR_SHARE = 0.9  # ... and at least this share scored < FOCUS_RELEVANT_SCORE

# -- Fetch rules of Pant et al. (focuscrawl.seam.middlewares.fetchrules; DOWNLOAD_TIMEOUT above) ---
FOCUS_MAX_PAGE_BYTES = 100 * 1024  # keep the first 100 KB of a page; longer pages are truncated
#                                    (flag "truncated") and still scored, not dropped (0: off)
FOCUS_FETCH_HTML_ONLY = True  # stop a download at its headers if its Content-Type is not HTML
FOCUS_FETCH_TYPES = ["text/html", "application/xhtml+xml"]  # what FOCUS_FETCH_HTML_ONLY keeps

DOWNLOADER_MIDDLEWARES |= {
    # trap rules for redirect targets, and queued URLs of a directory rejected meanwhile,
    # before robots.txt is even asked
    "focuscrawl.seam.middlewares.filters.GateMiddleware": 60,
    # our robots.txt (Scrapy's RobotsTxtMiddleware at 100 stays off: ROBOTSTXT_OBEY = False)
    "focuscrawl.seam.middlewares.robots.RobotsTxtMiddleware": 105,
    # after retries and decompression on the way back: final statuses, decoded bodies
    "focuscrawl.seam.middlewares.fetchrules.FetchRulesMiddleware": 540,
}
SPIDER_MIDDLEWARES = {
    # on the spider's output before Scrapy's own (depth, URL length): outlinks never queued
    "focuscrawl.seam.middlewares.filters.LinkFilterMiddleware": 950,
    # FOCUS_SERVER_KEY = "ip" only: seeds' and outlinks' hosts resolved (never on the reactor
    # thread) before the link filter's per-server cap and the scheduler ask for their server
    "focuscrawl.seam.middlewares.addresses.ServerAddressMiddleware": 960,
}

# -- Persistence: JOBDIR and the output (focuscrawl.seam.persistence, focuscrawl.seam.output) ---
# With JOBDIR the crawl state lives in JOBDIR/focus_state.sqlite (focuscrawl.core.frontier.stores):
# a snapshot plus a journal, so the same command resumes after Ctrl-C *or* kill -9.  Give the
# output as `-o FILE.jsonl` (or -O: a resumed crawl appends anyway); a file name with %(time)s
# changes per run and cannot be deduplicated.
FOCUS_JOURNAL_SYNC = "NORMAL"  # SQLite synchronous: NORMAL survives kill -9 and the OOM killer
#                                (no fsync per commit); FULL also survives a power cut, slower
FOCUS_JOURNAL_COMMIT_OPS = 1000  # commit the journal at least every this many operations ...
FOCUS_JOURNAL_COMMIT_SECONDS = 0.5  # ... or this often (pages commit when fetched and done)
FOCUS_JOURNAL_SNAPSHOT_OPS = 50000  # rewrite the snapshot after this many operations (and
#                                     twice the URLs known): bounds the replay on resume
FOCUS_JOURNAL_MAX_OPEN = 0  # pages handed out and not yet done (0: CONCURRENT_REQUESTS): a
#                            kill makes the crawl fetch at most these again, even when the
#                            spider lags behind the downloads
FOCUS_FEED_FSYNC = False  # fsync the JSON-lines output after each line: only power cuts need it
# JSON-lines feeds written whole-line-per-write, torn tail cut and duplicates skipped on resume
FEED_STORAGES = {"": "focuscrawl.seam.output.feeds.SafeFileFeedStorage",
                 "file": "focuscrawl.seam.output.feeds.SafeFileFeedStorage"}
FEED_EXPORTERS = {"jsonlines": "focuscrawl.seam.output.feeds.SafeJsonLinesExporter",
                  "jsonl": "focuscrawl.seam.output.feeds.SafeJsonLinesExporter",
                  "jl": "focuscrawl.seam.output.feeds.SafeJsonLinesExporter"}
SPIDER_MIDDLEWARES |= {
    # outermost: sees every outlink and item of a page, so "done" is journaled after them all
    "focuscrawl.seam.middlewares.journal.PageCompletionMiddleware": 1,
    # near the engine: while the spider's start() may still yield seeds, servers held for
    # their robots.txt are waited for (the holds end only once nothing else is left)
    "focuscrawl.seam.middlewares.start.SeedsPendingMiddleware": 2,
}

# -- Safety: what is never fetched, and bounded downloads (focuscrawl.seam.middlewares.safety) -----
# Safe defaults: only http(s); no private addresses reached through links; bounded downloads
FOCUS_BLOCK_PRIVATE = "auto"  # refuse loopback/private/link-local hosts and local names: True,
#                               False, or auto = on unless a seed is itself private (intranet or
#                               test crawls); resolved addresses are checked when not proxied
DOWNLOAD_HANDLERS = {"file": None, "s3": None, "ftp": None, "data": None}  # http(s) only
DOWNLOAD_MAXSIZE = 32 * 1024 * 1024  # a bigger body (or gzip bomb, inflated) is dropped: memory
#                                      stays bounded; FOCUS_MAX_PAGE_BYTES truncates pages first
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024  # log pages announcing more than this
FOCUS_DROP_BINARY = True  # drop a body declared HTML that is binary (images, archives behind
#                           a wrong Content-Type) instead of scoring mojibake
DOWNLOADER_MIDDLEWARES |= {
    # before robots.txt is fetched for such a host
    "focuscrawl.seam.middlewares.safety.PrivateAddressMiddleware": 50,
    # on the way back after decompression and truncation (fetch rules at 540)
    "focuscrawl.seam.middlewares.safety.BinaryBodyMiddleware": 535,
}

# -- Record and replay (focuscrawl.seam.output.warc, focuscrawl.seam.replay) -----------------
FOCUS_WARC = ""  # record every download into this WARC (%(name)s, %(time)s filled in); "" off
FOCUS_REPLAY = ""  # answer every request from this WARC instead of the network (the virtual
#                    crawler of the papers: no network, no politeness delay); "" off

# -- JavaScript rendering (focuscrawl.seam.render: scrapy-playwright + the system Chromium) -------
# Off unless one of the first two asks: then, and only then, the browser handler is installed.
FOCUS_RENDER = ""  # "js": render every page in Chromium; spider argument `render` overrides it
FOCUS_RENDER_DOMAINS = ""  # comma-separated hosts/domains to render (subdomains too); others
#                            download as usual, so only the sites that need a browser pay for it
FOCUS_RENDER_WAIT_UNTIL = "networkidle"  # page.goto waits for this: text fetched by scripts
#                                          arrives after "load"; "load" is faster but misses it
FOCUS_CHROMIUM_PATH = ""  # the browser; "" finds chromium on PATH (no browser is downloaded)
FOCUS_RENDER_PROXY = ""  # the browser's proxy; "" uses $http_proxy, as Scrapy's downloads do

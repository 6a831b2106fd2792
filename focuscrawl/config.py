"""Every focuscrawl setting, declared once: name, type, default and one line of what/why.

The project's settings module (``settings/``), the add-ons (``focuscrawl.seam.addon``,
``focuscrawl.distributed.addon``) and every component take their defaults from here;
``docs/settings.md`` is generated from it (``python -m focuscrawl.config --markdown``).
Components read a setting with :func:`get` (the one default, the one type) or build a typed
option object once (``RobotsOptions.from_settings(crawler.settings)``).  No Scrapy import:
the functions take Scrapy's ``BaseSettings`` (anything with ``get``/``getbool``/...).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

# Scopes: who applies an option's default.  "addon": focuscrawl.seam.addon.FocusCrawl, in this
# project (settings/ enables it) as in any other: everything focuscrawl needs; "project": this
# project's settings module only (its own choices, or read before any add-on is loaded);
# "distributed": focuscrawl.distributed.addon.Distributed (settings/distributed.py enables it).
FOCUS = frozenset({"addon"})
PROJECT = frozenset({"project"})
DISTRIBUTED = frozenset({"distributed"})
KINDS = ("bool", "int", "float", "str", "list", "dict", "float?", "int?", "bool?", "any")
# Tiers: "user", the settings a user reaches for (the README's table, first in
# docs/settings.md; kept to about 25 so they stay findable); "advanced", everything else (an
# order's internals, journal tuning, research switches): a new setting is advanced unless
# marked otherwise.
TIERS = ("user", "advanced")


@dataclass(frozen=True)
class Option:
    """One setting: its default, how it is read (``kind``), and one line on what it does."""

    name: str
    kind: str  # one of KINDS: the BaseSettings getter, "?" = None (unset) is a value
    default: Any
    doc: str
    group: str
    scope: frozenset[str] = FOCUS
    #: the value settings/distributed.py gives it instead, if any
    distributed: Any = None
    tier: str = "advanced"  # one of TIERS


OPTIONS: dict[str, Option] = {}
GROUPS: dict[str, str] = {}  # group title -> one line about it, in declaration order


def _group(title: str, about: str) -> str:
    GROUPS[title] = about
    return title


def _declare(group: str, name: str, kind: str, default: Any, doc: str, *,
             scope: frozenset[str] = FOCUS, distributed: Any = None,
             tier: str = "advanced") -> None:
    assert kind in KINDS and tier in TIERS and name not in OPTIONS, name
    OPTIONS[name] = Option(name, kind, default, doc, group, scope, distributed, tier)


USER = "user"  # _declare(..., tier=USER): a setting in the README's table


# -- declarations ------------------------------------------------------------------------------
#: http(s) downloads: Scrapy's handler without Twisted's silent re-send of a request whose
#: kept-alive connection dropped (behind the politeness)
HTTP_HANDLER = "focuscrawl.seam.http.HTTPDownloadHandler"
_FEEDS = "focuscrawl.seam.output.feeds."

G = _group("Scrapy settings focuscrawl sets",
           "Applied by the add-on (the project's settings enable it; an explicit value wins): "
           "the scheduler, Scrapy's own limits that would fight per-server politeness, the "
           "download handlers and the crash-safe feeds. A dict is merged: an entry the project "
           "names itself wins.")
_declare(G, "SCHEDULER", "str", "focuscrawl.seam.scheduler.FocusScheduler",
         "The focused frontier with per-server politeness.",
         distributed="focuscrawl.distributed.scheduler.RedisFocusScheduler")
_declare(G, "CONCURRENT_REQUESTS_PER_DOMAIN", "int", 32,
         "Scrapy's per-domain slots are never the bottleneck: focuscrawl limits per server.")
_declare(G, "DOWNLOAD_DELAY", "float", 0,
         "No second delay: FOCUS_DELAY is the per-server delay.")
_declare(G, "AUTOTHROTTLE_ENABLED", "bool", False,
         "No throttle moving the delay behind focuscrawl's back.")
_declare(G, "ROBOTSTXT_OBEY", "bool", False,
         "Scrapy's robots.txt middleware lets requests through while robots.txt loads; "
         "focuscrawl's own (FOCUS_ROBOTSTXT_OBEY) holds them.")
_declare(G, "DOWNLOAD_TIMEOUT", "float", 10,
         "Pant et al.'s 10 s per page; distributed, also how long a dead worker's request "
         "holds its server.")
_declare(G, "DOWNLOAD_MAXSIZE", "int", 32 * 1024 * 1024,
         "A bigger body (a gzip bomb, inflated) is dropped: memory stays bounded "
         "(FOCUS_MAX_PAGE_BYTES truncates pages first).")
_declare(G, "DOWNLOAD_WARNSIZE", "int", 4 * 1024 * 1024, "Log pages announcing more than this.")
_declare(G, "DOWNLOAD_HANDLERS", "dict",
         {"http": HTTP_HANDLER, "https": HTTP_HANDLER,
          "file": None, "s3": None, "ftp": None, "data": None},
         "http(s) through HTTP_HANDLER; no other scheme is fetched (a link or redirect to "
         "file:, ftp:, s3: or data: goes nowhere).")
_declare(G, "FEED_STORAGES", "dict",
         {"": _FEEDS + "SafeFileFeedStorage", "file": _FEEDS + "SafeFileFeedStorage"},
         "Local feeds crash-safe: a torn line cut and pages already written skipped on "
         "resume (focuscrawl.seam.output.feeds).")
_declare(G, "FEED_EXPORTERS", "dict",
         {"jsonlines": _FEEDS + "SafeJsonLinesExporter", "jsonl": _FEEDS + "SafeJsonLinesExporter",
          "jl": _FEEDS + "SafeJsonLinesExporter", "parquet": _FEEDS + "ParquetItemExporter"},
         "JSON lines written one whole line per write (a kill -9 loses no page written); Parquet "
         "staged as such rows and written when the feed closes.")
_declare(G, "COMMANDS_MODULE", "str", "focuscrawl.seam.commands",
         "The project's `crawl` command names the spider in its usage line (read before any "
         "add-on loads, so the project sets it).", scope=PROJECT)
_declare(G, "CONCURRENT_ITEMS", "int", 16,
         "Tasks per response's output (Scrapy: 100); the item pipeline never waits, so a few "
         "are as fast and cost less CPU.", scope=PROJECT | DISTRIBUTED)

G = _group("The topic and the crawl", "What the crawl is about and when it stops.")
_declare(G, "FOCUS_LOGSTATS", "bool", True,
         "A focus line every LOGSTATS_INTERVAL and a summary at the end (FocusLogStats).")
_declare(G, "FOCUS_KEYWORDS", "str", "", "The topic; the spider argument `keywords` overrides it.",
         tier=USER)
_declare(G, "FOCUS_SEEDS", "str", "",
         "Comma-separated seed URLs or a file of URLs; spider argument `seeds`.", tier=USER)
_declare(G, "FOCUS_EXAMPLE_URLS", "str", "",
         "On-topic example pages (URLs, comma/space-separated, or a file of URLs) a page "
         "classifier learns from, fetched first; spider argument `examples`.")
_declare(G, "FOCUS_NEGATIVE_URLS", "str", "",
         "Off-topic example pages for the page classifier; spider argument `negatives`.")
_declare(G, "FOCUS_RELEVANCE_WEIGHT", "float", 0.0,
         "With examples, the classifier's probability's share of the learned order's page "
         "label (the keyword label the rest; 0: keywords only, measured better).")
_declare(G, "FOCUS_MAX_PAGES", "int", 2000,
         "Pant's MAX_PAGES: pages (2xx HTML responses) fetched, then the crawl stops.", tier=USER)
_declare(G, "FOCUS_HOT_BODY_COUNT", "int", 10,
         "Cho: a page is hot with a keyword in its title or this many in its body.")
_declare(G, "FOCUS_IDF", "bool", False,
         "Weight the cosine by IDF learnt from the pages fetched so far.")
_declare(G, "FOCUS_MIN_SCORE", "float", 0.0,
         "Items scoring below this are not exported (all are still crawled).", tier=USER)
_declare(G, "FOCUS_DEFAULT_FEED", "str", "output/%(name)s-%(time)s.jsonl",
         "JSON lines written when no -o/-O/FEEDS is given (distributed: one per worker).",
         distributed="output/%(name)s-%(time)s-%(worker)s.jsonl")
_declare(G, "FOCUS_RELEVANT_SCORE", "float", 0.1,
         "A page at least this similar counts as relevant: in focus/harvest_rate, and a seed "
         "in the learned order's verdict on whether the seeds are examples.")

G = _group("The crawl order", "focuscrawl.core.frontier: the seed papers' orders and the "
           "learned one, and how politeness may bend them.")
_declare(G, "FOCUS_STRATEGY", "str", "learned",
         "learned | breadth-first | cho | cho-distance | best-first | best-n-first | distiller "
         "(the learned order's model lives in one process: not distributed).",
         distributed="best-first", tier=USER)
_declare(G, "FOCUS_BEST_N", "int", 256,
         "Best-N-First: links popped per batch (Pant: N=1 greedy, N=256 explores).")
_declare(G, "FOCUS_MAX_BUFFER", "int", 0,
         "Frontier bound: the lowest-scored link is evicted beyond it (0: none; Pant used 256).")
_declare(G, "FOCUS_RANDOM_SEED", "int", 0,
         "Best-N-First's random order within a batch is reproducible.")
_declare(G, "FOCUS_BEST_N_BARRIER", "bool", False,
         "Best-N-First: choose the next batch only once the current one was all handed out "
         "(Pant); False opens it while its URLs wait on busy servers.")
_declare(G, "FOCUS_HOT_DISTANCE", "int", 3,
         "Cho's modified crawler: hot if distance_from_hotpage < this.")
_declare(G, "FOCUS_REORDER", "str", "none", "Cho's reorder_queue: none (FIFO) | backlinks | score.")
_declare(G, "FOCUS_DISTILLER_WEIGHT", "float", 0.5,
         "Distiller: share of the parent's hub weight in a link's priority.")
_declare(G, "FOCUS_DISTILLER_EVERY", "int", 50,
         "Distiller: recompute HITS hub weights every this many pages.")
_declare(G, "FOCUS_SLACK", "float?", None,
         "While the best URL waits on a busy server, another server's URL goes out only if "
         "worth at least (1 - SLACK) x the best; None: FOCUS_SLACK_ADAPTIVE for learned (else "
         "0.5), 1.0 for the papers'.", tier=USER)
_declare(G, "FOCUS_SLACK_ADAPTIVE", "bool", True,
         "With FOCUS_SLACK unset, the learned order's slack follows the crawl's bound: 0.5 "
         "while MAX_PAGES binds, 1.0 if CLOSESPIDER_TIMEOUT ends it first, else weighed.")
_declare(G, "FOCUS_STRICT_ORDER", "bool", False,
         "Hand out a URL only once every fetched page's outlinks are queued: the papers' "
         "sequential crawler (deterministic with CONCURRENT_REQUESTS=1); slower.")
_declare(G, "FOCUS_FRONTIER_MEMORY", "int", 500_000,
         "URLs queued in memory at most (0: no limit); past it the worst quarter spills to "
         "SQLite on disk. Part of the crawl order: a JOBDIR resumes only with its value.",
         tier=USER)
_declare(G, "FOCUS_SAME_ACROSS_SCHEMES", "bool", True,
         "http://host/p and https://host/p are one page (URLs without a port): no page "
         "fetched twice. Part of the crawl order.")

G = _group("The learned order", "focuscrawl.core.learned: P(target relevant) from "
           "anchor, URL, context, parents and what the crawl learnt about hosts and directories.")
_declare(G, "FOCUS_EXPLAIN", "bool", False,
         "Each item gets `why`: the parts of its URL's priority when handed out (read only).",
         tier=USER)
_declare(G, "FOCUS_LEARN_EVERY", "int", 25,
         "Pages between retrains (profile rebuilt, examples replayed, frontier re-scored); "
         "failed fetches do not count.")
_declare(G, "FOCUS_LEARN_RERANK", "int", 65536,
         "A retrain re-scores the whole frontier up to this many links (0: always all).")
_declare(G, "FOCUS_LEARN_RERANK_BATCH", "int", 4096,
         "Past FOCUS_LEARN_RERANK: links a retrain re-scores (best quarter + a moving window).")
_declare(G, "FOCUS_EXPLORE", "float?", None,
         "UCB bonus (log-odds) for little-known hosts and directories; 0 exploits only; "
         "None: 2.0, or 1.0 with examples.", tier=USER)
_declare(G, "FOCUS_EXPLORE_HOSTS", "float?", None,
         "Share of URLs a bandit over hosts chooses; 0: off; None: 0.5, or 0 with examples.",
         tier=USER)
_declare(G, "FOCUS_PARENT_EXPERT", "bool?", None,
         "Mix a parent-only expert (best-first's evidence) into the learned order's "
         "probabilities, weighted by how well each predicts the crawl's labels; None: on.")
_declare(G, "FOCUS_EARNED_OPTIMISM", "bool?", None,
         "The host bandit's bonus times the host's relevance rate (gives up hosts whose pages "
         "all proved irrelevant); None: off.")
_declare(G, "FOCUS_BANDIT_BACKLINKS", "bool?", None,
         "On a host whose fetched pages all proved off the topic, the host bandit takes its "
         "most-linked queued URL (its lists: the way out), not its best-valued; None: on.")
_declare(G, "FOCUS_LEARN_DISCOUNT", "float", 0.5,
         "A relevant page raises its parent's label to this times its own (grandparent: the "
         "square); 0: off.")
_declare(G, "FOCUS_EXAMPLES", "bool?", False,
         "The seeds are on-topic examples: labelled relevant, they grow the topic profile; "
         "auto (-a examples=auto): the learned order decides, yes if half of them match.")
_declare(G, "FOCUS_PROFILE_SCORE", "float?", None,
         "A page this similar to the grown profile is relevant as a label; 0: keywords only; "
         "None: 0.3 with examples, else 0.")
_declare(G, "FOCUS_LEARN_MEMORY", "int", 5000,
         "Training examples kept (the most recent), and parents kept for link nearness.")
_declare(G, "FOCUS_SIBLING_WINDOW", "int?", None,
         "Links on each side of a fetched one that nearness reaches (0: off; None: 4 with "
         "examples, else 0).")
_declare(G, "FOCUS_SIBLING", "float", 2.0,
         "Prior weight of nearness: the fetched page's label x 0.7 per place away.")
_declare(G, "FOCUS_HUB", "float?", None,
         "Prior weight of a parent's hub evidence; 0: off; None: 1.0 with examples, else 0.")

G = _group("Keeping a topic fresh", "focuscrawl.core.refresh: a crawl that keeps going, "
           "revisits its pages as they change and exports what changed.")
_declare(G, "FOCUS_REVISIT", "bool", False,
         "A continuous crawl: kept pages are revisited as they change, exported again when their "
         "main content did; spider argument `revisit`. Stops on CLOSESPIDER_TIMEOUT or Ctrl-C.",
         tier=USER)
_declare(G, "FOCUS_REVISIT_POLICY", "str", "optimal",
         "optimal (relevance-weighted freshness, Cho & Garcia-Molina) | uniform | proportional.")
_declare(G, "FOCUS_REVISIT_SHARE", "float?", None,
         "The revisits' fixed share of the fetches (0..1); None: adaptive, the next new page's "
         "expected value against the next revisit's.")
_declare(G, "FOCUS_REVISIT_PRIOR", "float", 86400.0,
         "Seconds between a page's changes a crawl assumes before it has seen any; learnt per "
         "server and directory from then on.")

G = _group("Watching a crawl", "The live dashboard (focuscrawl.seam.watch.dashboard): a page, "
           "/status.json and /metrics served from the crawl's own reactor.")
_declare(G, "FOCUS_DASHBOARD", "str", "",
         "HOST:PORT of the live dashboard (port 0 picks a free one); empty: off.", tier=USER)
_declare(G, "FOCUS_DASHBOARD_TOKEN", "str", "",
         "Every dashboard request must carry it (401 otherwise); required off loopback.")
_declare(G, "FOCUS_DASHBOARD_LINGER", "float", 0.0,
         "Seconds the final figures stay served after the crawl ends (a last scrape).")

G = _group("Politeness", "focuscrawl.core.frontier.hosts and the politeness middleware: "
           "per-server concurrency and delay.")
_declare(G, "FOCUS_SERVER_KEY", "str", "host",
         "A server is a host name, or `ip` to group hosts by address (resolved off the reactor).")
_declare(G, "FOCUS_CONCURRENCY_PER_SERVER", "int", 1, "Requests in flight per server.", tier=USER)
_declare(G, "FOCUS_DELAY", "float", 1.0, "Seconds between request starts on one server.",
         tier=USER)
_declare(G, "FOCUS_ROUND_ROBIN", "int", 0,
         ">0: WebBase's hashed queues, read one URL per queue in turn.")
_declare(G, "FOCUS_SLOW_SECONDS", "float", 5.0,
         "A response slower than this marks a slow server ...")
_declare(G, "FOCUS_SLOW_FACTOR", "float", 2.0,
         "... whose delay becomes this times its response time (Heritrix).")
_declare(G, "FOCUS_MAX_DELAY", "float", 30.0, "Cap on any per-server delay, Crawl-delay included.")
_declare(G, "FOCUS_START_LOG", "int", 0,
         ">0: keep each server's last this many request start times: a politeness audit from "
         "the crawler's side.")
_declare(G, "FOCUS_GC_FREEZE", "bool", True,
         "gc.freeze() the objects alive at spider open: full GC passes stalled the event loop "
         "and made requests leave late.")
_declare(G, "FOCUS_GC_THRESHOLD", "int", 10_000,
         "Allocations between collections of the youngest objects (Python's 700 costs "
         "collector time); 0: Python's own, untouched.")

G = _group("robots.txt", "focuscrawl.seam.middlewares.robots (distributed: fetched once per "
           "cluster, shared through Redis with the same TTLs).")
_declare(G, "FOCUS_ROBOTSTXT_OBEY", "bool", True,
         "robots.txt, Crawl-delay included, checked by focuscrawl's own middleware.", tier=USER)
_declare(G, "FOCUS_ROBOTSTXT_TTL", "float", 86400.0,
         "Seconds a fetched robots.txt is trusted (RFC 9309: 24 h).")
_declare(G, "FOCUS_ROBOTSTXT_ERROR_TTL", "float", 600.0,
         "robots.txt 5xx/429/network error: the host is disallowed this long, then fetched "
         "again (RFC 9309).")
_declare(G, "FOCUS_ROBOTSTXT_HOLDS", "int", 3,
         "robots.txt 5xx/429: the server's URLs wait FOCUS_ROBOTSTXT_ERROR_TTL this many times "
         "in a row before they are refused (0: refuse at once).")
_declare(G, "FOCUS_ROBOTSTXT_HOSTS", "int", 10_000,
         "Hosts whose rules are kept (1-2 KB each); the least recently needed is forgotten.")

G = _group("Crawl hygiene", "Trap and junk filters on outlinks "
           "(focuscrawl.seam.middlewares.filters, focuscrawl.core.traps).")
_declare(G, "FOCUS_FILTERS_ENABLED", "bool", True,
         "False switches every outlink filter below off at once.")
_declare(G, "FOCUS_FILTER_SCHEMES", "bool", True,
         "Drop mailto:, javascript:, file:, data:, ... (only http(s) is fetched).")
_declare(G, "FOCUS_FILTER_CGI", "bool", True,
         "Drop /cgi-bin/ URLs: WebBase's rule against generated page sets.")
_declare(G, "FOCUS_FILTER_REPEATED_SEGMENT", "int", 3,
         "Drop a path with one segment repeated this many times, /a/a/a (0: off).")
_declare(G, "FOCUS_MAX_URL_LENGTH", "int", 256,
         "Drop longer URLs (0: off): long URLs are generated, rarely content.")
_declare(G, "FOCUS_FILTER_CALENDAR", "bool", True,
         "Drop calendar navigation (?month=..&year=.., /calendar/<x>).")
_declare(G, "FOCUS_FILTER_SESSION_ID", "bool", True,
         "Drop session-id URLs (?sid=, ;jsessionid=): endless duplicates.")
_declare(G, "FOCUS_FILTER_ROBOTS", "bool", True,
         "Drop outlinks a host's already-fetched robots.txt refuses, or to a host that could not "
         "be reached while its rules refuse everything (FOCUS_ROBOTSTXT_ERROR_TTL).")
_declare(G, "FOCUS_MAX_PAGES_PER_SERVER", "int", 0,
         "Distinct URLs queued per server (0: no cap): ends what a trap heuristic misses.",
         tier=USER)
_declare(G, "FOCUS_NEARNESS", "bool", False,
         "Same-site links only under the page's directory, off-site ones only with a keyword "
         "in URL or anchor (the slides' refinement).")
_declare(G, "FOCUS_IRRELEVANT_DIRS", "bool", False,
         "Stop fetching a directory that proved irrelevant (the slides' refinement).")
_declare(G, "FOCUS_IRRELEVANT_DIR_PAGES", "int", 25,
         "... once more than this many of its pages were fetched ...")
_declare(G, "FOCUS_IRRELEVANT_DIR_SHARE", "float", 0.9,
         "... and at least this share scored below FOCUS_RELEVANT_SCORE.")

G = _group("Fetch rules", "Pant et al.'s rules (focuscrawl.seam.middlewares.fetchrules).")
_declare(G, "FOCUS_MAX_PAGE_BYTES", "int", 100 * 1024,
         "Keep the first 100 KB of a page; longer pages are truncated and still scored (0: off); "
         "FOCUS_CONTENT is taken from the whole page, downloaded for it alone.")
_declare(G, "FOCUS_FETCH_HTML_ONLY", "bool", True,
         "Stop a download at its headers if its Content-Type is not HTML.")
_declare(G, "FOCUS_FETCH_TYPES", "list", ["text/html", "application/xhtml+xml"],
         "The Content-Types FOCUS_FETCH_HTML_ONLY keeps.")

G = _group("Content", "Each exported page's main content and metadata (focuscrawl.core.content, "
           "run by focuscrawl.seam.content).")
_declare(G, "FOCUS_CONTENT", "str", "text",
         "text | markdown | html: each exported page's main content in the field of that name, "
         "with its language, dates and author; none: no content; spider argument `content`.",
         tier=USER)
_declare(G, "FOCUS_CONTENT_MAX_CHARS", "int", 2_000_000,
         "Pages are downloaded to this many bytes for their content; a longer one (characters "
         "of HTML) is not extracted: it gets its visible text, counted in focus/content/failed.")
_declare(G, "FOCUS_CONTENT_EXTRACTOR", "str", "resiliparse",
         "The text mode's extractor: resiliparse, or trafilatura (finds articles a little "
         "better, about 15x the CPU time); markdown and html are always trafilatura's.")
_declare(G, "FOCUS_CONTENT_TIMEOUT", "float", 2.0,
         "CPU seconds one page's extraction may take; past them the page gets its visible "
         "text and counts in focus/content/failed (0: no bound but the size).")

G = _group("Persistence", "JOBDIR's journal (focuscrawl.seam.persistence) and the output.")
_declare(G, "FOCUS_JOURNAL_SYNC", "str", "NORMAL",
         "SQLite synchronous: NORMAL survives kill -9 and the OOM killer; FULL also a power cut.")
_declare(G, "FOCUS_JOURNAL_COMMIT_OPS", "int", 1000,
         "Commit the journal at least every this many operations ...")
_declare(G, "FOCUS_JOURNAL_COMMIT_SECONDS", "float", 0.5,
         "... or this often (pages commit when fetched and done).")
_declare(G, "FOCUS_JOURNAL_SNAPSHOT_OPS", "int", 50000,
         "Rewrite the snapshot after this many operations: bounds the replay on resume.")
_declare(G, "FOCUS_JOURNAL_MAX_OPEN", "int", 0,
         "Pages handed out and not yet done (0: CONCURRENT_REQUESTS): a kill refetches at "
         "most these.")
_declare(G, "FOCUS_FEED_FSYNC", "bool", False,
         "fsync the JSON-lines output after each line: only power cuts need it.")

G = _group("Safety", "What is never fetched (focuscrawl.seam.middlewares.safety).")
_declare(G, "FOCUS_BLOCK_PRIVATE", "any", "auto",
         "Refuse loopback/private/link-local hosts reached through links: True, False, or "
         "auto (on unless a seed is itself private).", tier=USER)
_declare(G, "FOCUS_DROP_BINARY", "bool", True,
         "Drop a body declared HTML that is binary instead of scoring mojibake.")

G = _group("Record and replay", "focuscrawl.seam.output.warc and focuscrawl.seam.replay.")
_declare(G, "FOCUS_WARC", "str", "",
         "Record every download into this WARC (%(name)s, %(time)s filled in); empty: off.",
         tier=USER)
_declare(G, "FOCUS_REPLAY", "str", "",
         "Answer every request from this WARC instead of the network (the papers' virtual "
         "crawler); empty: off.")

G = _group("JavaScript rendering", "focuscrawl.seam.render: scrapy-playwright and the system "
           "Chromium, installed only when one of the first two asks.")
_declare(G, "FOCUS_RENDER", "str", "",
         "`js`: render every page in Chromium; spider argument `render` overrides it.")
_declare(G, "FOCUS_RENDER_DOMAINS", "str", "",
         "Comma-separated hosts/domains to render (subdomains too); others download as usual.",
         tier=USER)
_declare(G, "FOCUS_RENDER_WAIT_UNTIL", "str", "networkidle",
         "page.goto waits for this: text fetched by scripts arrives after `load`.")
_declare(G, "FOCUS_CHROMIUM_PATH", "str", "",
         "The browser; empty finds chromium on PATH (no browser is downloaded).")
_declare(G, "FOCUS_RENDER_PROXY", "str", "",
         "The browser's proxy; empty uses $http_proxy, as Scrapy's downloads do.")

G = _group("Near-duplicates", "A page whose main text is a near-copy of a page already exported "
           "(focuscrawl.seam.neardup): MinHash of word shingles, in Redis when distributed.")
_declare(G, "FOCUS_NEAR_DUPLICATES", "str", "mark",
         "`mark`: such a page gets `duplicate_of` (that page's URL) and counts as no new "
         "harvest; `drop`: it is not exported either; `off`.")
_declare(G, "FOCUS_NEAR_DUPLICATES_THRESHOLD", "float", 0.9,
         "The estimated Jaccard similarity of two main texts' 5-word shingles from which one "
         "is a near-copy of the other.")

G = _group("Distributed (Redis)", "Set by the Distributed add-on (settings/distributed.py "
           "enables it): one crawl shared by many workers through Redis (focuscrawl.distributed).")
_declare(G, "REDIS_URL", "str", "redis://127.0.0.1:6379/0",
         "The crawl's Redis server (as scrapy-redis reads it); every worker uses the same.",
         scope=DISTRIBUTED, tier=USER)
_declare(G, "FOCUS_REDIS_KEY", "str", "focuscrawl:%(spider)s:",
         "Key prefix of one crawl: reuse it to resume, change it (or delete its keys) for a "
         "new one.", scope=DISTRIBUTED, tier=USER)
_declare(G, "FOCUS_REDIS_WORKER_TTL", "float", 10.0,
         "Seconds without a heartbeat before a worker is dead and its URLs queued again; also "
         "the lease on a robots.txt being fetched.", scope=DISTRIBUTED)
_declare(G, "FOCUS_REDIS_POLL", "float", 0.1,
         "Seconds between a worker's checks for work other workers made possible.",
         scope=DISTRIBUTED)
_declare(G, "FOCUS_REDIS_OUTAGE_TIMEOUT", "float", 0.0,
         "Redis unreachable mid-crawl: a worker pauses, and stops after this many seconds "
         "(redis_unavailable; 0: waits as long as it takes).", scope=DISTRIBUTED)
_declare(G, "FOCUS_REDIS_BLOOM_CAPACITY", "int", 0,
         ">0: the seen-set is a Bloom filter sized for this many URLs (bounded memory).",
         scope=DISTRIBUTED)
_declare(G, "FOCUS_REDIS_BLOOM_ERROR", "float", 0.001,
         "... and this false-positive rate (a false positive skips an unseen URL).",
         scope=DISTRIBUTED)
_declare(G, "FOCUS_REDIS_BATCH", "int", 200,
         "A page's outlinks go to Redis in one script call of at most this many links.",
         scope=DISTRIBUTED)
_declare(G, "FOCUS_REDIS_KNOWN", "int", 100_000,
         "URLs a worker remembers as handed out or linked to (~160 B each), so it drops a "
         "link Redis would ignore; 0: every link goes to Redis.", scope=DISTRIBUTED)
_declare(G, "FOCUS_REDIS_START_LOG", "int", 0,
         ">0: keep each server's last this many request starts in Redis: a cluster-wide "
         "politeness audit.", scope=DISTRIBUTED)
_declare(G, "FOCUS_REDIS_CLUSTER_WAIT", "int", 0,
         "Redis Cluster, >0: after each call that hands out, counts or queues URLs, wait up to "
         "this many ms for a replica to have its writes (WAIT 1); 0: no wait.",
         scope=DISTRIBUTED)
_declare(G, "FEED_URI_PARAMS", "str", "focuscrawl.distributed.connection.feed_uri_params",
         "Adds %(worker)s to feed URIs: each worker writes its own file.", scope=DISTRIBUTED)
del G

#: The focuscrawl components the add-on switches on, with their order.
COMPONENTS: dict[str, dict[str, int]] = {
    "DOWNLOADER_MIDDLEWARES": {
        # before robots.txt is fetched for a private host
        "focuscrawl.seam.middlewares.safety.PrivateAddressMiddleware": 50,
        # trap rules for redirect targets and queued URLs of a rejected directory, first
        "focuscrawl.seam.middlewares.filters.GateMiddleware": 60,
        # our robots.txt (Scrapy's at 100 stays off: ROBOTSTXT_OBEY = False)
        "focuscrawl.seam.middlewares.robots.RobotsTxtMiddleware": 105,
        # on the way back after decompression and truncation (fetch rules at 540)
        "focuscrawl.seam.middlewares.safety.BinaryBodyMiddleware": 535,
        # after retries and decompression on the way back: final statuses, decoded bodies
        "focuscrawl.seam.middlewares.fetchrules.FetchRulesMiddleware": 540,
        # FOCUS_SERVER_KEY = "ip": a redirect target resolved before RedirectMiddleware (600)
        "focuscrawl.seam.middlewares.addresses.RedirectAddressMiddleware": 610,
        # last on the way out, first on the way back: holds a request right before download
        "focuscrawl.seam.middlewares.politeness.PolitenessMiddleware": 950,
        # above RetryMiddleware, so failures are recorded too (off unless FOCUS_WARC is set)
        "focuscrawl.seam.output.warc.WarcRecorder": 990,
    },
    "SPIDER_MIDDLEWARES": {
        # outermost: sees every outlink and item of a page, so "done" is journaled after all
        "focuscrawl.seam.middlewares.journal.PageCompletionMiddleware": 1,
        # servers held for robots.txt are waited for while start() may still yield seeds
        "focuscrawl.seam.middlewares.start.SeedsPendingMiddleware": 2,
        # before Scrapy's own (depth, URL length): outlinks never queued
        "focuscrawl.seam.middlewares.filters.LinkFilterMiddleware": 950,
        # FOCUS_SERVER_KEY = "ip": hosts resolved before the per-server cap and the scheduler
        "focuscrawl.seam.middlewares.addresses.ServerAddressMiddleware": 960,
    },
    "ITEM_PIPELINES": {
        "focuscrawl.seam.output.pipelines.MinScorePipeline": 100,  # FOCUS_MIN_SCORE
        "focuscrawl.seam.neardup.NearDuplicatePipeline": 110,  # FOCUS_NEAR_DUPLICATES=drop
    },
    "EXTENSIONS": {
        # required: the parts the scheduler and the middlewares share, built once per crawl
        "focuscrawl.seam.services.FocusServices": 0,
        # a focus line every LOGSTATS_INTERVAL and a summary (FOCUS_LOGSTATS)
        "focuscrawl.seam.watch.logstats.FocusLogStats": 0,
        # the live dashboard (/, /status.json, /metrics) when FOCUS_DASHBOARD is set
        "focuscrawl.seam.watch.dashboard.Dashboard": 0,
    },
}


# -- reading -----------------------------------------------------------------------------------
def default(name: str) -> Any:
    """The declared default (a copy, for lists and dicts)."""
    value = OPTIONS[name].default
    return type(value)(value) if isinstance(value, (list, dict)) else value


def get(settings: Any, name: str) -> Any:
    """``name`` from Scrapy settings, typed by its declaration; its one default when unset."""
    option = OPTIONS[name]
    kind = option.kind
    if kind in ("bool", "int", "float", "list", "dict"):
        return getattr(settings, "get" + kind)(name, default(name))
    value = settings.get(name)
    if value is None:
        return default(name)
    if kind == "float?":
        return None if value == "" else float(value)
    if kind == "int?":
        return None if value == "" else int(value)
    if kind == "bool?":  # "auto" as on the command line: left to the crawl
        return None if value in ("", "auto") else settings.getbool(name)
    return value


def defaults(scope: str, *, distributed: bool = False) -> dict[str, Any]:
    """name -> default of every option that ``scope`` applies (``distributed``: with the
    values settings/distributed.py gives instead)."""
    values: dict[str, Any] = {}
    for name, option in OPTIONS.items():
        if scope in option.scope:
            values[name] = default(name)
        if distributed and option.distributed is not None and name in values:
            values[name] = option.distributed
    return values


def project_defaults() -> dict[str, Any]:
    """What the project's settings module takes from here: its own choices (the rest comes
    from the add-on it enables)."""
    return defaults("project")


def addon_defaults() -> dict[str, Any]:
    """What the add-on applies: every FOCUS_* default, the Scrapy settings focuscrawl sets,
    and the component dicts."""
    values = defaults("addon")
    values.update({name: dict(paths) for name, paths in COMPONENTS.items()})
    return values


def distributed_defaults() -> dict[str, Any]:
    """What settings/distributed.py adds: the Redis settings and its own values of others."""
    values = defaults("distributed")
    values.update({name: option.distributed for name, option in OPTIONS.items()
                   if option.distributed is not None})
    return values


# -- typed option objects, built once from settings --------------------------------------------
T = TypeVar("T")


def setting(name: str) -> Any:
    """A dataclass field read from setting ``name`` (its default the declared one)."""
    value = OPTIONS[name].default
    if isinstance(value, list):
        return dataclasses.field(default=tuple(value), metadata={"setting": name})
    return dataclasses.field(default=value, metadata={"setting": name})


def from_settings(cls: type[T], settings: Any) -> T:
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        value = get(settings, f.metadata["setting"])
        values[f.name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)


class _FromSettings:
    @classmethod
    def from_settings(cls: type[T], settings: Any) -> T:
        return from_settings(cls, settings)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class PolitenessOptions(_FromSettings):
    """Per-server limits: HostPolicy's arguments (the Redis frontier's too)."""

    concurrency: int = setting("FOCUS_CONCURRENCY_PER_SERVER")
    delay: float = setting("FOCUS_DELAY")
    slow_seconds: float = setting("FOCUS_SLOW_SECONDS")
    slow_factor: float = setting("FOCUS_SLOW_FACTOR")
    max_delay: float = setting("FOCUS_MAX_DELAY")


@dataclass(frozen=True)
class FilterOptions(_FromSettings):
    """The outlink filters (focuscrawl.seam.middlewares.filters)."""

    enabled: bool = setting("FOCUS_FILTERS_ENABLED")
    schemes: bool = setting("FOCUS_FILTER_SCHEMES")
    cgi: bool = setting("FOCUS_FILTER_CGI")
    repeat: int = setting("FOCUS_FILTER_REPEATED_SEGMENT")
    max_length: int = setting("FOCUS_MAX_URL_LENGTH")
    calendar: bool = setting("FOCUS_FILTER_CALENDAR")
    session: bool = setting("FOCUS_FILTER_SESSION_ID")
    robots: bool = setting("FOCUS_FILTER_ROBOTS")
    max_pages_per_server: int = setting("FOCUS_MAX_PAGES_PER_SERVER")
    nearness: bool = setting("FOCUS_NEARNESS")


@dataclass(frozen=True)
class RobotsOptions(_FromSettings):
    """focuscrawl's robots.txt middleware."""

    obey: bool = setting("FOCUS_ROBOTSTXT_OBEY")
    ttl: float = setting("FOCUS_ROBOTSTXT_TTL")
    error_ttl: float = setting("FOCUS_ROBOTSTXT_ERROR_TTL")
    holds: int = setting("FOCUS_ROBOTSTXT_HOLDS")
    hosts: int = setting("FOCUS_ROBOTSTXT_HOSTS")


@dataclass(frozen=True)
class FetchOptions(_FromSettings):
    """Pant et al.'s fetch rules."""

    max_page_bytes: int = setting("FOCUS_MAX_PAGE_BYTES")
    html_only: bool = setting("FOCUS_FETCH_HTML_ONLY")
    types: tuple[str, ...] = setting("FOCUS_FETCH_TYPES")


@dataclass(frozen=True)
class JournalOptions(_FromSettings):
    """JOBDIR's journal."""

    sync: str = setting("FOCUS_JOURNAL_SYNC")
    commit_ops: int = setting("FOCUS_JOURNAL_COMMIT_OPS")
    commit_seconds: float = setting("FOCUS_JOURNAL_COMMIT_SECONDS")
    snapshot_ops: int = setting("FOCUS_JOURNAL_SNAPSHOT_OPS")
    max_open: int = setting("FOCUS_JOURNAL_MAX_OPEN")


@dataclass(frozen=True)
class LearnedOptions(_FromSettings):
    """The learned order's options (focuscrawl.core.learned.Learned); None: the order decides
    from whether the seeds are examples (explore, explore_hosts, profile_score,
    sibling_window, hub; examples itself: auto), or its research switch's default (the bool
    ones).  ``dataclasses.replace`` gives a variant."""

    relevant_score: float = setting("FOCUS_RELEVANT_SCORE")
    learn_every: int = setting("FOCUS_LEARN_EVERY")
    rerank_max: int = setting("FOCUS_LEARN_RERANK")
    rerank_batch: int = setting("FOCUS_LEARN_RERANK_BATCH")
    explore: float | None = setting("FOCUS_EXPLORE")
    explore_hosts: float | None = setting("FOCUS_EXPLORE_HOSTS")
    parent_expert: bool | None = setting("FOCUS_PARENT_EXPERT")
    earned_optimism: bool | None = setting("FOCUS_EARNED_OPTIMISM")
    bandit_backlinks: bool | None = setting("FOCUS_BANDIT_BACKLINKS")
    discount: float = setting("FOCUS_LEARN_DISCOUNT")
    examples: bool | None = setting("FOCUS_EXAMPLES")
    profile_score: float | None = setting("FOCUS_PROFILE_SCORE")
    memory: int = setting("FOCUS_LEARN_MEMORY")
    sibling_window: int | None = setting("FOCUS_SIBLING_WINDOW")
    sibling: float = setting("FOCUS_SIBLING")
    hub: float | None = setting("FOCUS_HUB")


@dataclass(frozen=True)
class RedisOptions(_FromSettings):
    """A distributed worker's link to the crawl in Redis."""

    key: str = setting("FOCUS_REDIS_KEY")
    worker_ttl: float = setting("FOCUS_REDIS_WORKER_TTL")
    poll: float = setting("FOCUS_REDIS_POLL")
    outage_timeout: float = setting("FOCUS_REDIS_OUTAGE_TIMEOUT")
    bloom_capacity: int = setting("FOCUS_REDIS_BLOOM_CAPACITY")
    bloom_error: float = setting("FOCUS_REDIS_BLOOM_ERROR")
    batch: int = setting("FOCUS_REDIS_BATCH")
    known: int = setting("FOCUS_REDIS_KNOWN")
    start_log: int = setting("FOCUS_REDIS_START_LOG")
    cluster_wait: int = setting("FOCUS_REDIS_CLUSTER_WAIT")


# -- docs/settings.md --------------------------------------------------------------------------
def _cell(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    return f"`{text}`".replace("|", "\\|")


def markdown() -> str:
    """docs/settings.md: the user tier in one table, then the advanced tier, one table per
    group (name, default, type, meaning), then the components."""
    lines = ["# Settings", "",
             "Generated from `focuscrawl/config.py` by "
             "`python -m focuscrawl.config --markdown > docs/settings.md`; do not edit by hand.",
             "", "Spider arguments (`-a strategy=...`) override the matching `FOCUS_*` setting "
             "for one crawl; `-s NAME=VALUE` overrides any of them. A type ending in `?` "
             "takes None (unset): the strategy's own default applies. The measurements behind the "
             "defaults: [Benchmarks](benchmarks.md) and the [settings' history]"
             "(benchmarks-settings-history.md).", "",
             "## Main settings", "",
             "The ones you will reach for. Every other setting is [advanced](#advanced-settings).",
             "", *_table(o for o in OPTIONS.values() if o.tier == USER), "",
             "## Advanced settings", "",
             "The Scrapy settings focuscrawl sets, the orders' internals, journal tuning and "
             "research switches, by part. Their defaults are the measured ones; change them to "
             "experiment, or when a page of these docs says so.", ""]
    for title, about in GROUPS.items():
        advanced = [o for o in _in_group(title) if o.tier != USER]
        if advanced:
            lines += [f"### {title}", "", about, "", *_table(advanced), ""]
    lines += ["## Components", "",
              "The project and the add-on switch these on (a project mapping one to `None` "
              "keeps it off).", ""]
    for setting_name, paths in COMPONENTS.items():
        lines += [f"### {setting_name}", "", "| Component | Order |", "| --- | --- |"]
        lines += [f"| `{path}` | {order} |" for path, order in paths.items()]
        lines.append("")
    return "\n".join(lines)


def _table(options: Iterable[Option]) -> list[str]:
    lines = ["| Name | Default | Type | Meaning |", "| --- | --- | --- | --- |"]
    for option in options:
        meaning = option.doc.replace("|", "\\|")
        if option.distributed is not None:
            meaning += f" Distributed: {_cell(option.distributed)}."
        lines.append(f"| `{option.name}` | {_cell(option.default)} | {option.kind} | {meaning} |")
    return lines


def _in_group(title: str) -> Iterator[Option]:
    return (option for option in OPTIONS.values() if option.group == title)


def main(argv: list[str]) -> int:
    if argv != ["--markdown"]:
        print("usage: python -m focuscrawl.config --markdown > docs/settings.md",
              file=sys.stderr)
        return 2
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

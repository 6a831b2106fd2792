"""RobotsTxtMiddleware: robots.txt per scheme+host+port, with Crawl-delay, safe under concurrency.

Scrapy's own middleware (kept off: ``ROBOTSTXT_OBEY = False``) lets every request that arrives
while a host's robots.txt is still loading await one shared Deferred; only the first awaiter gets
the parser, the others get None and are let through, so a disallowed page can be fetched.  Here
the first request for a host starts the fetch and every later one awaits an ``asyncio.Future``
of the same rules (shielded, so one cancelled waiter cannot cancel the others): a request is
never let through before its host's rules are known.

Outcomes follow RFC 9309 (and Google's documented behaviour):

* 2xx: parsed with Protego, leniently (garbage lines are ignored, an unparsable file allows all);
  ``Crawl-delay`` (or ``Request-rate``) becomes the server's delay via ``HostPolicy``;
* 4xx except 429, a redirect loop, a robots request another middleware dropped: "unavailable",
  allow all;
* 5xx, 429, network errors and timeouts: "unreachable", *disallow all* for
  ``FOCUS_ROBOTSTXT_ERROR_TTL`` seconds, then fetch again; a previously fetched copy, if any,
  stays in force meanwhile.  Guessing "allow" for a server that is failing would be the unsafe
  choice; the fetch has already been retried RETRY_TIMES times by then.  When the server
  *answered* (5xx, 429: it is up, and says to come back later), a request refused for that is
  not lost: under focuscrawl's scheduler it goes back to the frontier (``focus/robots/held``)
  and its server is held (``HostPolicy.hold``) until the rules expire, when robots.txt is
  fetched again; at most ``FOCUS_ROBOTSTXT_HOLDS`` times in a row (as Nutch's
  ``http.robots.503.defer.visits``), and only while the crawl has something else to do
  (distributed workers hold the server for the whole cluster: ``focuscrawl.distributed``).
  A host that could not be reached at all (a network error, a timeout) is most often gone:
  its requests are refused, as they are under Scrapy's own scheduler.

Rules are cached for ``FOCUS_ROBOTSTXT_TTL`` seconds (24 h, as RFC 9309 suggests), for at most
``FOCUS_ROBOTSTXT_HOSTS`` hosts: past that the host no request has needed for longest is
forgotten (``focus/robots/forgotten``) and its robots.txt fetched again if a request for it
comes (a parsed file takes 1-2 KB: a crawl of a million hosts would keep GBs).  A request
refused here raises IgnoreRequest and is counted in ``focus/robots/disallowed`` (or
``focus/robots/unreachable``).  The trap filter asks :meth:`RobotsCache.disallows` (found
through ``focuscrawl.seam.services.FocusServices.robots``, where the cache registers itself) to
drop outlinks to hosts whose rules are already known, before they reach the scheduler.

The parts, shared with the distributed mode: :class:`RobotsFetcher` (one fetch, retried),
:class:`RobotsCache` (the rules and the check a request passes) and a :class:`RobotsSource`
(:class:`LocalRobots` here; ``focuscrawl.distributed.robots.RedisRobots`` shares the fetches of
a cluster); the middleware puts them together.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlparse

from protego import Protego
from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.httpobj import urlparse_cached

from focuscrawl import config
from focuscrawl.core.urls import URL_CACHE_SIZE
from focuscrawl.seam.meta import EXAMPLE, ROBOTS, ROBOTS_WAIT, SERVER
from focuscrawl.seam.refusals import SayOnce
from focuscrawl.seam.services import FocusServices

if TYPE_CHECKING:
    from urllib.parse import ParseResult

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from focuscrawl.core.frontier import HostPolicy

logger = logging.getLogger(__name__)

#: Google reads only the first 500 KiB of a robots.txt; FetchRulesMiddleware truncates there.
ROBOTS_MAX_BYTES = 500 * 1024
ALLOW_ALL = "allow"
DISALLOW_ALL = "disallow"
PARSED = "parsed"
#: what holding a server for its robots.txt did (``RobotsSource.hold_server``)
NOT_HELD, HELD_NOW, HELD_ALREADY = 0, 1, 2
#: what a robots.txt fetch gave (:class:`Fetched`)
RESPONSE = "response"  # an HTTP response (its status; the body if 2xx)
ERROR = "error"  # a network error or timeout, after the retries: unreachable
IGNORED = "ignored"  # another middleware dropped the robots request: no rules
#: robots.txt answers remembered, all hosts together (RobotsCache.answers; cleared
#: when full): the link filter asks of every outlink and a site's navigation recurs on every
#: page, but a cache per host kept an answer for every URL a crawl of 20,000 hosts ever met;
#: keyed by URL, it is sized as the other URL caches are (URL_CACHE_SIZE says why)
_MAX_ANSWERS = URL_CACHE_SIZE
_serials = itertools.count()
#: robots.txt answers by (the rules' serial, URL), for one user agent
Answers = dict[tuple[int, str], bool]


class RobotsWait(IgnoreRequest):
    """Raised for a request whose host's robots.txt is unreachable while its server is held:
    :meth:`RobotsTxtMiddleware.process_exception` gives the scheduler ``again`` to queue."""

    def __init__(self, again: Request) -> None:
        super().__init__("robots.txt unreachable: the request waits for it")
        self.again = again


@dataclass(slots=True)
class Rules:
    """One host's robots.txt outcome."""

    kind: str  # PARSED, ALLOW_ALL or DISALLOW_ALL
    expires: float  # monotonic time
    parser: Protego | None = None
    crawl_delay: float = 0.0
    #: DISALLOW_ALL only: the fetches in a row that the server answered 5xx/429, and whether
    #: requests refused meanwhile may wait for the next fetch (FOCUS_ROBOTSTXT_HOLDS)
    failures: int = 0
    waits: bool = False
    # tells these rules from the host's next ones in a cache of answers (Answers)
    serial: int = field(default_factory=lambda: next(_serials), repr=False, compare=False)

    def allows(self, url: str, user_agent: str, answers: Answers | None = None) -> bool:
        """``answers``: a cache of earlier answers to ``user_agent`` (one agent a cache)."""
        if self.kind == ALLOW_ALL:
            return True
        if self.kind == DISALLOW_ALL:
            return False
        assert self.parser is not None
        key = (self.serial, url)
        if answers is not None:
            answer = answers.get(key)
            if answer is not None:
                return answer
        try:
            answer = self.parser.can_fetch(url, user_agent)
        except Exception:  # a pathological pattern must not stop the crawl
            logger.debug("robots.txt matching failed for %s; allowing", url, exc_info=True)
            return True
        if answers is not None:
            if len(answers) >= _MAX_ANSWERS:
                answers.clear()
            answers[key] = answer
        return answer


@dataclass(slots=True, frozen=True)
class Fetched:
    """What one robots.txt fetch gave, before it is made into rules: the raw file, not the
    parser, so distributed workers can share it through Redis."""

    kind: str  # RESPONSE, ERROR or IGNORED
    status: int = 0
    body: bytes = b""

    @property
    def unreachable(self) -> bool:
        """5xx, 429 or a network error: disallow all for a while (RFC 9309)."""
        return self.kind == ERROR or (
            self.kind == RESPONSE and (self.status == 429 or self.status >= 500))


def robots_key(parts: ParseResult) -> str:
    """The cache key of a URL's robots.txt: scheme, host and port (RFC 9309, 2.3)."""
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return f"{scheme}://{_netloc_host(parts)}:{port}"


@lru_cache(maxsize=URL_CACHE_SIZE)
def url_robots_key(url: str) -> str:
    """``robots_key`` of a URL string, cached: the link filter asks it of every outlink (a
    request's own parse, ``urlparse_cached``, was most of the robots.txt prefilter's cost)."""
    return robots_key(urlparse(url))


def robots_url(parts: ParseResult) -> str:
    """``scheme://host[:port]/robots.txt`` of a URL (user info dropped)."""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme.lower()}://{_netloc_host(parts)}{port}/robots.txt"


def _netloc_host(parts: ParseResult) -> str:
    host = (parts.hostname or "").lower()
    return f"[{host}]" if ":" in host else host


def parse_robots(body: bytes, user_agent: str, expires: float) -> Rules:
    """Protego rules for a robots.txt body; never raises (garbage allows everything)."""
    text = body.decode("utf-8", errors="replace").lstrip("\ufeff")
    try:
        parser = Protego.parse(text)
        delay = parser.crawl_delay(user_agent) or 0.0
        rate = parser.request_rate(user_agent)
        if rate is not None and rate.requests > 0:
            delay = max(delay, rate.seconds / rate.requests)
    except Exception:
        logger.debug("unparsable robots.txt; allowing all", exc_info=True)
        return Rules(ALLOW_ALL, expires)
    return Rules(PARSED, expires, parser, float(delay))


@dataclass(slots=True, frozen=True)
class Outcome:
    """A robots.txt fetch's outcome as a :class:`RobotsSource` gives it: valid ``ttl`` seconds;
    ``failures``: the fetches in a row answered 5xx/429 if counted elsewhere (a cluster's),
    else None (the host's previous rules count them)."""

    fetched: Fetched
    ttl: float
    failures: int | None = None


class RobotsSource(Protocol):
    """Where a host's robots.txt comes from and how its server is held: this process
    (:class:`LocalRobots`) or a cluster (``focuscrawl.distributed.robots.RedisRobots``)."""

    async def fetch(self, key: str, url: str) -> Outcome:
        """The robots.txt at ``url`` (robots key ``key``); :class:`RobotsCache` asks once per
        host at a time."""
        ...

    def hold_server(self, server: str, seconds: float) -> int:
        """Hold ``server`` for ``seconds`` (its URLs wait): NOT_HELD, HELD_NOW or HELD_ALREADY
        (the hold extended)."""
        ...


class RobotsFetcher:
    """One fetch of a robots.txt through the engine, retried as RETRY_TIMES says; counted and
    logged here.  Both modes fetch through it."""

    DOWNLOAD_PRIORITY = 1000

    def __init__(self, crawler: Crawler) -> None:
        s = crawler.settings
        self.crawler = crawler
        self.stats = crawler.stats
        self.ttl = config.get(s, "FOCUS_ROBOTSTXT_TTL")
        self.error_ttl = config.get(s, "FOCUS_ROBOTSTXT_ERROR_TTL")
        # retried here, not by Scrapy's RetryMiddleware: its "Gave up retrying" is an ERROR
        # line with a traceback per host, for what is an ordinary state of the web
        self.retries = max(0, s.getint("RETRY_TIMES", 2)) if s.getbool("RETRY_ENABLED", True) else 0
        self.retry_codes = {int(c) for c in s.getlist("RETRY_HTTP_CODES", [])}

    def ttl_of(self, fetched: Fetched) -> float:
        """How long a fetch's outcome holds: FOCUS_ROBOTSTXT_ERROR_TTL if unreachable."""
        return self.error_ttl if fetched.unreachable else self.ttl

    async def download(self, key: str, url: str) -> Fetched:
        robots_request = Request(
            url,
            priority=self.DOWNLOAD_PRIORITY,
            meta={"dont_obey_robotstxt": True, ROBOTS: True, "dont_retry": True},
            callback=NO_CALLBACK,
            dont_filter=True,
        )
        attempt = 0
        while True:
            self.stats.inc_value("focus/robots/requests")
            try:
                response = await self.crawler.engine.download_async(robots_request)
            except IgnoreRequest:
                self.stats.inc_value("focus/robots/ignored")
                return Fetched(IGNORED)
            except Exception as e:
                if attempt < self.retries:
                    attempt, robots_request = self._retry(attempt, robots_request)
                    continue
                logger.info("robots.txt of %s unreachable (%s: %s): disallowing for %.0f s",
                            key, type(e).__name__, e, self.error_ttl)
                self.stats.inc_value(f"focus/robots/error/{type(e).__name__}")
                return Fetched(ERROR)
            if response.status in self.retry_codes and attempt < self.retries:
                attempt, robots_request = self._retry(attempt, robots_request)
                continue
            return self._fetched(key, response)

    def _retry(self, attempt: int, request: Request) -> tuple[int, Request]:
        self.stats.inc_value("focus/robots/retries")
        return attempt + 1, request.replace()

    def _fetched(self, key: str, response: Response) -> Fetched:
        status = response.status
        self.stats.inc_value(f"focus/robots/status/{status}")
        fetched = Fetched(RESPONSE, status, response.body if 200 <= status < 300 else b"")
        if fetched.unreachable:
            logger.info("robots.txt of %s answered %d: disallowing for %.0f s",
                        key, status, self.error_ttl)
        return fetched


class LocalRobots:
    """:class:`RobotsSource` of a single process: it fetches, and holds a server in its own
    politeness state (FocusScheduler keeps the server's URLs back)."""

    def __init__(self, fetcher: RobotsFetcher, policy: HostPolicy) -> None:
        self.fetcher = fetcher
        self.policy = policy

    async def fetch(self, key: str, url: str) -> Outcome:
        fetched = await self.fetcher.download(key, url)
        return Outcome(fetched, self.fetcher.ttl_of(fetched))

    def hold_server(self, server: str, seconds: float) -> int:
        policy = self.policy
        already = policy.is_held(server)
        if not policy.hold(server, policy.clock() + seconds):
            return NOT_HELD
        return HELD_ALREADY if already else HELD_NOW


class RobotsCache:
    """The robots.txt rules of the hosts met, and the check a request passes: one load per host
    at a time (:meth:`check`), at most FOCUS_ROBOTSTXT_HOSTS hosts kept, Crawl-delay passed to
    the politeness state, refused requests held for their server when robots.txt answered
    5xx/429.  Where the rules come from is the ``source``'s business (one process, or a
    cluster), so both modes share this."""

    def __init__(self, crawler: Crawler, source: RobotsSource) -> None:
        s = crawler.settings
        self.source = source
        self.stats = crawler.stats
        self.say = SayOnce("robots.txt", logger)
        self.user_agent: str = s.get("ROBOTSTXT_USER_AGENT") or s.get("USER_AGENT") or "*"
        self.max_holds = config.get(s, "FOCUS_ROBOTSTXT_HOLDS")
        services = FocusServices.of(crawler, self)
        self.policy = services.policy
        self.servers = services.servers
        self.clock = time.monotonic
        #: robots key -> its rules, least recently needed first: bounded by FOCUS_ROBOTSTXT_HOSTS
        self.rules: OrderedDict[str, Rules] = OrderedDict()
        self.max_hosts = max(1, config.get(s, "FOCUS_ROBOTSTXT_HOSTS"))
        self.answers: Answers = {}  # the parsers' answers, every host's (_MAX_ANSWERS at most)
        self._loading: dict[str, asyncio.Future[Rules]] = {}
        self._crawl_delays: dict[str, dict[str, float]] = {}  # server -> robots key -> delay
        services.register_robots(self)  # for the trap filter

    async def check(self, request: Request) -> None:
        """Return if the request's host's rules allow it, once they are known; else raise
        IgnoreRequest, or RobotsWait for a request held for its server."""
        if request.meta.get("dont_obey_robotstxt"):
            return None
        parts = urlparse_cached(request)
        if parts.scheme not in ("http", "https"):
            return None
        key = robots_key(parts)
        rules = self.rules.get(key)
        if rules is None or rules.expires <= self.clock():
            rules = await self._load(key, robots_url(parts))
        else:
            self.rules.move_to_end(key)
        if not rules.allows(request.url, self.user_agent, self.answers):
            if rules.waits and not request.meta.get(EXAMPLE) and self._hold(request, rules):
                self.stats.inc_value("focus/robots/held")
                request.meta[ROBOTS_WAIT] = True
                raise RobotsWait(request.replace(dont_filter=True))
            reason = "unreachable" if rules.kind == DISALLOW_ALL else "disallowed"
            self.stats.inc_value(f"focus/robots/{reason}")
            self.say(reason, request.url, f"focus/robots/{reason}")
            raise IgnoreRequest(f"robots.txt: {reason}")
        return None

    def _hold(self, request: Request, rules: Rules) -> bool:
        """Hold the request's server until ``rules`` expire, if the scheduler can."""
        server = request.meta.get(SERVER) or self.servers.key(request.url)
        wait = max(0.0, rules.expires - self.clock())
        held = self.source.hold_server(server, wait)
        if held == HELD_NOW:  # one line a hold, not one a request
            logger.info("Server %s held for %.0f s: its URLs wait for robots.txt to be fetched "
                        "again (hold %d of at most %d in a row)", server, wait, rules.failures,
                        self.max_holds)
        return held != NOT_HELD

    def disallows(self, url: str) -> bool:
        """True if the host's known rules refuse ``url`` (False while unknown).

        A host that could not be reached refuses everything until its rules expire: a link to
        it queued meanwhile would only be handed out to be refused, and a crawl that explores
        new hosts would hand out such links first, while known servers sat idle.  A server
        that answered 5xx/429 is held (``Rules.waits``): its links wait for the next fetch.
        """
        rules = self.rules.get(url_robots_key(url))
        if rules is None:
            return False
        if rules.kind == DISALLOW_ALL:
            return not rules.waits and rules.expires > self.clock()
        return rules.kind == PARSED and not rules.allows(url, self.user_agent, self.answers)

    def sitemaps(self, url: str) -> list[str]:
        """The ``Sitemap:`` lines of the known robots.txt of ``url``'s host ([] while unknown)."""
        rules = self.rules.get(url_robots_key(url))
        if rules is None or rules.kind != PARSED or rules.parser is None:
            return []
        return list(rules.parser.sitemaps)

    # -- loading, one fetch per host at a time -----------------------------------------------
    async def _load(self, key: str, url: str) -> Rules:
        future = self._loading.get(key)
        if future is not None:  # another request is fetching it: wait for the same rules
            return await asyncio.shield(future)
        future = asyncio.get_running_loop().create_future()
        self._loading[key] = future
        try:
            got = await self.source.fetch(key, url)
            rules = self._rules_of(key, url, got)
        except BaseException as e:  # cancelled while fetching: let the waiters fail cleanly
            self._loading.pop(key, None)
            future.set_exception(IgnoreRequest(f"robots.txt fetch for {key} aborted: {e!r}"))
            future.exception()  # retrieved: no "never retrieved" warning without waiters
            raise
        self._loading.pop(key, None)
        self._remember(key, rules)
        future.set_result(rules)
        return rules

    def _remember(self, key: str, rules: Rules) -> None:
        known = self.rules
        known[key] = rules
        known.move_to_end(key)
        while len(known) > self.max_hosts:
            known.popitem(last=False)
            self.stats.inc_value("focus/robots/forgotten")

    def _rules_of(self, key: str, url: str, got: Outcome) -> Rules:
        fetched, ttl = got.fetched, got.ttl
        if fetched.unreachable:
            return self._unreachable(key, ttl, fetched.kind == RESPONSE, got.failures)
        now = self.clock()
        if fetched.kind == RESPONSE and 200 <= fetched.status < 300:
            rules = parse_robots(fetched.body, self.user_agent, now + ttl)
            if rules.kind == ALLOW_ALL:
                self.stats.inc_value("focus/robots/unparsable")
            self._set_crawl_delay(key, url, rules.crawl_delay)
            return rules
        return Rules(ALLOW_ALL, now + ttl)  # 3xx left over, 4xx, dropped: no rules

    def _unreachable(self, key: str, ttl: float, answered: bool,
                     failures: int | None = None) -> Rules:
        expires = self.clock() + ttl
        previous = self.rules.get(key)
        if previous is not None and previous.kind != DISALLOW_ALL:
            previous.expires = expires  # RFC 9309 2.4: keep using the cached copy meanwhile
            return previous
        if failures is None:
            failures = (previous.failures if previous is not None else 0) + 1 if answered else 0
        return Rules(DISALLOW_ALL, expires, failures=failures,
                     waits=answered and failures <= self.max_holds)

    def _set_crawl_delay(self, key: str, url: str, delay: float) -> None:
        """Hosts grouped into one server (FOCUS_SERVER_KEY=ip) get the largest Crawl-delay."""
        server = self.servers.key(url)
        delays = self._crawl_delays.get(server, {})
        if delay > 0:  # only the hosts with a delay are kept: not an entry per host crawled
            delays[key] = delay
            self._crawl_delays[server] = delays
            self.stats.inc_value("focus/robots/crawl_delay_hosts")
        elif delays.pop(key, None) is not None and not delays:
            del self._crawl_delays[server]
        self.policy.set_crawl_delay(server, max(delays.values(), default=0.0))


class RobotsTxtMiddleware:
    """``DOWNLOADER_MIDDLEWARES`` (105): a :class:`RobotsCache` over this process's fetches."""

    def __init__(self, crawler: Crawler) -> None:
        if not config.get(crawler.settings, "FOCUS_ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.crawler = crawler
        self.stats = crawler.stats
        source = LocalRobots(RobotsFetcher(crawler), FocusServices.of(crawler, self).policy)
        self.robots = RobotsCache(crawler, source)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsTxtMiddleware:
        return cls(crawler)

    async def process_request(self, request: Request) -> None:
        return await self.robots.check(request)

    def process_exception(self, request: Request, exception: Exception) -> Request | None:
        """A request waiting for its robots.txt goes back to the scheduler (as a retry does:
        past the seen-set); the politeness middleware has already freed its slot."""
        return again(exception)


def again(exception: Exception) -> Request | None:
    """The request to queue again for a request refused while its server is held
    (:class:`RobotsWait`), else None: a robots.txt middleware's ``process_exception``."""
    if isinstance(exception, RobotsWait):
        return exception.again
    return None

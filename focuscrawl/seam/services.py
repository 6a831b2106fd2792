"""FocusServices: the parts of a crawl that the scheduler and the middlewares share.

The scheduler, the politeness, robots.txt and filter middlewares, the page-completion spider
middleware and the feed storage work on a few common objects: the per-server politeness state
(``HostPolicy``), each URL's server (``ServerKeys``: its host name or IP address), what each
handed-out request's life (``Lifecycle``: its lease, the page count, what its page still owes,
whether this crawl resumes a JOBDIR), the robots.txt rules already known, the
irrelevant-directory statistics, which outlinks the crawl order would ignore (``KnownUrls``:
the topic spider drops them before building a Request), and the pages exported so far by their
text (``NearDuplicates``: which page is a near-copy of one of them).
One object owns them: this Scrapy **extension**, built once per crawl from the crawl's
settings.  Scrapy builds extensions before the engine builds the downloader, the spider
middlewares and the scheduler, so every component finds it through
:meth:`FocusServices.of`.  Each part is made by this object on first use, from one reading of
the settings; no component creates a part for the others.

    EXTENSIONS = {"focuscrawl.seam.services.FocusServices": 0}

``settings/__init__.py`` and the add-on (``focuscrawl.seam.addon.FocusCrawl``) switch it on.  A
project that sets only ``SCHEDULER`` (or only ``SCHEDULER_PRIORITY_QUEUE``) has no such
extension: :meth:`FocusServices.of` then makes the crawl's one instance itself, kept beside the
crawler (never on it) in a weak map, so a component built later, or the extension if Scrapy
builds it after all, finds the same parts.  The scheduler asks at ``open``, not at
construction: a scheduler built by hand (Scrapy's own scheduler tests) comes from a crawler
that has no extension manager yet, where ``crawler.get_extension`` raises.

This module imports no middleware and no scheduler: the robots.txt rules cache registers itself
(:meth:`FocusServices.register_robots`) as a :class:`RobotsRules`, the scheduler its frontier's
answer in :class:`KnownUrls`.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from focuscrawl import config
from focuscrawl.core.frontier import HostPolicy
from focuscrawl.core.neardup import Layout, MemoryIndex, NearDuplicateIndex
from focuscrawl.core.traps import DirectoryStats
from focuscrawl.seam import signals as focus_signals
from focuscrawl.seam.lifecycle import Lifecycle
from focuscrawl.seam.neardup import NearDuplicates, near_duplicates
from focuscrawl.seam.servers import ServerKeys

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

_S = TypeVar("_S", bound="FocusServices")


class RobotsRules(Protocol):
    """What the trap filter (and a continuous crawl's sitemap hints) ask of the robots.txt
    middleware."""

    def disallows(self, url: str) -> bool:
        """True if the host's fetched robots.txt refuses ``url`` (False while unknown)."""
        ...

    def sitemaps(self, url: str) -> list[str]:
        """The Sitemap: lines of the robots.txt of ``url``'s host ([] while unknown)."""
        ...


def _ignores_none(url: str, parent_score: float, parent: str | None = None, anchor: str = "",
                  context: object = "") -> bool:
    return False


class KnownUrls:
    """Which outlinks the spider may drop before it builds a Request: those the crawl order
    would ignore (``Frontier.ignores``: a URL already handed out when the order keeps nothing
    of a link to it, or one queued that a link from this page would not move up), or only
    count (``Frontier.only_counts``: one more in-link, counted by the scheduler's answer).  Most
    outlinks of a crawl lead to pages fetched or queued already, and a Request through the
    spider middlewares, the engine and the scheduler cost more than the rest of a link's way
    (bench/throughput.py).  The scheduler that owns the frontier registers its answer when it
    opens; until then, and with any other scheduler, none."""

    def __init__(self) -> None:
        #: (url as the scheduler keys it, the linking page's score, the linking page's
        #: canonical URL, the link's anchor text, its context) -> drop the link; read once
        #: per page
        self.ignores: Callable[..., bool] = _ignores_none

    def register(self, ignores: Callable[..., bool] | None) -> None:
        """The scheduler's frontier answers from now on (None: nothing is ignored)."""
        self.ignores = ignores or _ignores_none

    @property
    def active(self) -> bool:
        """Whether asking can drop a link: not with nothing registered (another scheduler,
        an order that keeps every link), where the spider skips the question and its
        per-link key."""
        return self.ignores is not _ignores_none


class MissingServices(RuntimeError):
    """A focuscrawl component asked for parts of a kind the crawl does not have (a distributed
    component in a crawl whose parts are single-process ones)."""


#: crawler -> its FocusServices, for a crawl without the extension (see the module docstring)
_STANDALONE: weakref.WeakKeyDictionary[Crawler, FocusServices] = weakref.WeakKeyDictionary()


def _extension(crawler: Crawler, cls: type[_S]) -> _S | None:
    """The enabled extension ``cls``, or None (none, or no extension manager yet)."""
    try:
        return crawler.get_extension(cls)
    except RuntimeError:  # Crawler.get_extension before the extension manager exists
        return None


def _path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def missing_message(component: str, cls: type[FocusServices] | None = None, *,
                    needs: Sequence[str] = ()) -> str:
    """One line: what ``component`` needs (by default the extension ``cls``) and how to switch
    everything on (``cls.SWITCH_ON``)."""
    cls = cls or FocusServices
    needs = list(needs) or [f"{_path(cls)} in EXTENSIONS"]
    what = needs[0] if len(needs) == 1 else f"{', '.join(needs[:-1])} and {needs[-1]}"
    return f"{component} needs {what}; {cls.SWITCH_ON}"


class FocusServices:
    """``EXTENSIONS``: the crawl's shared parts, each made on first use (module docstring)."""

    #: how to switch on everything a crawl needs, in the message of a missing part
    SWITCH_ON = ('switch focuscrawl on with ADDONS = {"focuscrawl.addon.FocusCrawl": 0} (it sets '
                 "everything) or use focuscrawl's settings module")

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.settings = crawler.settings
        self._policy: HostPolicy | None = None
        self._servers: ServerKeys | None = None
        self._lifecycle: Lifecycle | None = None
        self._directories: DirectoryStats | None = None
        self._relevant_score = 0.0
        self._robots: RobotsRules | None = None
        self._known: KnownUrls | None = None
        #: a continuous crawl's revisits (focuscrawl.seam.revisit.Revisits), set by the
        #: scheduler that keeps them; None: a crawl that ends
        self.revisits: Any = None
        self._near: NearDuplicates | None = None
        #: the spider's start() may still yield seeds (``SeedsPendingMiddleware``): servers
        #: held for their robots.txt are waited for meanwhile
        self.seeds_pending = False

    @classmethod
    def from_crawler(cls: type[_S], crawler: Crawler) -> _S:
        # a component asked before the extension manager was built: the same parts
        made = _STANDALONE.pop(crawler, None)
        return made if isinstance(made, cls) else cls(crawler)

    @classmethod
    def of(cls: type[_S], crawler: Crawler, component: Any = None) -> _S:
        """The crawl's instance: the extension, or else the one made here for this crawl.

        ``component`` (an object, a class or a name) names the asker in the error raised when
        the crawl's parts are of another kind (:class:`MissingServices`).
        """
        services = _extension(crawler, cls)
        if services is not None:
            return services
        made = _STANDALONE.get(crawler)
        if made is None:
            made = _STANDALONE[crawler] = cls(crawler)
        if not isinstance(made, cls):
            if component is None or isinstance(component, str):
                name = component or "focuscrawl"
            else:
                kind = component if isinstance(component, type) else type(component)
                name = kind.__name__
            raise MissingServices(missing_message(name, cls))
        return made

    @classmethod
    def find(cls: type[_S], crawler: Crawler) -> _S | None:
        """The crawl's instance if any component made or enabled one (never makes one)."""
        services = _extension(crawler, cls)
        if services is not None:
            return services
        made = _STANDALONE.get(crawler)
        return made if isinstance(made, cls) else None

    # -- the parts ---------------------------------------------------------------------------
    @property
    def policy(self) -> HostPolicy:
        """Per-server politeness state: the lifecycle reserves, the middlewares start/finish."""
        if self._policy is None:
            s = self.settings
            self._policy = HostPolicy(config.PolitenessOptions.from_settings(s),
                                      start_log=config.get(s, "FOCUS_START_LOG"))
        return self._policy

    @property
    def servers(self) -> ServerKeys:
        """A URL's politeness unit (``FOCUS_SERVER_KEY``: host name or IP address)."""
        if self._servers is None:
            self._servers = ServerKeys(config.get(self.settings, "FOCUS_SERVER_KEY"))
        return self._servers

    @property
    def lifecycle(self) -> Lifecycle:
        """The one owner of each handed-out request's life (``focuscrawl.seam.lifecycle``)."""
        if self._lifecycle is None:
            self._lifecycle = Lifecycle(self.policy)
        return self._lifecycle

    @property
    def directories(self) -> DirectoryStats | None:
        """The slides' irrelevant-directory statistics, fed by ``page_scored`` (None when
        ``FOCUS_IRRELEVANT_DIRS`` is off).  Shared by the link filter and the gate."""
        s = self.settings
        if not config.get(s, "FOCUS_IRRELEVANT_DIRS"):
            return None
        if self._directories is None:
            self._directories = DirectoryStats(
                min_pages=config.get(s, "FOCUS_IRRELEVANT_DIR_PAGES"),
                share=config.get(s, "FOCUS_IRRELEVANT_DIR_SHARE"),
            )
            self._relevant_score = config.get(s, "FOCUS_RELEVANT_SCORE")
            self.crawler.signals.connect(self._page_scored, signal=focus_signals.page_scored)
        return self._directories

    def _page_scored(self, url: str, score: float, **kwargs: Any) -> None:
        dirs = self._directories
        assert dirs is not None
        if dirs.record(url, score >= self._relevant_score):
            self.crawler.stats.inc_value("focus/dirs/rejected")
            logger.info("Irrelevant directory, not fetched any more: %s", url.rsplit("/", 1)[0])

    @property
    def known_urls(self) -> KnownUrls:
        """The outlinks the spider may drop unbuilt (the scheduler registers the answer)."""
        if self._known is None:
            self._known = KnownUrls()
        return self._known

    @property
    def near_duplicates(self) -> NearDuplicates:
        """Whether a page is a near-copy of one exported before (``FOCUS_NEAR_DUPLICATES``),
        over :meth:`near_duplicate_index`."""
        if self._near is None:
            self._near = near_duplicates(self.crawler, self.near_duplicate_index)
        return self._near

    def near_duplicate_index(self, layout: Layout) -> NearDuplicateIndex:
        """The index of the pages exported (a distributed worker's is shared in Redis)."""
        return MemoryIndex(layout)

    @property
    def robots(self) -> RobotsRules | None:
        """The robots.txt rules known so far (None without a robots.txt middleware)."""
        return self._robots

    def register_robots(self, robots: RobotsRules) -> None:
        """The robots.txt middleware offers its rules to the trap filter (one per crawl)."""
        if self._robots is not None and self._robots is not robots:
            raise ValueError("a second robots.txt middleware in one crawl")
        self._robots = robots

"""The politeness unit of a URL, shared by the scheduler and the politeness, robots.txt and filter
middlewares (a module of their own: middlewares never import the scheduler, nor the scheduler a
middleware).  The crawl's one :class:`ServerKeys` is
``focuscrawl.seam.services.FocusServices.servers``
(its one HostPolicy, ``FocusServices.policy``).

A server is a host name, or with ``FOCUS_SERVER_KEY = "ip"`` the host's IP address, so that host
names on one machine share one politeness slot.  The address is never looked up on the reactor
thread: :meth:`ServerKeys.resolve` asks the reactor's resolver (under ``scrapy crawl`` Scrapy's
``CachingThreadedResolver``, whose lookups run in the reactor's thread pool and are cached, the
cache Scrapy's downloads use; Twisted's threaded ``getaddrinfo`` resolver otherwise) *before* a
request reaches the scheduler: ``focuscrawl.seam.middlewares.addresses`` does it for seeds, outlinks
and redirect targets.  :meth:`ServerKeys.key` only reads what was resolved and never blocks.  A
host name that does not resolve is its own server (as before), and so is one asked for before
it was resolved (a request that reached the scheduler another way): its first key stays its key
for the crawl, so all requests to one host name always share one slot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from twisted.internet.defer import Deferred, maybeDeferred

from focuscrawl.core.urls import host

if TYPE_CHECKING:
    from twisted.python.failure import Failure

def _resolve(hostname: str) -> Deferred[str]:
    """The address of ``hostname`` from the reactor's resolver, or the name itself when it does
    not resolve."""
    from twisted.internet import reactor

    def unresolved(failure: Failure) -> str:
        return hostname

    # zope interface methods have no self: without the mypy-zope plugin mypy reads
    # IReactorCore.resolve's name as self and the host as its timeout
    resolving = reactor.resolve(hostname)  # type: ignore[arg-type]
    return resolving.addErrback(unresolved)


class ServerKeys:
    """A URL's server: its host name, or with ``by="ip"`` the address resolved for it (the
    schedulers refuse any other ``FOCUS_SERVER_KEY``)."""

    def __init__(self, by: str = "host", size: int = 65536) -> None:
        self.by = by
        self.size = size
        self._addresses: dict[str, str] = {}  # host name -> its key, oldest first
        self._waiting: dict[str, list[Deferred[None]]] = {}  # lookups under way -> waiters
        self.unresolved = 0  # host names keyed before their address was known

    def key(self, url: str) -> str:
        """The server of ``url`` (never blocks: an address not resolved yet is not waited for)."""
        name = host(url)
        if self.by != "ip":
            return name
        key = self._addresses.get(name)
        if key is None:
            self.unresolved += 1
            key = self._remember(name, name)
        return key

    def resolved(self, url: str) -> bool:
        """True once ``url``'s server is known (always with ``by="host"``)."""
        return self.by != "ip" or host(url) in self._addresses

    async def resolve(self, url: str) -> None:
        """Find ``url``'s server before its request is scheduled (one lookup per host name,
        shared by concurrent callers, in the reactor's resolver)."""
        if self.resolved(url):
            return
        from scrapy.utils.defer import maybe_deferred_to_future

        name = host(url)
        waiting = self._waiting.get(name)
        if waiting is not None:  # a lookup is under way: wait for it
            done: Deferred[None] = Deferred()
            waiting.append(done)
            await maybe_deferred_to_future(done)
            return
        waiting = self._waiting[name] = []
        try:
            try:
                # maybeDeferred: a replacement of _resolve (tests) may answer at once
                address = await maybe_deferred_to_future(maybeDeferred(_resolve, name))
            except Exception:  # noqa: BLE001 - any lookup failure: keyed by its name
                address = name
            self._remember(name, str(address))
        finally:
            del self._waiting[name]
            for done in waiting:
                done.callback(None)

    def _remember(self, name: str, key: str) -> str:
        """The first key given to ``name`` stays (a host's requests never change server)."""
        addresses = self._addresses
        key = addresses.setdefault(name, key)
        if len(addresses) > self.size:
            del addresses[next(iter(addresses))]
        return key


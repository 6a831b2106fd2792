"""Crawl order: the frontier protocol, the frontier every order is kept by, the seed papers'
orders, per-server queues and politeness state, link graph (no Scrapy).  An order is a
valuation (:mod:`.valuation`: how a link is valued) and a queue policy (:mod:`.policies`: which
URL goes out next), composed by a :class:`QueueFrontier` (:mod:`.queued`).  The learned order
is :mod:`focuscrawl.core.learned`; every order by name is :mod:`focuscrawl.core.orders`; what a
scheduler calls of any frontier is :mod:`.protocol`."""

from ..fingerprints import FingerprintSet, fingerprint
from .hosts import HostPolicy
from .link import Capabilities, Link, Ready
from .linkgraph import LinkGraph
from .policies import Batches, BestOf
from .protocol import Frontier, FrontierEvents, LocalFrontier
from .queued import QueueFrontier
from .queues import Entry, Key, ServerQueues
from .strategies import BestFirst, BreadthFirst, Cho, Distiller
from .valuation import Valuation

__all__ = [
    "Batches", "BestFirst", "BestOf", "BreadthFirst", "Capabilities", "Cho", "Distiller",
    "Entry", "FingerprintSet", "Frontier", "FrontierEvents", "HostPolicy", "Key", "Link",
    "LinkGraph", "LocalFrontier", "QueueFrontier", "Ready", "ServerQueues", "Valuation",
    "fingerprint",
]

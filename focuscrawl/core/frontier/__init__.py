"""Crawl order: the seed papers' strategies, link graph, per-server queues and politeness state
(no Scrapy).  The learned order is :mod:`focuscrawl.core.learned`; every order by name is
:mod:`focuscrawl.core.orders`; what a scheduler calls of any frontier is :mod:`.protocol`."""

from ..fingerprints import FingerprintSet, fingerprint
from .hosts import HostPolicy
from .linkgraph import LinkGraph
from .protocol import Capabilities, Frontier, Link, LocalFrontier, Ready
from .queues import Entry, ServerQueues
from .strategies import BestFirst, BestNFirst, BreadthFirst, Cho, Distiller, QueueFrontier

__all__ = [
    "BestFirst", "BestNFirst", "BreadthFirst", "Capabilities", "Cho", "Distiller", "Entry",
    "FingerprintSet", "Frontier", "HostPolicy", "Link", "LinkGraph", "LocalFrontier",
    "QueueFrontier", "Ready", "ServerQueues", "fingerprint",
]

"""Crawl order: the seed papers' strategies, link graph, per-server queues and politeness state
(no Scrapy).  The learned order is :mod:`focuscrawl.core.learned`; every order by name is
:mod:`focuscrawl.core.orders`."""

from ..fingerprints import FingerprintSet, fingerprint
from .hosts import HostPolicy
from .linkgraph import LinkGraph
from .queues import Entry, ServerQueues
from .strategies import BestFirst, BestNFirst, BreadthFirst, Cho, Distiller, Frontier, Link

__all__ = [
    "BestFirst", "BestNFirst", "BreadthFirst", "Cho", "Distiller", "Entry", "FingerprintSet",
    "Frontier", "HostPolicy", "Link", "LinkGraph", "ServerQueues", "fingerprint",
]

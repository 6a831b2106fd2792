"""Crawl order: strategies, link graph, per-server queues and politeness state (no Scrapy)."""

from ..fingerprints import FingerprintSet, fingerprint
from .hosts import HostPolicy
from .learned import Learned
from .linkgraph import LinkGraph
from .queues import Entry, ServerQueues
from .registry import DEFAULT_STRATEGY, STRATEGIES, make_frontier
from .strategies import BestFirst, BestNFirst, BreadthFirst, Cho, Distiller, Frontier, Link

__all__ = [
    "DEFAULT_STRATEGY", "STRATEGIES", "BestFirst", "BestNFirst", "BreadthFirst", "Cho",
    "Distiller", "Entry", "FingerprintSet", "Frontier", "HostPolicy", "Learned", "Link",
    "LinkGraph", "ServerQueues", "fingerprint", "make_frontier",
]

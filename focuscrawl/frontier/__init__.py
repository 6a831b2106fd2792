"""Crawl order: strategies, link graph, per-server queues and politeness state (no Scrapy)."""

from .hosts import HostPolicy
from .linkgraph import LinkGraph
from .queues import Entry, ServerQueues
from .strategies import (
    STRATEGIES,
    BestFirst,
    BestNFirst,
    BreadthFirst,
    Cho,
    Distiller,
    Frontier,
    Link,
    make_frontier,
)

__all__ = [
    "STRATEGIES", "BestFirst", "BestNFirst", "BreadthFirst", "Cho", "Distiller", "Entry",
    "Frontier", "HostPolicy", "Link", "LinkGraph", "ServerQueues", "make_frontier",
]

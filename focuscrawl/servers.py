"""The politeness unit of a URL, shared by the scheduler and the politeness, robots.txt and filter
middlewares (a module of their own: middlewares never import the scheduler, nor the scheduler a
middleware).  The crawl's one HostPolicy is ``focuscrawl.services.FocusServices.policy``.
"""

from __future__ import annotations

import socket
from functools import lru_cache

from .core.urls import host


@lru_cache(maxsize=65536)
def _resolve(hostname: str) -> str:
    try:
        return socket.gethostbyname(hostname)
    except OSError:
        return hostname


def server_key(url: str, by: str = "host") -> str:
    """The politeness unit of a URL: its host name, or its IP address with ``by="ip"``."""
    name = host(url)
    return _resolve(name) if by == "ip" else name

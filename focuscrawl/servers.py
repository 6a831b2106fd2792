"""The politeness unit of a URL and the crawl's one HostPolicy, shared by the scheduler and the
politeness, robots.txt and filter middlewares (a module of their own: middlewares never import
the scheduler, nor the scheduler a middleware).
"""

from __future__ import annotations

import socket
from functools import lru_cache
from typing import TYPE_CHECKING

from .frontier import HostPolicy
from .options import politeness_options
from .urls import host

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


def policy_for(crawler: Crawler) -> HostPolicy:
    """The crawl's one HostPolicy, shared by the scheduler and the politeness middleware."""
    policy = getattr(crawler, "_focus_policy", None)
    if policy is None:
        s = crawler.settings
        policy = HostPolicy(**politeness_options(s), start_log=s.getint("FOCUS_START_LOG", 0))
        crawler._focus_policy = policy  # type: ignore[attr-defined]
    return policy


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

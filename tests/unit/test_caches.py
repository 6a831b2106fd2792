"""The caches keyed by URL stay within URL_CACHE_SIZE entries and answer as uncached.

A crawl of many hosts meets new URLs all the time: each of these caches filled to its bound
(65,536 entries for most) over ~8,000 pages of bench/scale.py, ~100 MB of RSS together.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin

import pytest

from focuscrawl.core import extract, urls
from focuscrawl.core.learned import features
from focuscrawl.core.traps import UrlRules
from focuscrawl.core.urls import URL_CACHE_SIZE
from focuscrawl.seam.middlewares import robots
from focuscrawl.seam.records import request_key


def _urls(n: int) -> list[str]:
    """``n`` distinct URLs over a few hundred hosts, as a crawl of many hosts meets them."""
    return [f"http://h{i % 397}.example.test/d{i % 13}/p{i}.html?b=2&a={i}" for i in range(n)]


def _caches() -> list[tuple[str, Any]]:
    return [
        ("canonical", urls._canonical),
        ("host", urls.host),
        ("request_key", request_key),
        ("url_robots_key", robots.url_robots_key),
        ("directory_of", features.directory_of),
        ("trap rules", UrlRules().reason),
    ]


@pytest.mark.parametrize("name, cached", _caches(), ids=[name for name, _ in _caches()])
def test_a_url_cache_keeps_at_most_url_cache_size_entries(name: str, cached: Any) -> None:
    cached.cache_clear()
    uncached: Callable[[str], Any] = cached.__wrapped__
    many = _urls(URL_CACHE_SIZE + 500)
    for url in many:
        cached(url)
    assert cached.cache_info().currsize == URL_CACHE_SIZE
    assert cached.cache_info().maxsize == URL_CACHE_SIZE
    # the answers are the function's, for URLs evicted and kept alike
    for url in (many[0], many[URL_CACHE_SIZE // 2], many[-1]):
        assert cached(url) == uncached(url)
    cached.cache_clear()


def test_the_url_joiner_cache_is_cleared_when_full_and_answers_as_urljoin() -> None:
    extract._JOINED.clear()
    n = URL_CACHE_SIZE + 500
    bases = [f"http://h{i % 97}.example.test/a/b{i % 7}/page.html" for i in range(n)]
    hrefs = [f"../c/p{i}.html" for i in range(n)]
    for i, (base, href) in enumerate(zip(bases, hrefs, strict=True)):
        assert extract._Joiner(base)(href) == urljoin(base, href)
        assert len(extract._JOINED) <= URL_CACHE_SIZE, i
    assert extract._JOINED  # it caches: cleared when full, then filled again
    extract._JOINED.clear()

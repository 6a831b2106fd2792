"""URL canonicalisation and the small URL facts the frontier needs.  No Scrapy import."""

from __future__ import annotations

import posixpath
from functools import lru_cache
from urllib.parse import urlsplit

from w3lib.url import canonicalize_url

ALLOWED_SCHEMES = frozenset({"http", "https"})


@lru_cache(maxsize=1 << 15)
def canonical(url: str) -> str:
    """The de-duplication key of a URL: fragment dropped, query sorted, host lower-cased.

    Raises ValueError for a URL that cannot be a fetchable http(s) URL.  Cached (a bounded
    LRU): a site's navigation links recur on every page, and each link is canonicalised by the
    spider and again by the scheduler; w3lib's canonicalisation was 17% of a replayed crawl's
    CPU time.
    """
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        raise ValueError(f"not an http(s) URL: {url[:200]!r}")
    if not parts.hostname:
        raise ValueError(f"URL has no host: {url[:200]!r}")
    result = canonicalize_url(url.strip(), keep_fragments=False)
    name = urlsplit(result).hostname  # canonicalisation may drop or keep a broken host
    if not name or any(c <= " " or c == "\x7f" for c in name):
        raise ValueError(f"URL has no valid host: {url[:200]!r}")
    return result


def host(url: str) -> str:
    """The server a URL lives on: lower-cased host name, port ignored (as Scrapy's slots)."""
    return (urlsplit(url).hostname or "").lower()


def directory(url: str) -> str:
    """``scheme://host/a/b/`` for ``.../a/b/page.html``: the unit of the slides' nearness rules."""
    parts = urlsplit(url)
    path = parts.path or "/"
    if not path.endswith("/"):
        path = posixpath.dirname(path)
        if not path.endswith("/"):
            path += "/"
    return f"{parts.scheme}://{(parts.hostname or '').lower()}{path}"

"""URL canonicalisation and the small URL facts the frontier needs.  No Scrapy import."""

from __future__ import annotations

import ipaddress
import posixpath
from functools import lru_cache
from urllib.parse import urlsplit

from w3lib.url import canonicalize_url

ALLOWED_SCHEMES = frozenset({"http", "https"})

#: entries of each cache keyed by a URL (canonical and host here, the spider's request key,
#: the robots.txt key, the trap rules' answer, the learned order's directory, urljoin's
#: answer).  Their hits are a URL asked again by the spider, the filters and the scheduler
#: while its page is handled, and a site's navigation links on the next pages fetched from
#: it: a few hundred pages' distinct links.  Larger caches cost more RSS than their hits save
#: (bench/scale.py; figures in docs/benchmarks.md).
URL_CACHE_SIZE = 1 << 13


def canonical(url: str) -> str:
    """The de-duplication key of a URL: fragment dropped, query sorted, host lower-cased.

    Raises ValueError for a URL that cannot be a fetchable http(s) URL.  A URL with an ASCII
    fragment is canonicalised without it (the answer is the same: see _defragmented), so the
    links to a page's sections share one cache entry: a page links to many sections of the
    same few pages (400 docweb pages: 30,547 distinct link URLs, 13,212 without fragments).
    """
    return _canonical(_defragmented(url))


def _defragmented(url: str) -> str:
    """``url`` without its fragment when dropping it cannot change ``canonical(url)``.

    The parsers end the host, path and query at the first "#" and canonicalisation drops the
    fragment, so only two things could differ: a fragment that cannot be encoded (not ASCII:
    kept, it may raise), and whitespace or a control character that the cut would bring to the
    end of the URL, where it is stripped (kept whole).
    """
    cut = url.find("#")
    if cut <= 0:
        return url
    last = url[cut - 1]
    if last <= " " or last.isspace() or not url.isascii() and not url[cut + 1:].isascii():
        return url
    return url[:cut]


@lru_cache(maxsize=URL_CACHE_SIZE)
def _canonical(url: str) -> str:
    """canonical(), cached (a bounded LRU): a site's navigation links recur on every page, and
    each link is canonicalised by the spider and again by the scheduler; w3lib's
    canonicalisation was 17% of a replayed crawl's CPU time."""
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


@lru_cache(maxsize=URL_CACHE_SIZE)
def host(url: str) -> str:
    """The server a URL lives on: lower-cased host name, port ignored (as Scrapy's slots).

    Cached: asked of every outlink by the link filter and again by the scheduler.
    """
    return (urlsplit(url).hostname or "").lower()


def allowed_domain(entry: str) -> str:
    """An ``allowed_domains`` entry as Scrapy's offsite filter reads it: a host name (or an IP
    address), lower-cased, which allows that host and its subdomains on any port.  ValueError
    (one line) for an entry naming a port, a scheme or a path: the offsite filter compares
    host names only, so such an entry would pass the spider's check and let nothing through
    Scrapy's."""
    value = entry.strip().lower()
    try:
        return str(ipaddress.ip_address(value[1:-1] if value.startswith("[") else value))
    except ValueError:
        pass
    if "/" in value or not value:
        raise ValueError(f"{entry!r} is not a domain: give a host name, such as example.com")
    name, colon, port = value.rpartition(":")
    if colon:
        raise ValueError(f"{entry!r} names a port: give the host name {name.strip('[]')!r} "
                         f"(a domain is allowed on any port)")
    return value


def in_domains(url: str, domains: list[str] | tuple[str, ...]) -> bool:
    """Whether ``url``'s host is one of ``domains`` (:func:`allowed_domain` entries) or a
    subdomain of one, whatever its port: the rule of Scrapy's offsite filter."""
    name = host(url)
    return bool(name) and any(name == d or name.endswith("." + d) for d in domains)


def scheme_twin(url: str) -> str | None:
    """The same URL over the other of http and https, or None (another scheme, or a port
    named: a server on a port of its own is not the same server over the other scheme).

    Sites serve a page at both (the web's move to https: old absolute links, redirects from
    http), and a crawl that takes the two for two pages fetches it twice or pays a redirect
    for a page it has: on a real 16,000-page documentation web, one topic's 500-page crawl
    fetched 154 pages twice this way.
    """
    if url.startswith("https://"):
        rest, other = url[8:], "http://"
    elif url.startswith("http://"):
        rest, other = url[7:], "https://"
    else:
        return None
    end = rest.find("/")
    netloc = rest if end < 0 else rest[:end]
    if ":" in netloc or "@" in netloc:  # a port, IPv6 brackets, user info
        return None
    return other + rest


def directory(url: str) -> str:
    """``scheme://host/a/b/`` for ``.../a/b/page.html``: the unit of the slides' nearness rules."""
    parts = urlsplit(url)
    path = parts.path or "/"
    if not path.endswith("/"):
        path = posixpath.dirname(path)
        if not path.endswith("/"):
            path += "/"
    return f"{parts.scheme}://{(parts.hostname or '').lower()}{path}"

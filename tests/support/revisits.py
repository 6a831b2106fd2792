"""A small changing web for the continuous-crawl tests, and what its truth says a crawler that
fetched it as the server's log shows should have found."""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from datetime import datetime
from typing import Any

from focuscrawl.demo.changing import HOUR
from focuscrawl.demo.webserver import Page

HOSTS = ("a.test", "b.test")
TOPIC = "garden compost"
#: model time runs an hour a second: the fastest pages change about once a second
CHANGING = {"seed": 7, "speed": 3600.0, "never": 0.25, "min_interval": HOUR,
            "max_interval": 24 * HOUR, "noise": 0.4, "noise_interval": 600.0, "gone": 0.15,
            "gone_within": 10 * HOUR, "unlinked": 0.25}


SEED = "http://a.test/index.html"


def site(pages_per_host: int = 12) -> dict[str, dict[str, Page]]:
    """Pages in ``<main>`` with a chain of links through every host, and an index page
    linking to them all (:data:`SEED`); half on the topic."""
    urls = [f"http://{h}/p{i}.html" for h in HOSTS for i in range(pages_per_host)]
    pages: dict[str, dict[str, Page]] = {h: {} for h in HOSTS}
    index = "".join(f'<li><a href="{u}">garden page</a></li>' for u in urls)
    pages["a.test"]["/index.html"] = Page(f"<html><head><title>Index</title></head><body><main>"
                                          f"<ul>{index}</ul></main></body></html>")
    for k, url in enumerate(urls):
        links = [urls[(k + 1) % len(urls)], urls[(k * 7 + 3) % len(urls)]]
        words = "garden compost soil " * 6 if k % 2 else "weather report rain " * 6
        anchors = "".join(f'<a href="{u}">garden {i}</a> ' for i, u in enumerate(links))
        body = (f"<html><head><title>Page {k}</title></head><body><nav>{anchors}</nav>"
                f"<main><h1>Page {k}</h1><p>{words}</p></main></body></html>")
        host, path = url[len("http://"):].split("/", 1)
        pages[host]["/" + path] = Page(body)
    return pages


def linkers() -> dict[str, set[str]]:
    """Each page of :func:`site` -> the pages linking to it (itself left out)."""
    out: dict[str, set[str]] = defaultdict(set)
    for host, pages in site().items():
        for path, page in pages.items():
            source = f"http://{host}{path}"
            for target in re.findall(r'href="([^"]+)"', page.body):
                if target != source:
                    out[target].add(source)
    return out


def fetch_times(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Each page's fetches that got an answer from the changing web (200, 304, 410, 404)."""
    out: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r["path"] != "/robots.txt" and r["status"] in (200, 304, 404, 410):
            out[f"http://{r['host']}{r['path']}"].append(r["time_epoch"])
    return {url: sorted(ts) for url, ts in out.items()}


def changes_between(changes: list[float], a: float, b: float) -> int:
    return bisect.bisect_right(changes, b) - bisect.bisect_right(changes, a)


def expected_changes(fetches: dict[str, list[float]], truth: dict[str, Any],
                     skip: set[tuple[str, float]] = frozenset()) -> Counter[str]:
    """Per page, the fetches after which the content had changed since the fetch before:
    what a crawler seeing every one of those fetches finds (``skip``: fetches it never saw)."""
    found: Counter[str] = Counter()
    for url, times in fetches.items():
        page = truth["pages"].get(url)
        if page is None:
            continue
        gone = page["gone"]
        seen = [t for t in times if (url, t) not in skip and (gone is None or t < gone)]
        for a, b in zip(seen, seen[1:], strict=False):
            if changes_between(page["changes"], a, b):
                found[url] += 1
    return found


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def served_for(fetches: dict[str, list[float]], item: dict[str, Any]) -> float:
    """When the server answered the fetch a line was made from: the page's last fetch before
    the line's ``fetched_at`` (the spider writes it while parsing, however late a busy machine
    makes that; a page is not fetched again before its answer is parsed)."""
    done = epoch(item["fetched_at"])
    return max(t for t in fetches[item["url"]] if t <= done + 0.001)


def changed_between_lines(fetches: dict[str, list[float]], truth: dict[str, Any],
                          before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether the web changed the page between the fetches of two of its lines."""
    return changes_between(truth["pages"][after["url"]]["changes"],
                           served_for(fetches, before), served_for(fetches, after)) > 0

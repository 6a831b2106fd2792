"""Each strategy through the real Scrapy engine: the fetch order is the frontier's order.

The site is crawled with one request at a time; the expected order is computed by a virtual
crawl (the frontier alone, fed with the same pages scored by the same classifier), so the test
checks that Scrapy's engine, the scheduler adapter and the politeness layer do not reorder what
the frontier decides.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
import pytest_twisted

from focuscrawl.core.extract import extract
from focuscrawl.core.frontier import Link
from focuscrawl.core.learned import PageDigest
from focuscrawl.core.orders import make_frontier
from focuscrawl.core.relevance import Topic, tokenize
from focuscrawl.core.urls import canonical, host
from focuscrawl.demo.webserver import Page, ServerProcess
from tests.support.project import crawl, project_settings

HOSTS = ["alpha.test", "beta.test", "gamma.test"]
WORDS = "river stone cloud garden paper window music travel market engine".split()


def build_site(seed: int = 5) -> dict[str, dict[str, Page]]:
    rng = random.Random(seed)
    urls = [f"http://{h}/p{i}.html" for h in HOSTS for i in range(12)]
    pages: dict[str, dict[str, Page]] = {h: {} for h in HOSTS}
    for n, url in enumerate(urls):
        topical = rng.random() < 0.35
        words = [rng.choice(WORDS) for _ in range(40)]
        if topical:
            words += ["regex"] * rng.randint(1, 14) + ["pattern"] * rng.randint(0, 4)
        title = "Regex notes" if topical and rng.random() < 0.3 else f"Page {n}"
        links = rng.sample(urls, 4)
        anchors = " ".join(
            f'<a href="{u}">{"regex tips" if rng.random() < 0.15 else "more"}</a>' for u in links
        )
        body = f"<html><head><title>{title}</title></head><body><p>{' '.join(words)}</p>{anchors}"
        pages[host(url)][url.split("/", 3)[3] and "/" + url.split("/", 3)[3]] = Page(
            body + "</body></html>")
    return pages


SITE = build_site()


def virtual_order(name: str, topic: Topic, seed_url: str, dupefilter: bool = False) -> list[str]:
    """The frontier alone over the site, as Cho's virtual crawler.

    ``dupefilter`` drops a URL seen before it reaches the frontier, as Scrapy's scheduler does.
    """
    frontier = make_frontier(name, n=4, seed=0, every=5, keywords=topic.keywords, learn_every=5)
    seen = {seed_url}
    frontier.add(Link(seed_url, host=host(seed_url), keyword=topic.mentions(seed_url)))
    order: list[str] = []
    while (entry := frontier.pop()) is not None:
        order.append(entry.url)
        page_src = SITE[host(entry.url)][entry.url.split(host(entry.url), 1)[1]].body
        page = extract(page_src, entry.url)
        scored = topic.score_page(page.title, page.text)
        digest = None
        if frontier.learns:  # what the spider sends a learning order
            tokens = tokenize(page.title) + tokenize(page.main_text)
            digest = PageDigest.from_counts(Counter(tokens), topic.hits(tokens))
        frontier.crawled(entry.url, scored.score, scored.hot, digest)
        for link in page.links:
            url = canonical(link.url)
            if dupefilter and url in seen:
                continue
            seen.add(url)
            frontier.add(Link(url, host=host(url), anchor=link.anchor, parent=entry.url,
                              parent_score=scored.score, parent_hot=scored.hot,
                              depth=entry.depth + 1,
                              context=link.context if frontier.learns else "",
                              chrome=link.chrome,
                              keyword=topic.mentions(link.anchor) or topic.mentions(url)))
    return order


@pytest.fixture(scope="module")
def server():
    with ServerProcess(pages=SITE) as srv:
        yield srv


@pytest.mark.parametrize("name", ["breadth-first", "cho", "cho-distance", "best-first",
                                  "best-n-first", "distiller", "learned"])
@pytest_twisted.ensureDeferred
async def test_engine_fetches_in_the_frontiers_order(server, proxy_to, name):
    proxy_to(server)
    seed_url = "http://alpha.test/p0.html"
    expected = virtual_order(name, Topic("regex pattern"), seed_url)
    before = len(server.read_log())
    result = await crawl(
        project_settings(FOCUS_DELAY=0, CONCURRENT_REQUESTS=1, FOCUS_STRICT_ORDER=True,
                         FOCUS_DISTILLER_EVERY=5, FOCUS_BEST_N=4, FOCUS_ROBOTSTXT_OBEY=False,
                         FOCUS_LEARN_EVERY=5),
        keywords="regex pattern", seeds=seed_url, strategy=name,
    )
    served = [f"http://{r['host']}{r['path']}" for r in server.read_log()[before:]
              if r["path"] != "/robots.txt"]
    exported = [i["url"] for i in sorted(result.items, key=lambda i: i["order"])]
    assert served == exported  # the server saw the pages in the order they were numbered
    assert exported == expected
    assert len(expected) > 20


@pytest.mark.parametrize("name", ["breadth-first", "cho"])
@pytest_twisted.ensureDeferred
async def test_priority_queue_brings_the_order_to_scrapys_own_scheduler(server, proxy_to, name):
    proxy_to(server)
    seed_url = "http://alpha.test/p0.html"
    result = await crawl(
        project_settings(
            SCHEDULER="scrapy.core.scheduler.Scheduler",
            SCHEDULER_PRIORITY_QUEUE="focuscrawl.seam.pqueues.FocusPriorityQueue",
            FOCUS_STRATEGY=name, FOCUS_DELAY=0, CONCURRENT_REQUESTS=1,
            FOCUS_STRICT_ORDER=True, FOCUS_ROBOTSTXT_OBEY=False,
        ),
        keywords="regex pattern", seeds=seed_url,
    )
    exported = [i["url"] for i in result.items]
    # Scrapy's dupefilter hides rediscovered links from the queue: no promotion by them
    assert exported == virtual_order(name, Topic("regex pattern"), seed_url, dupefilter=True)

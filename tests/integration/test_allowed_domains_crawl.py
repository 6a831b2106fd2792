"""allowed_domains on a web whose URLs name a port: the crawl follows the domain's pages on
that port (the spider and Scrapy's offsite filter agree), and an entry with a port stops the
crawl at start with one line instead of crawling nothing."""

from __future__ import annotations

import pytest
import pytest_twisted

from focuscrawl.demo.webserver import Page, ServerProcess
from tests.support.project import crawl, project_settings


def html(title: str, links: list[str]) -> str:
    anchors = " ".join(f'<a href="{href}">regex {i}</a>' for i, href in enumerate(links))
    return f"<html><head><title>{title}</title></head><body><p>regex</p>{anchors}</body></html>"


PAGES = {
    "a.test": {
        "/index.html": Page(html("Index", ["/one.html", "http://www.a.test:8080/two.html",
                                           "http://b.test:8080/off.html"])),
        "/one.html": Page(html("One", [])),
        "/two.html": Page(html("Two", [])),
    },
    "www.a.test": {"/two.html": Page(html("Two", []))},
    "b.test": {"/off.html": Page(html("Off", []))},
}


@pytest.fixture(scope="module")
def server():
    with ServerProcess(pages=PAGES) as srv:
        yield srv


@pytest_twisted.ensureDeferred
async def test_a_domain_is_crawled_on_any_port(server, proxy_to):
    proxy_to(server)
    result = await crawl(project_settings(FOCUS_DELAY=0), keywords="regex",
                         seeds="http://a.test:8080/index.html", allowed_domains="a.test")
    assert {i["url"] for i in result.items} == {
        "http://a.test:8080/index.html", "http://a.test:8080/one.html",
        "http://www.a.test:8080/two.html"}
    assert result.stats["focus/links/offsite"] == 1  # b.test, dropped by the spider's check
    assert "offsite/filtered" not in result.stats  # nothing left for Scrapy's filter to drop


@pytest_twisted.ensureDeferred
async def test_a_domain_with_a_port_stops_the_crawl_at_start(server, proxy_to):
    proxy_to(server)
    result = await crawl(project_settings(FOCUS_DELAY=0), keywords="regex",
                         seeds="http://a.test:8080/index.html", allowed_domains="a.test:8080")
    assert result.items == []
    assert result.stats["finish_reason"] == "bad_arguments"
    assert ("allowed_domains: 'a.test:8080' names a port: give the host name 'a.test'"
            in result.stats["focus/argument_error"])

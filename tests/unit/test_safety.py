"""Safe defaults: http(s) only, no telnet or remote control, no private addresses via links."""

from __future__ import annotations

import logging

import pytest
import pytest_twisted
from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.test import get_crawler

from focuscrawl.seam.middlewares.safety import PrivateAddressMiddleware, host_reason, parse_ip
from tests.support.project import crawl_settings


@pytest.mark.parametrize("host,reason", [
    ("127.0.0.1", "loopback"), ("127.1", "loopback"), ("2130706433", "loopback"),
    ("0x7f000001", "loopback"), ("0177.0.0.1", "loopback"), ("[::1]", "loopback"),
    ("::ffff:127.0.0.1", "loopback"), ("10.0.0.7", "private"), ("192.168.1.1", "private"),
    ("172.16.5.4", "private"), ("100.64.0.1", "private"), ("fc00::1", "private"),
    ("169.254.169.254", "link_local"), ("fe80::1%eth0", "link_local"),
    ("0.0.0.0", "reserved"), ("224.0.0.1", "reserved"), ("255.255.255.255", "reserved"),
    ("localhost", "local_name"), ("LOCALHOST.", "local_name"), ("db.localhost", "local_name"),
    ("printer.local", "local_name"), ("metadata.google.internal", "local_name"),
    ("nas.home.arpa", "local_name"), ("intranet", "local_name"), ("", "local_name"),
    ("example.com", None), ("8.8.8.8", None), ("2606:4700:4700::1111", None),
    ("deadbeef.example", None), ("1.2.3.4.example.org", None), ("a.test", None),
])
def test_host_reasons(host, reason):
    assert host_reason(host) == reason


def test_parse_ip_reads_what_a_resolver_reads():
    assert str(parse_ip("127.1")) == "127.0.0.1"
    assert str(parse_ip("0x7f.1")) == "127.0.0.1"
    assert str(parse_ip("[::1]")) == "::1"
    assert parse_ip("example.com") is None
    assert parse_ip("1.2.3.4.5") is None


def test_telnet_and_remote_control_are_off():
    s = crawl_settings()
    assert s.getbool("TELNETCONSOLE_ENABLED") is False
    assert s.getbool("REMOTE_CONTROL_ENABLED") is False
    handlers = s.getdict("DOWNLOAD_HANDLERS")
    assert all(handlers.get(scheme, "") is None for scheme in ("file", "s3", "ftp", "data"))


class _Spider(Spider):
    name = "safety"


@pytest_twisted.ensureDeferred
async def test_resolved_addresses_are_checked_only_without_a_proxy(monkeypatch):
    crawler = get_crawler(_Spider, {"FOCUS_BLOCK_PRIVATE": True})
    mw = PrivateAddressMiddleware.from_crawler(crawler)

    def run(coro):  # as Scrapy runs middleware coroutines: an asyncio task
        return deferred_from_coro(coro)

    assert [str(a) for a in await run(mw._resolve("localhost"))] == ["127.0.0.1"]

    answers = {"evil.example": "10.9.8.7", "fine.example": "93.184.216.34"}

    async def resolve(host):
        return [parse_ip(answers[host])]

    monkeypatch.setattr(mw, "_resolve", resolve)
    mw.proxies = {}
    assert await run(mw.process_request(Request("http://fine.example/"))) is None
    with pytest.raises(IgnoreRequest):
        await run(mw.process_request(Request("http://evil.example/")))
    assert crawler.stats.get_value("focus/safety/blocked/resolved_private") == 1
    # through a proxy the name is the proxy's to resolve: not looked up here
    proxied = Request("http://evil.example/", meta={"proxy": "http://127.0.0.1:3128"})
    assert await run(mw.process_request(proxied)) is None
    mw.proxies = {"http": "http://127.0.0.1:3128"}
    assert await run(mw.process_request(Request("http://evil.example/"))) is None
    # ... but literal addresses and local names are refused either way
    for url in ("http://127.0.0.1:8080/", "http://localhost/", "ftp://example.com/"):
        with pytest.raises(IgnoreRequest):
            await run(mw.process_request(Request(url, meta={"proxy": "http://127.0.0.1:3128"})))


@pytest_twisted.ensureDeferred
async def test_start_requests_pass_and_each_refusal_reason_is_said_once(caplog):
    caplog.set_level(logging.INFO)
    crawler = get_crawler(_Spider, {"FOCUS_BLOCK_PRIVATE": True})
    mw = PrivateAddressMiddleware.from_crawler(crawler)
    mw.proxies = {}

    def run(coro):
        return deferred_from_coro(coro)

    start = Request("http://127.0.0.1:9/", meta={"is_start_request": True})
    assert await run(mw.process_request(start)) is None
    assert await run(mw.process_request(Request("http://127.0.0.1:9/next"))) is None
    # a redirect away from a start request is a link like any other
    moved = Request("http://10.0.0.1/", meta={"is_start_request": True,
                                              "redirect_urls": ["http://127.0.0.1:9/"]})
    for request in (moved, Request("http://10.0.0.2/"), Request("http://localhost/")):
        with pytest.raises(IgnoreRequest):
            await run(mw.process_request(request))
    said = [r.getMessage() for r in caplog.records if r.name == mw.__module__]
    assert len(said) == 2 and "(private, FOCUS_BLOCK_PRIVATE)" in said[0], said
    assert "(local_name, FOCUS_BLOCK_PRIVATE)" in said[1]
    assert crawler.stats.get_value("focus/safety/blocked/private") == 2


def test_auto_reads_seeds_given_as_a_file(tmp_path):
    """FOCUS_SEEDS is read as the spider reads it (focuscrawl.seam.arguments.parse_seeds)."""
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("# an intranet crawl\nhttp://10.0.0.5/\n", "utf-8")
    crawler = get_crawler(_Spider, {"FOCUS_SEEDS": str(seeds)})
    mw = PrivateAddressMiddleware.from_crawler(crawler)
    mw._spider_opened(_Spider())
    assert not mw.active

"""Safe defaults: http(s) only, no telnet or remote control, no private addresses via links."""

from __future__ import annotations

import logging

import pytest
import pytest_twisted
from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.test import get_crawler

from focuscrawl.demo.webserver import Page, ServerProcess
from focuscrawl.seam.middlewares.safety import PrivateAddressMiddleware, host_reason, parse_ip
from tests.support.project import crawl, project_settings


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
    s = project_settings()
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


def html(body: str, links: list[str]) -> str:
    anchors = "".join(f'<a href="{u}">link {i}</a> ' for i, u in enumerate(links))
    return f"<html><head><title>t</title></head><body><p>{body}</p>{anchors}</body></html>"


@pytest.fixture(scope="module")
def server():
    with ServerProcess(pages={"pub.test": {}}) as probe:
        port = probe.port  # a port for the hostile links below; the real server follows
    hostile = [
        f"http://127.0.0.1:{port}/secret", f"http://localhost:{port}/", "http://10.1.2.3/",
        "http://169.254.169.254/latest/meta-data/", f"http://[::1]:{port}/",
        f"http://2130706433:{port}/", "http://intranet/", "http://router.local/admin",
        "file:///etc/passwd", "ftp://pub.test/x", "data:text/html,<a href=x>x</a>",
    ]
    pages = {
        "pub.test": {
            "/": Page(html("garden seeds", hostile + ["/go", "/ok.html"])),
            "/go": Page.redirect("http://127.0.0.1:1/admin"),
            "/ok.html": Page(html("garden ok", ["http://other.test/"])),
        },
        "other.test": {"/": Page(html("garden other", []))},
    }
    with ServerProcess(pages=pages) as srv:
        yield srv


@pytest_twisted.ensureDeferred
async def test_public_crawl_never_reaches_private_addresses(server, proxy_to):
    proxy_to(server)
    start = len(server.read_log())
    result = await crawl(project_settings(FOCUS_DELAY=0), keywords="garden",
                         seeds="http://pub.test/")
    assert set(result.urls) == {"http://pub.test/", "http://pub.test/ok.html",
                                "http://other.test/"}
    hosts = {r["host"] for r in server.read_log()[start:]}
    assert hosts == {"pub.test", "other.test"}  # nothing else even reached the proxy
    stats = result.stats
    assert stats["focus/safety/block_private"] == 1  # auto: the seed is public
    running = {type(ext).__name__ for ext in result.crawler.extensions.middlewares}
    assert "CoreStats" in running and not running & {"TelnetConsole", "RemoteControl"}
    blocked = {k.rsplit("/", 1)[1]: v for k, v in stats.items()
               if k.startswith("focus/safety/blocked/")}
    # 127.0.0.1 twice (a link and the redirect), [::1], 2130706433 -> 127.0.0.1
    assert blocked == {"loopback": 4, "local_name": 3, "private": 1, "link_local": 1}
    # file:, ftp:, data: never became requests
    assert stats.get("focus/filtered/scheme", 0) + stats.get("focus/links/not_http", 0) >= 3


@pytest_twisted.ensureDeferred
async def test_loopback_seeds_switch_auto_off_and_true_forces_it(tmp_path):
    pages = {"a.test": {"/": Page(html("garden", ["/b.html", "http://10.1.2.3/"])),
                        "/b.html": Page(html("garden b", []))}}
    with ServerProcess(pages=pages, bind_hosts=True) as srv:
        seed = srv.direct_url("a.test", "/")
        result = await crawl(project_settings(FOCUS_DELAY=0), keywords="garden", seeds=seed)
        assert len(result.items) == 2
        assert result.stats["focus/safety/block_private"] == 0
        forced = await crawl(project_settings(FOCUS_DELAY=0, FOCUS_BLOCK_PRIVATE=True),
                             keywords="garden", seeds=seed)
        # the seed is the user's own request, and its host with it: only the link to
        # another private address is refused
        assert len(forced.items) == 2
        assert forced.stats["focus/safety/blocked/private"] == 1
        assert "focus/safety/blocked/loopback" not in forced.stats


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

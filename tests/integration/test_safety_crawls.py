"""Safe defaults in real crawls: no private address reached via links or redirects,
loopback seeds switch the block off (the rest: tests/unit/test_safety.py)."""

from __future__ import annotations

import pytest
import pytest_twisted

from focuscrawl.demo.webserver import Page, ServerProcess
from tests.support.project import crawl, project_settings


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

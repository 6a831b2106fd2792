"""JavaScript rendering with scrapy-playwright and the system Chromium, through `scrapy crawl`.

The test site's pages carry no text and no links in their HTML: a script fetches them as JSON
and writes them into the page.  Only a browser sees the topic's keyword ("zeppelin") and the
links, so a page scores above 0 exactly when it was rendered.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.http import Request
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from focuscrawl.demo.webserver import Page, ServerProcess
from focuscrawl.seam.arguments import SpiderArguments
from focuscrawl.seam.render import (
    MIDDLEWARE,
    PLAYWRIGHT_HANDLER,
    RenderMiddleware,
    configure_rendering,
    spider_mode,
)

ROOT = Path(__file__).resolve().parents[2]
DELAY = 0.5  # FOCUS_DELAY for the crawls: long enough to see, short enough to be quick

SHELL = """<!DOCTYPE html><html><head><title>Loading</title></head>
<body><div id="app">Loading, please wait.</div>
<script>
fetch('/content.json').then(r => r.json()).then(d => {
  document.title = d.title;
  document.getElementById('app').innerHTML = '<p>' + d.text + '</p>' +
    d.links.map(l => '<a href="' + l[0] + '">' + l[1] + '</a>').join(' ');
});
</script></body></html>"""


def js_site(prefix: str) -> dict[str, Page]:
    """A page whose text and links exist only after its script ran, and the pages it links."""
    content = {"title": "Zeppelin airships", "text": "The zeppelin: a history of rigid airships.",
               "links": [["/hangar.html", "the zeppelin hangar"], ["/crew.html", "crew"]]}
    return {
        "/": Page(SHELL),
        "/content.json": Page(json.dumps(content), content_type="application/json"),
        "/hangar.html": Page(f"<html><head><title>{prefix} hangar</title></head>"
                             "<body><p>Where a zeppelin is built.</p></body></html>"),
        "/crew.html": Page(f"<html><head><title>{prefix} crew</title></head>"
                           "<body><p>Twenty people flew a zeppelin.</p></body></html>"),
    }


@pytest.fixture(scope="module")
def server():
    pages = {"app.test": js_site("app"), "plain.test": js_site("plain")}
    with ServerProcess(pages=pages, bind_hosts=True) as srv:
        yield srv


def scrapy_crawl(tmp_path: Path, *args: str, env: dict[str, str] | None = None
                 ) -> tuple[list[dict], str]:
    """Run `scrapy crawl topic ...` from the project root as a user would; (items, log)."""
    out, log = tmp_path / "items.jsonl", tmp_path / "crawl.log"
    base = {k: v for k, v in os.environ.items()
            if k.lower() not in ("http_proxy", "https_proxy", "no_proxy")}
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", "keywords=zeppelin",
           "-s", f"FOCUS_DELAY={DELAY}", "-s", "LOG_LEVEL=INFO", "-s", f"LOG_FILE={log}",
           "-O", str(out), *args]
    proc = subprocess.run(cmd, cwd=ROOT, env={**base, **(env or {})}, timeout=120,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    text = log.read_text("utf-8") if log.exists() else ""
    assert proc.returncode == 0, proc.stderr[-3000:] + text[-3000:]
    assert "Spider closed (finished)" in text, text[-3000:]
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()], text


def page_rows(server: ServerProcess, host: str, since: float) -> list[dict]:
    return [r for r in server.read_log()
            if r["host"] == host and r["time_epoch"] >= since and r["method"] == "GET"]


def test_off_by_default_installs_nothing() -> None:
    settings = Settings()
    settings.setmodule("settings", priority="project")
    before = settings.getdict("DOWNLOAD_HANDLERS")
    assert configure_rendering(settings, None) is False
    assert configure_rendering(settings, "none") is False
    assert settings.getdict("DOWNLOAD_HANDLERS") == before
    assert PLAYWRIGHT_HANDLER not in settings.getdict("DOWNLOAD_HANDLERS").values()
    assert MIDDLEWARE not in settings.getdict("DOWNLOADER_MIDDLEWARES")
    assert "PLAYWRIGHT_LAUNCH_OPTIONS" not in settings


def test_render_js_installs_the_handler_for_the_system_chromium() -> None:
    settings = Settings()
    settings.setmodule("settings", priority="project")
    assert configure_rendering(settings, "js") is True
    assert settings["FOCUS_RENDER"] == "js"
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    assert handlers["http"] == handlers["https"] == PLAYWRIGHT_HANDLER
    assert settings.getdict("DOWNLOADER_MIDDLEWARES")[MIDDLEWARE] == 940
    launch = settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert Path(launch["executable_path"]).name.startswith(("chromium", "google-chrome"))
    assert "--disable-background-networking" in launch["args"]
    assert settings.getfloat("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT") == (
        settings.getfloat("DOWNLOAD_TIMEOUT") * 1000)
    # a second call (spider and add-on both configure) changes nothing
    frozen = settings.copy_to_dict()
    configure_rendering(settings, "js")
    assert settings.copy_to_dict() == frozen


def test_middleware_marks_only_the_listed_domains() -> None:
    crawler = get_crawler(settings_dict={"FOCUS_RENDER_DOMAINS": "app.test, spa.example.org"})
    crawler.stats.open_spider()
    mw = RenderMiddleware.from_crawler(crawler)
    marked = {}
    for url in ("http://app.test/", "http://www.app.test/x", "http://plain.test/",
                "http://app.test/robots.txt", "https://spa.example.org/#/route"):
        request = Request(url)
        mw.process_request(request)
        marked[url] = request.meta.get("playwright", False)
    assert marked == {"http://app.test/": True, "http://www.app.test/x": True,
                      "http://plain.test/": False, "http://app.test/robots.txt": False,
                      "https://spa.example.org/#/route": True}
    assert crawler.stats.get_value("focus/render/requests") == 3
    post = Request("http://app.test/form", method="POST")
    mw.process_request(post)
    assert "playwright" not in post.meta
    off = get_crawler(settings_dict={})
    with pytest.raises(Exception, match="rendering is off"):
        RenderMiddleware.from_crawler(off)


def test_spider_mode_reads_scrapyd_strings() -> None:
    class Topicish:
        focus_arguments = SpiderArguments(raw={"render": " JS "})

    class Other:
        render = "none"

    assert spider_mode(Topicish()) == "js"
    assert spider_mode(Other()) == ""
    assert spider_mode(object()) is None


def test_render_js_scores_rendered_text_and_follows_rendered_links(server, tmp_path) -> None:
    start = server.read_log()[-1]["time_epoch"] if server.read_log() else 0.0
    seed = server.direct_url("app.test", "/")
    items, log = scrapy_crawl(tmp_path, "-a", f"seeds={seed}", "-a", "render=js",
                              "-a", "max_pages=10")
    by_path = {i["url"].removeprefix(seed.rstrip("/")): i for i in items}
    assert set(by_path) == {"/", "/hangar.html", "/crew.html"}
    root = by_path["/"]
    assert root["title"] == "Zeppelin airships"  # the title the script wrote
    assert root["score"] > 0 and root["outlinks"] == 2
    for path in ("/hangar.html", "/crew.html"):  # links that exist only in the rendered page
        assert by_path[path]["parent"] == root["url"]
        assert by_path[path]["priority"] > 0  # the frontier ranked them by the rendered score
    assert sorted(i["order"] for i in items) == [1, 2, 3]  # counted by FocusScheduler
    assert "'focus/render/requests': 3" in log
    assert "'playwright/page_count': 3" in log
    # politeness held for the browser's page loads: one at a time, FOCUS_DELAY apart.  The
    # delay runs from one request's start in the crawler to the next; the first page reaches the
    # server late (the browser starts), so the server sees the spacing from the second page on.
    rows = [r for r in page_rows(server, "app.test", start) if r["path"].endswith(("/", ".html"))]
    assert len(rows) == 3 and max(r["inflight_host"] for r in rows) == 1
    arrivals = sorted(r["time_epoch"] for r in rows)
    assert arrivals[2] - arrivals[1] >= DELAY - 0.1
    assert any(r["path"] == "/content.json" for r in page_rows(server, "app.test", start))


def test_without_rendering_the_same_page_scores_zero_and_only_listed_domains_render(
        server, tmp_path) -> None:
    """FOCUS_RENDER_DOMAINS=app.test: app.test is rendered, plain.test (same page) is not.

    The hosts are reached by name through the test server's proxy mode (``http_proxy``), which
    the browser is given too.
    """
    start = server.read_log()[-1]["time_epoch"] if server.read_log() else 0.0
    items, log = scrapy_crawl(
        tmp_path, "-a", "seeds=http://app.test/,http://plain.test/", "-a", "max_pages=10",
        "-s", "FOCUS_RENDER_DOMAINS=app.test", env=server.proxy_env())
    by_url = {i["url"]: i for i in items}
    assert set(by_url) == {"http://app.test/", "http://app.test/hangar.html",
                           "http://app.test/crew.html", "http://plain.test/"}
    plain = by_url["http://plain.test/"]
    assert plain["score"] == 0 and plain["outlinks"] == 0 and plain["title"] == "Loading"
    assert by_url["http://app.test/"]["score"] > 0
    assert "'focus/render/requests': 3" in log
    assert not any(r["path"] == "/content.json" for r in page_rows(server, "plain.test", start))
    assert any(r["path"] == "/content.json" for r in page_rows(server, "app.test", start))

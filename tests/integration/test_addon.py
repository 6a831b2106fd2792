"""The focuscrawl add-on: one line in another Scrapy project's settings turns focuscrawl on.

The end-to-end test builds a throwaway project (its own scrapy.cfg, settings and a spider that
knows nothing of focuscrawl), crawls a local two-host site with ``scrapy crawl`` in a subprocess,
and reads the crawl's stats and the server's access log.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from scrapy.settings import Settings
from scrapy.utils.misc import load_object

from focuscrawl.demo.webserver import Page, ServerProcess
from focuscrawl.seam.addon import FocusCrawl, focus_defaults
from focuscrawl.seam.render import PLAYWRIGHT_HANDLER
from tests.support.project import write_project

pytestmark = pytest.mark.third_party  # in the Scrapy matrix (noxfile.py)

DELAY = 0.25


def components(settings: Settings, name: str) -> dict:
    """A component dict with every key loaded, to compare paths with classes."""
    return {load_object(k): v for k, v in settings.getdict(name).items()}


def test_applies_what_config_declares_http_by_focuscrawls_handler() -> None:
    """(The project's own settings are this add-on: tests/unit/test_activation.py.)"""
    settings = Settings()  # Scrapy's defaults: a project that has not configured anything
    FocusCrawl().update_settings(settings)
    assert settings["SCHEDULER"] == "focuscrawl.seam.scheduler.FocusScheduler"
    focus_names = [n for n in focus_defaults() if n.startswith("FOCUS_")]
    assert all(settings.getpriority(n) == 15 for n in focus_names)  # Scrapy's "addon" priority
    assert load_object("focuscrawl.seam.middlewares.politeness.PolitenessMiddleware") in components(
        settings, "DOWNLOADER_MIDDLEWARES")
    # the extension every focuscrawl component takes its shared parts from
    services = load_object("focuscrawl.seam.services.FocusServices")
    assert services in components(settings, "EXTENSIONS")
    assert PLAYWRIGHT_HANDLER not in settings.getdict("DOWNLOAD_HANDLERS").values()  # no browser
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    assert handlers["http"] == handlers["https"] == "focuscrawl.seam.http.HTTPDownloadHandler"
    assert settings.getdict("FEED_EXPORTERS")["jsonlines"].endswith("SafeJsonLinesExporter")


def test_a_projects_own_handler_and_exporter_are_kept() -> None:
    settings = Settings({"DOWNLOAD_HANDLERS": {"https": "theirs.Handler", "s3": "theirs.S3"},
                         "FEED_EXPORTERS": {"jsonlines": "theirs.Exporter"}}, priority="project")
    FocusCrawl().update_settings(settings)
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    assert handlers["https"] == "theirs.Handler" and handlers["s3"] == "theirs.S3"
    assert handlers["http"].endswith("HTTPDownloadHandler") and handlers["file"] is None
    exporters = settings.getdict("FEED_EXPORTERS")
    assert exporters["jsonlines"] == "theirs.Exporter"
    assert exporters["jl"].endswith("SafeJsonLinesExporter")


def test_the_projects_own_values_win() -> None:
    politeness = "focuscrawl.seam.middlewares.politeness.PolitenessMiddleware"
    settings = Settings({
        "FOCUS_DELAY": 2.5, "DOWNLOAD_DELAY": 1,
        "DOWNLOADER_MIDDLEWARES": {politeness: None},
    }, priority="project")
    FocusCrawl().update_settings(settings)
    assert settings.getfloat("FOCUS_DELAY") == 2.5
    assert settings.getfloat("DOWNLOAD_DELAY") == 1
    assert settings.getdict("DOWNLOADER_MIDDLEWARES")[politeness] is None  # switched off stays off


def test_render_domains_switch_the_browser_on_through_the_addon() -> None:
    settings = Settings({"FOCUS_RENDER_DOMAINS": "app.example.org"}, priority="project")
    FocusCrawl().update_settings(settings)
    assert settings.getdict("DOWNLOAD_HANDLERS")["https"] == PLAYWRIGHT_HANDLER
    assert "focuscrawl.seam.render.RenderMiddleware" in settings.getdict("DOWNLOADER_MIDDLEWARES")


def test_never_reads_a_module_named_settings(monkeypatch) -> None:
    """In a user's project ``settings`` is their module: the add-on's values come from
    focuscrawl.config whatever a module of that name holds."""
    theirs = ModuleType("settings")
    theirs.BOT_NAME = "someone-else"
    theirs.FOCUS_STRATEGY = "breadth-first"
    theirs.SCHEDULER = "scrapy.core.scheduler.Scheduler"
    monkeypatch.setitem(sys.modules, "settings", theirs)
    defaults = focus_defaults()
    assert defaults["FOCUS_STRATEGY"] == "learned"
    assert defaults["SCHEDULER"].endswith("FocusScheduler")
    assert "BOT_NAME" not in defaults
    settings = Settings()
    FocusCrawl().update_settings(settings)
    assert settings["FOCUS_STRATEGY"] == "learned" and settings["BOT_NAME"] != "someone-else"


# -- a throwaway project, crawled for real ------------------------------------------------------
def html(title: str, links: list[str]) -> Page:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return Page(f"<html><head><title>{title}</title></head><body>{anchors}</body></html>")


SITE = {
    "a.test": {"/": html("a home", ["/1.html", "/2.html", "/3.html", "http://b.test/"]),
               "/1.html": html("a1", ["/"]), "/2.html": html("a2", []),
               "/3.html": html("a3", ["/4.html"]), "/4.html": html("a4", [])},
    "b.test": {"/": html("b home", ["/1.html", "/2.html"]),
               "/1.html": html("b1", []), "/2.html": html("b2", [])},
}
ALL_PAGES = sum(len(pages) for pages in SITE.values())

SETTINGS_PY = """
BOT_NAME = "myproject"
SPIDER_MODULES = ["myproject.spiders"]
ROBOTSTXT_OBEY = False
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"

ADDONS = {"focuscrawl.addon.FocusCrawl": 0}
"""

SPIDER_PY = '''
import scrapy


class FollowSpider(scrapy.Spider):
    """A spider of the project's own: follows every link, knows nothing of focuscrawl."""

    name = "follow"
    start_urls = ["http://a.test/"]

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get(),
               "order": response.meta.get("focus_order")}
        yield from response.follow_all(css="a")
'''


@pytest.fixture(scope="module")
def site():
    with ServerProcess(pages=SITE) as srv:
        yield srv


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return write_project(tmp_path_factory.mktemp("myproject"), "myproject", SETTINGS_PY,
                         {"follow": SPIDER_PY})


def log_lines(rows: list[dict]) -> str:
    """The server's log of a crawl, for a failure message: an overlap is diagnosed from it."""
    return "\n".join(f"{r['time_epoch']:.4f} {r['host']} {r['path']} {r['status']} "
                     f"in flight {r['inflight_host']} {r['duration_ms']} ms" for r in rows)


def run(project: Path, site: ServerProcess, name: str, *settings: str) -> tuple[list[dict], str]:
    out, log = project / f"{name}.jsonl", project / f"{name}.log"
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env.update(site.proxy_env())
    cmd = [sys.executable, "-m", "scrapy", "crawl", "follow", "-O", str(out),
           "-s", f"LOG_FILE={log}"]
    for setting in settings:
        cmd += ["-s", setting]
    proc = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    text = log.read_text("utf-8")
    assert proc.returncode == 0 and "Spider closed (finished)" in text, proc.stderr + text
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()], text


def stat(log: str, name: str) -> float | None:
    found = re.search(rf"'{re.escape(name)}': ([0-9.]+)", log)
    return float(found.group(1)) if found else None


def test_one_line_switches_focuscrawl_on_in_another_project(project, site) -> None:
    start = site.read_log()[-1]["time_epoch"] if site.read_log() else 0.0
    items, log = run(project, site, "with-addon", f"FOCUS_DELAY={DELAY}", "FOCUS_MAX_PAGES=6")
    assert "focuscrawl.seam.addon.FocusCrawl" in log  # Scrapy's "Enabled addons" line
    assert "Focus frontier: best-first, MAX_PAGES=6" in log
    # FocusScheduler handed every page out and stopped at exactly FOCUS_MAX_PAGES
    assert len(items) == 6 and stat(log, "focus/pages_fetched") == 6
    assert stat(log, "focus/requests_handed_out") == 6
    assert sorted(i["order"] for i in items) == [1, 2, 3, 4, 5, 6]
    assert stat(log, "focus/politeness/started") >= 6  # robots.txt may be held there too
    # politeness: one request at a time per host (the server's log) and never two starts to a
    # host closer than FOCUS_DELAY (the crawler's own clock: arrivals at the server jitter on a
    # loaded machine)
    rows = [r for r in site.read_log() if r["time_epoch"] > start]
    for host in {r["host"] for r in rows}:
        assert max(r["inflight_host"] for r in rows if r["host"] == host) == 1, log_lines(rows)
    assert stat(log, "focus/politeness/min_start_gap") >= DELAY - 0.001


def test_without_the_addon_scrapys_scheduler_crawls_everything(project, site) -> None:
    items, log = run(project, site, "without-addon", "ADDONS={}", "FOCUS_MAX_PAGES=6")
    # FOCUS_MAX_PAGES means nothing to Scrapy's scheduler: every page is crawled
    assert len({i["url"] for i in items}) == ALL_PAGES
    assert all(i["order"] is None for i in items)
    assert "focus/" not in log


def test_the_scheduler_alone_crawls_in_its_order_politely(project, site) -> None:
    """Scrapy's scheduler crawl test shape: another project, only SCHEDULER set.  Without the
    politeness middleware and the FocusServices extension the scheduler keeps politeness
    itself, from Scrapy's signals (it used to refuse to start: this test asserted that)."""
    start = site.read_log()[-1]["time_epoch"] if site.read_log() else 0.0
    items, log = run(project, site, "scheduler-alone", "ADDONS={}",
                     "SCHEDULER=focuscrawl.seam.scheduler.FocusScheduler",
                     f"FOCUS_DELAY={DELAY}", "FOCUS_MAX_PAGES=6")
    assert len(items) == 6 and stat(log, "focus/pages_fetched") == 6
    assert " ERROR: " not in log
    rows = [r for r in site.read_log() if r["time_epoch"] > start]
    for host in {r["host"] for r in rows}:
        assert max(r["inflight_host"] for r in rows if r["host"] == host) == 1, log_lines(rows)
    assert stat(log, "focus/politeness/min_start_gap") >= DELAY - 0.001


def test_with_only_the_addon_the_crawl_ends_with_every_page(project, site) -> None:
    items, log = run(project, site, "addon-all", f"FOCUS_DELAY={DELAY}")
    assert sorted(i["url"] for i in items) == sorted(
        f"http://{host}{path}" for host, pages in SITE.items() for path in pages)

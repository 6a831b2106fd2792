"""focuscrawl in another Scrapy project, as a new user tries it: only ``SCHEDULER``, only
``SCHEDULER_PRIORITY_QUEUE``, or only the add-on, and ``scrapy crawl`` in a subprocess against a
loopback server.  The spider knows nothing of focuscrawl; Scrapy's own ``crawl`` command runs
(no ``COMMANDS_MODULE``), so its exit status is what cron, Scrapyd and shell scripts see."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from focuscrawl.demo.webserver import Page, ServerProcess
from tests.support.project import write_project

pytestmark = pytest.mark.third_party  # in the Scrapy matrix (noxfile.py)

DELAY = 0.25
PATHS = ["/a.html", "/b.html", "/c.html"]

SETTINGS_PY = """
BOT_NAME = "theirs"
SPIDER_MODULES = ["theirs.spiders"]
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
"""

SPIDER_PY = '''
import os

import scrapy


class ThreeSpider(scrapy.Spider):
    """Three start URLs on a loopback server; knows nothing of focuscrawl."""

    name = "three"
    start_urls = [os.environ["THREE_BASE"] + p for p in ("/a.html", "/b.html", "/c.html")]

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
'''


def page(title: str) -> Page:
    return Page(f"<html><head><title>{title}</title></head><body>{title}</body></html>")


@pytest.fixture(scope="module")
def site():
    with ServerProcess(pages={"127.0.0.1": {p: page(p) for p in PATHS}}) as srv:
        yield srv


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return write_project(tmp_path_factory.mktemp("theirs"), "theirs", SETTINGS_PY,
                         {"three": SPIDER_PY})


def crawl(project: Path, site: ServerProcess, name: str, *settings: str
          ) -> tuple[subprocess.CompletedProcess[str], list[dict], str]:
    out, log = project / f"{name}.jsonl", project / f"{name}.log"
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env["THREE_BASE"] = site.base_url
    cmd = [sys.executable, "-m", "scrapy", "crawl", "three", "-O", str(out),
           "-s", f"LOG_FILE={log}"]
    for setting in settings:
        cmd += ["-s", setting]
    proc = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    items = ([json.loads(line) for line in out.read_text("utf-8").splitlines()]
             if out.exists() else [])
    return proc, items, log.read_text("utf-8")


def stat(log: str, name: str) -> float | None:
    found = re.search(rf"'{re.escape(name)}': ([0-9.]+)", log)
    return float(found.group(1)) if found else None


def fetched(site: ServerProcess, since: int) -> list[dict]:
    return [r for r in site.read_log()[since:] if r["path"] in PATHS]


def test_only_the_scheduler_crawls_in_focuscrawls_order_politely(project, site) -> None:
    start = len(site.read_log())
    # Scrapy's own per-domain limits off: the politeness seen is the scheduler's
    proc, items, log = crawl(project, site, "scheduler", "SCHEDULER=focuscrawl.scheduler."
                             "FocusScheduler", f"FOCUS_DELAY={DELAY}", "DOWNLOAD_DELAY=0",
                             "CONCURRENT_REQUESTS_PER_DOMAIN=8")
    assert proc.returncode == 0, proc.stderr + log
    assert sorted(i["url"] for i in items) == [site.base_url + p for p in PATHS]
    assert "Focus frontier: best-first" in log and "Spider closed (finished)" in log
    assert stat(log, "focus/requests_handed_out") == 3 and stat(log, "focus/pages_fetched") == 3
    rows = fetched(site, start)
    assert len(rows) == 3 and max(r["inflight_host"] for r in rows) == 1
    assert stat(log, "focus/politeness/started") == 3
    assert stat(log, "focus/politeness/min_start_gap") >= DELAY - 0.001


def test_only_the_priority_queue_crawls_every_page(project, site) -> None:
    proc, items, log = crawl(project, site, "pqueue", "SCHEDULER_PRIORITY_QUEUE="
                             "focuscrawl.pqueues.FocusPriorityQueue")
    assert proc.returncode == 0, proc.stderr + log
    assert sorted(i["url"] for i in items) == [site.base_url + p for p in PATHS]
    assert " ERROR: " not in log


def test_only_the_addon_fetches_the_users_loopback_start_urls(project, site) -> None:
    """The private-address guard is for links found on pages: the spider's own start requests
    pass, say nothing and count nothing."""
    proc, items, log = crawl(project, site, "addon", 'ADDONS={"focuscrawl.addon.FocusCrawl": 0}',
                             f"FOCUS_DELAY={DELAY}")
    assert proc.returncode == 0, proc.stderr + log
    assert sorted(i["url"] for i in items) == [site.base_url + p for p in PATHS]
    assert "focus/safety/blocked" not in log and "Refused" not in log
    assert stat(log, "focus/pages_fetched") == 3


@pytest.mark.parametrize("switch", ["SCHEDULER=focuscrawl.scheduler.FocusScheduler",
                                    "SCHEDULER_PRIORITY_QUEUE=focuscrawl.pqueues."
                                    "FocusPriorityQueue",
                                    'ADDONS={"focuscrawl.addon.FocusCrawl": 0}'])
def test_a_bad_setting_exits_non_zero_with_one_line(project, site, switch) -> None:
    start = len(site.read_log())
    name = "bad-" + re.sub(r"\W", "", switch)[:20]
    proc, items, log = crawl(project, site, name, switch, "FOCUS_STRATEGY=no-such-order",
                             "LOG_LEVEL=ERROR")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr + log
    lines = [ln for ln in log.splitlines() if ln.strip()]
    assert len(lines) == 1 and "unknown strategy 'no-such-order'" in lines[0], log
    assert items == [] and fetched(site, start) == []


def test_a_missing_part_names_itself_and_exits_non_zero(project, site) -> None:
    proc, items, log = crawl(project, site, "jobdir", "SCHEDULER=focuscrawl.scheduler."
                             "FocusScheduler", f"JOBDIR={project / 'job'}")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr + log
    errors = [ln for ln in log.splitlines() if " ERROR: " in ln]
    assert len(errors) == 1 and "PageCompletionMiddleware in SPIDER_MIDDLEWARES" in errors[0]
    assert "Closing spider (missing_component)" in log and items == []

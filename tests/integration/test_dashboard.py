"""The live dashboard: a real crawl of the demo web watched in a real browser (Playwright with
the system Chromium), its ``/status.json`` and ``/metrics`` against the crawl's final stats,
and its safety (loopback by default, a token off it, read only).

``FOCUS_SCREENSHOT_DIR=docs/img`` makes the browser test save ``dashboard.png`` there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from prometheus_client.parser import text_string_to_metric_families
from scrapy.settings import Settings

from focuscrawl.demo import SEEDS, ensure_site
from focuscrawl.demo.webserver import ServerProcess
from focuscrawl.seam.render import CHROMIUM_ARGS, chromium_path
from focuscrawl.seam.watch.dashboard import parse_address
from focuscrawl.seam.watch.dashboard.tracker import Series, Tracker
from focuscrawl.seam.watch.dashboard.web import loopback, page
from tests.support.redis_server import redis_server_fixture  # noqa: F401 - the redis_server fixture

ROOT = Path(__file__).resolve().parents[2]
KEYWORDS = "regular expression pattern match"
WAIT = 180.0  # seconds any one expected event may take on a loaded machine (never slept)
T = TypeVar("T")
STATS_BLOCK = re.compile(r"Dumping Scrapy stats:\n(\{.*?\})\n\d{4}-\d\d-\d\d ", re.S)


class Crawl:
    """``scrapy crawl topic`` of the demo web in a subprocess, its log read as it comes."""

    def __init__(self, proxy: str, tmp_path: Path, *settings: str, pages: int = 40,
                 env: dict[str, str] | None = None) -> None:
        env = {**{k: v for k, v in os.environ.items()
                  if k.lower() not in ("http_proxy", "https_proxy", "no_proxy")}, **(env or {})}
        env["http_proxy"] = proxy
        cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"keywords={KEYWORDS}",
               "-a", f"seeds={SEEDS[0]}", "-a", f"max_pages={pages}", "-s", "LOG_LEVEL=INFO",
               "-O", str(tmp_path / f"items-{id(self)}.jsonl")]
        for setting in settings:
            cmd += ["-s", setting]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.log = ""
        self._changed = threading.Condition()
        self._ended = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._changed:
                self.log += line
                self._changed.notify_all()
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def wait_for(self, pattern: re.Pattern[str] | str) -> re.Match[str]:
        """The first match of ``pattern`` in the log, once it is there."""
        with self._changed:
            found = self._changed.wait_for(
                lambda: re.search(pattern, self.log) or self._ended, timeout=WAIT)
            match = re.search(pattern, self.log)
        assert match, f"{pattern!r} not in the log:\n{self.log[-4000:]}"
        assert found
        return match

    def address(self) -> str:
        return self.wait_for(r"Dashboard: (http://\S+/)\n").group(1)

    def final_stats(self) -> dict[str, float]:
        """The numbers of Scrapy's stats dump at the end of the crawl."""
        block = self.wait_for(STATS_BLOCK).group(1)
        return {k: float(v) for k, v in re.findall(r"'([^']+)': (-?\d+(?:\.\d+)?)[,}]", block)}

    def close(self) -> int:
        if self.proc.poll() is None:
            self.proc.kill()  # lingering on purpose (FOCUS_DASHBOARD_LINGER)
        return self.proc.wait(timeout=60)


def get(url: str, headers: dict[str, str] | None = None, method: str = "GET"
        ) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


def samples(metrics_text: str) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(metrics_text)
            for s in family.samples}


@pytest.fixture(scope="module")
def demo_web():
    with ServerProcess(root=ensure_site()) as srv:
        yield srv


# -- the parts, without a crawl ---------------------------------------------------------------
def test_address_and_loopback() -> None:
    assert parse_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_address("[::1]:8050") == ("::1", 8050)
    assert parse_address("8050") == ("127.0.0.1", 8050)
    for bad in ("127.0.0.1", "host:port", "1.2.3.4:70000"):
        with pytest.raises(ValueError):
            parse_address(bad)
    assert all(map(loopback, ("127.0.0.1", "127.0.0.2", "::1", "localhost")))
    assert not any(map(loopback, ("0.0.0.0", "::", "192.168.1.5", "example.test")))


def test_series_stays_bounded_and_evenly_spaced() -> None:
    series = Series(limit=100)
    for i in range(1, 100_001):
        series.add((i,))
    xs = [p[0] for p in series.points]
    assert len(xs) < 100
    gaps = {b - a for a, b in zip(xs, xs[1:], strict=False)}
    assert gaps == {series.step} and xs[0] == series.step


def test_tracker_keeps_the_best_pages_and_counts_per_server() -> None:
    clock = iter(range(10_000)).__next__
    t = Tracker(0.1, best=3, clock=lambda: float(clock()), wall=lambda: 1.0)
    for i, score in enumerate([0.05, 0.5, 0.2, 0.9, 0.01, 0.3]):
        t.page("a.test" if i % 2 else "b.test", f"http://x.test/{i}", score, f"page {i}")
    assert [p["score"] for p in t.best_pages()] == [0.9, 0.5, 0.3]
    assert (t.pages, t.relevant) == (6, 4)
    assert t.servers["a.test"].pages == 3 and t.servers["a.test"].relevant == 3
    assert t.harvest.points[-1] == (6, 4)


def test_insight_tells_the_queue_and_what_the_learned_order_learnt() -> None:
    from focuscrawl.core.orders import make_frontier
    from tests.support.learned import hidden_web, virtual_crawl

    web = hidden_web()
    frontier = make_frontier("learned", keywords="glacier", learn_every=5)
    order = virtual_crawl(frontier, web, ["http://portal.test/"], limit=120)
    seen = frontier.insight()
    assert (seen["strategy"], seen["memory"], seen["disk"]) == ("learned", len(frontier), 0)
    assert sum(seen["priorities"]["counts"]) == len(frontier)
    learnt = seen["learned"]
    # the anchor words that lead to the glacier pages ("moraine field notes") are learnt
    assert any("a:moraine" in w["word"] for w in learnt["positive"]), learnt["positive"]
    assert all(w["weight"] > 0 for w in learnt["positive"])
    assert all(w["weight"] < 0 for w in learnt["negative"])
    assert learnt["profile"][0]["term"] == "glacier"
    picks = [h["picks"] for h in learnt["bandit"]["hosts"]]  # the 12 most picked hosts
    assert picks == sorted(picks, reverse=True) and 0 < sum(picks) <= learnt["bandit"]["picks"]
    assert 0 <= learnt["bandit"]["backlink_picks"] <= learnt["bandit"]["picks"]
    assert len(order) == 120 and frontier.insight() == seen  # read only
    best = make_frontier("best-first")
    virtual_crawl(best, web, ["http://portal.test/"], limit=50)
    assert "learned" not in best.insight() and sum(
        best.insight()["priorities"]["counts"]) == len(best)


def test_the_page_needs_no_network() -> None:
    html = page().decode()
    assert not re.search(r"<script[^>]+src|<link|@import|url\(|<img", html, re.I)
    assert re.findall(r"https?://[^\s\"')]+", html) == ["http://www.w3.org/2000/svg"]


def test_off_by_default_and_on_in_the_project_and_the_addon() -> None:
    from focuscrawl.seam.addon import focus_defaults
    from focuscrawl.seam.watch.dashboard import Dashboard
    from tests.support.project import crawl_settings

    s = crawl_settings()  # the project's settings: the add-on
    assert s.get("FOCUS_DASHBOARD") == ""
    assert Dashboard in s.getdict("EXTENSIONS")
    assert "focuscrawl.seam.watch.dashboard.Dashboard" in focus_defaults()["EXTENSIONS"]


def watch(url: str) -> int:
    """Open the dashboard in Chromium and watch the crawl to its end: the relevant count and
    the harvest chart appear, the count grows, the state turns to finished.  The count first
    seen; a screenshot at the end with FOCUS_SCREENSHOT_DIR."""
    from playwright.sync_api import expect, sync_playwright

    # polled through locators: the page's Content-Security-Policy forbids eval(), which
    # Playwright's wait_for_function() needs
    wait = WAIT * 1000
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(Settings()),
                                     args=[*CHROMIUM_ARGS, "--no-sandbox"])
        view = browser.new_page(viewport={"width": 1440, "height": 1000})
        view.goto(url)
        relevant = view.locator("#relevant")
        expect(relevant).to_have_text(re.compile(r"^[1-9][0-9,]*$"), timeout=wait)
        first = relevant.text_content() or ""
        expect(view.locator("#state")).to_have_text("running")
        # the harvest chart: a relevant-pages line of several points
        expect(view.locator("#harvest-chart polyline.series").first).to_have_attribute(
            "points", re.compile(r"\S+ \S+ \S+"), timeout=wait)
        expect(relevant).not_to_have_text(first, timeout=wait)  # it only ever grows
        expect(view.locator("#state")).to_have_text("finished", timeout=wait)
        assert view.locator("#best tr").count() > 0
        # the host bandit's picks, and how many were an off-topic host's most-linked URL
        expect(view.locator("#learned")).to_contain_text(re.compile(
            r"host bandit: [\d,]+ picks \(share [\d.]+; [\d,]+ a host's most-linked URL\)"))
        assert view.locator("#servers tr").count() > 0
        # the content's language mix (the demo web is English)
        expect(view.locator("#content")).to_contain_text(re.compile(r"languages\s*en \d"))
        shots = os.environ.get("FOCUS_SCREENSHOT_DIR")
        if shots:
            view.screenshot(path=str(Path(shots) / "dashboard.png"), full_page=True)
        browser.close()
    return int(first.replace(",", ""))


def in_a_thread(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` in a thread of its own: Playwright's sync API refuses to run in the
    asyncio loop the test runner's reactor keeps running."""
    result: list[T] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            result.append(fn(*args))
        except BaseException as e:  # noqa: BLE001 - re-raised in the test
            error.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]


# -- a real crawl -----------------------------------------------------------------------------
def test_browser_sees_the_crawl_live_and_the_endpoints_agree_with_its_stats(
        demo_web: ServerProcess, tmp_path: Path) -> None:
    crawl = Crawl(demo_web.proxy_url, tmp_path, "FOCUS_DASHBOARD=127.0.0.1:0",
                  "FOCUS_DELAY=1.0", "FOCUS_DASHBOARD_LINGER=600", pages=60)
    try:
        url = crawl.address()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url)
        assert crawl.log.count("Dashboard: http://") == 1
        first = in_a_thread(watch, url)
        stats = crawl.final_stats()
        code, body, headers = get(url + "status.json")
        assert code == 200 and headers["Content-Type"] == "application/json"
        st = json.loads(body)
        assert st["state"] == "finished" and st["finish_reason"] == "finished"
        assert st["pages"] == stats["focus/pages_fetched"] == 60
        assert st["relevant"] == stats["focus/relevant_pages"] > first
        assert st["harvest_rate"] == stats["focus/harvest_rate"]
        assert st["downloads"] == stats["downloader/response_count"]
        by_status = {k.rsplit("/", 1)[1]: v for k, v in stats.items()
                     if k.startswith("downloader/response_status_count/")}
        assert st["statuses"] == by_status
        assert st["curve"]["harvest"][-1][1] == st["relevant"]
        assert sum(s["pages"] for s in st["servers"]) == st["scored"]
        assert st["frontier"]["memory"] == st["queued"] == stats["focus/frontier"]
        assert st["learned"]["positive"] and st["best"][0]["score"] >= st["best"][-1]["score"]
        assert st["content"]["extracted"] == stats["focus/content/extracted"] > 0
        assert st["content"]["languages"]["en"] == stats["focus/content/language/en"]
        bandit = st["learned"]["bandit"]
        assert (bandit["picks"], bandit["backlink_picks"]) == (
            stats["focus/host_bandit_picks"], stats["focus/host_bandit_backlink_picks"])
        code, text, headers = get(url + "metrics")
        assert code == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
        m = samples(text)
        assert m[("focuscrawl_pages_total", ())] == stats["focus/pages_fetched"]
        assert m[("focuscrawl_relevant_pages_total", ())] == stats["focus/relevant_pages"]
        assert m[("focuscrawl_harvest_rate", ())] == stats["focus/harvest_rate"]
        assert m[("focuscrawl_queued_urls", ())] == stats["focus/frontier"]
        assert m[("focuscrawl_finished", ())] == 1.0
        for status, n in by_status.items():
            assert m[("focuscrawl_downloads_total", (("status", status),))] == n
        assert get(url + "status.json", method="POST")[0] == 405
        assert get(url + "nothing")[0] == 404
    finally:
        crawl.close()


def test_off_loopback_without_a_token_the_crawl_refuses_to_start(
        demo_web: ServerProcess, tmp_path: Path) -> None:
    crawl = Crawl(demo_web.proxy_url, tmp_path, "FOCUS_DASHBOARD=0.0.0.0:0", pages=5)
    assert crawl.proc.wait(timeout=WAIT) == 1
    crawl.wait_for("Spider closed")
    errors = [ln for ln in crawl.log.splitlines() if " ERROR: " in ln]
    assert len(errors) == 1 and "FOCUS_DASHBOARD_TOKEN" in errors[0], crawl.log[-3000:]
    assert "Dashboard: http://" not in crawl.log


def test_with_a_token_every_request_without_it_gets_401(
        demo_web: ServerProcess, tmp_path: Path) -> None:
    token = "s3cret-token"
    crawl = Crawl(demo_web.proxy_url, tmp_path, "FOCUS_DASHBOARD=0.0.0.0:0",
                  f"FOCUS_DASHBOARD_TOKEN={token}", "FOCUS_DASHBOARD_LINGER=600", pages=3)
    try:
        port = int(re.fullmatch(r"http://0\.0\.0\.0:(\d+)/", crawl.address()).group(1))
        base = f"http://127.0.0.1:{port}/"
        for path in ("", "status.json", "metrics"):
            assert get(base + path)[0] == 401
            assert get(base + path + "?token=wrong")[0] == 401
            assert get(base + path, {"Authorization": "Bearer wrong"})[0] == 401
            assert get(base + path + f"?token={token}")[0] == 200
            assert get(base + path, {"Authorization": f"Bearer {token}"})[0] == 200
        code, body, _ = get(base + f"status.json?token={token}")
        assert token not in body
        assert json.loads(body)["settings"]["FOCUS_DASHBOARD_TOKEN"] == "(set)"
    finally:
        crawl.close()


def test_a_distributed_worker_shows_the_cluster_beside_itself(
        demo_web: ServerProcess, redis_server, tmp_path: Path) -> None:
    env = {"SCRAPY_SETTINGS_MODULE": "settings.distributed"}
    common = ("FOCUS_DASHBOARD=127.0.0.1:0", "FOCUS_DASHBOARD_LINGER=600", "FOCUS_DELAY=0.2",
              f"REDIS_URL={redis_server.url}", "FOCUS_REDIS_KEY=dash:")
    workers = [Crawl(demo_web.proxy_url, tmp_path, *common, pages=40, env=env)
               for _ in range(2)]
    try:
        urls = [w.address() for w in workers]
        finals = [w.final_stats() for w in workers]  # both crawls have ended
        own = [int(f.get("focus/relevant_pages", 0)) for f in finals]
        assert int(redis_server.client().hget("dash:dashboard", "relevant")) == sum(own)
        # a worker that found no relevant page has no focus/relevant_pages stat (own: 0)
        for url, relevant in zip(urls, own, strict=True):
            st = json.loads(get(url + "status.json")[1])
            cluster = st["cluster"]
            assert st["state"] == "finished" and st["relevant"] == relevant
            assert st["pages"] <= cluster["pages"] <= 40 and cluster["max_pages"] == 40
            assert st["relevant"] <= cluster["relevant"] <= sum(own)
            assert st["queued"] == cluster["queued"] and st["frontier"] is None
            m = samples(get(url + "metrics")[1])
            assert m[("focuscrawl_cluster_pages_total", ())] == cluster["pages"]
            assert m[("focuscrawl_cluster_relevant_pages_total", ())] == cluster["relevant"]
    finally:
        for w in workers:
            w.close()

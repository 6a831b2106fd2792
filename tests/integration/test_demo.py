"""The bundled demo web: well-formed, topic clusters across hosts, served through the proxy."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from collections import Counter, deque
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import pytest

from focuscrawl.demo import DIR_VARIABLE, HOSTS, SEEDS, TOPICS, ensure_site, metadata, seeds
from focuscrawl.demo.webserver import ServerProcess

REPO = Path(__file__).resolve().parents[2]


class _Page(HTMLParser):
    """Links and visible text of a page (script and style content is not text)."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.text: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.links.append(href)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if not self._skip:
            self.text.append(data)


class Web:
    """A site tree read from disk: pages, redirects, robots, resolved links."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hosts = sorted(p.name for p in root.iterdir() if p.is_dir())
        self.pages: dict[str, _Page] = {}
        self.raw: dict[str, str] = {}
        self.redirects: dict[str, str] = {}
        self.robots: dict[str, RobotFileParser] = {}
        for host in self.hosts:
            base = root / host
            red = base / "_redirects.json"
            for path, loc in (json.loads(red.read_text()) if red.exists() else {}).items():
                loc = loc if isinstance(loc, str) else loc["location"]
                self.redirects[f"http://{host}{path}"] = urljoin(f"http://{host}{path}", loc)
            rp = RobotFileParser()
            robots = base / "robots.txt"
            rp.parse(robots.read_text().splitlines() if robots.exists() else [])
            self.robots[host] = rp
            for f in sorted(base.rglob("*.html")):
                url = f"http://{host}/{f.relative_to(base).as_posix()}"
                raw = f.read_text("utf-8")
                page = _Page()
                page.feed(raw)
                self.pages[url] = page
                self.raw[url] = raw

    def resolve(self, url: str) -> str | None:
        """The page URL a link ends on, following declared redirects; None if dead."""
        for _ in range(5):
            url = urldefrag(url)[0]
            if url.endswith("/"):
                url += "index.html"
            if url in self.pages:
                return url
            if url not in self.redirects:
                return None
            url = self.redirects[url]
        return None

    def outlinks(self, url: str) -> list[str]:
        return [urljoin(url, h) for h in self.pages[url].links]

    def text(self, url: str) -> str:
        return " ".join(" ".join(self.pages[url].text).split())


@pytest.fixture(scope="module")
def web() -> Web:
    return Web(ensure_site())


def check_well_formed(web: Web) -> dict[str, int]:
    """Every link to a demo host resolves; returns cross-host edge counts by host pair."""
    assert set(web.hosts) == set(HOSTS.values())
    dead, cross = [], Counter()
    for url in web.pages:
        src = urlsplit(url).hostname
        for link in web.outlinks(url):
            host = urlsplit(link).hostname
            assert urlsplit(link).scheme == "http", (url, link)
            assert host in web.hosts, (url, link)  # no link leaves the demo web
            target = web.resolve(link)
            if target is None:
                dead.append((url, link))
            elif urlsplit(target).hostname != src:
                cross[f"{src}->{urlsplit(target).hostname}"] += 1
    assert dead == []
    return dict(cross)


def topic_pages(web: Web, topic: dict[str, str]) -> list[str]:
    pat = re.compile(topic["pattern"], re.I)
    return [u for u in web.pages if pat.search(web.text(u))]


def test_size_and_shape(web: Web) -> None:
    size = sum(f.stat().st_size for f in web.root.rglob("*") if f.is_file())
    assert size < 5_000_000
    assert 300 <= len(web.pages) <= 1500
    per_host = Counter(urlsplit(u).hostname for u in web.pages)
    assert all(per_host[h] >= 30 for h in web.hosts), per_host
    meta = metadata()
    assert meta["pages"] == len(web.pages) and meta["hosts"] == dict(per_host)
    for url in web.pages:
        assert web.pages[url].title.strip(), url
        assert web.raw[url].startswith("<!DOCTYPE html>")


def test_every_internal_link_resolves_and_hosts_interlink(web: Web) -> None:
    cross = check_well_formed(web)
    assert sum(cross.values()) >= 500
    hosts_out = {pair.split("->")[0] for pair in cross}
    hosts_in = {pair.split("->")[1] for pair in cross}
    assert hosts_out == hosts_in == set(web.hosts)
    # the content links, not only the navigation bar: lessons into docs, hubs into blog
    assert cross["tutorial.demo.test->docs.demo.test"] > 100
    assert cross["wiki.demo.test->blog.demo.test"] > 50


def test_redirects_are_declared_and_used(web: Web) -> None:
    assert len(web.redirects) >= 5
    used = {link for u in web.pages for link in map(lambda x: urldefrag(x)[0], web.outlinks(u))}
    for src, dst in web.redirects.items():
        assert src not in web.pages and web.resolve(dst), (src, dst)
        assert src in used, f"redirect {src} is never linked"
    assert any(urlsplit(s).hostname != urlsplit(d).hostname for s, d in web.redirects.items())


def test_everything_is_reachable_from_the_seeds(web: Web) -> None:
    seen = {web.resolve(s) for s in SEEDS}
    queue = deque(seen)
    while queue:
        url = queue.popleft()
        for link in web.outlinks(url):
            t = web.resolve(link)
            if t and t not in seen:
                seen.add(t)
                queue.append(t)
    assert seen == set(web.pages)


def test_robots_hides_a_directory(web: Web) -> None:
    hidden = [u for u in web.pages
              if not web.robots[urlsplit(u).hostname].can_fetch("focuscrawl", u)]
    assert len(hidden) >= 20
    assert {urlsplit(u).hostname for u in hidden} == {HOSTS["wiki"]}
    assert all(urlsplit(u).path.startswith("/edit/") for u in hidden)
    # the hidden pages are linked from allowed pages, so a crawler meets them
    allowed = [u for u in web.pages if u not in hidden]
    linked = {web.resolve(link) for u in allowed for link in web.outlinks(u)}
    assert set(hidden) <= linked


@pytest.mark.parametrize("topic", TOPICS, ids=[t["id"] for t in TOPICS])
def test_topic_clusters_span_hosts(web: Web, topic: dict[str, str]) -> None:
    pages = topic_pages(web, topic)
    hosts = Counter(urlsplit(u).hostname for u in pages)
    assert len(pages) >= 10, hosts
    assert sum(1 for n in hosts.values() if n >= 3) >= 3, hosts
    assert len(pages) <= len(web.pages) // 3, "a topic should be a minority of the web"
    assert metadata()["topics"][topic["id"]]["pages_mentioning"] == len(pages)


def test_script_and_style_junk_is_not_text(web: Web) -> None:
    """Pages whose only mention of a topic is inside <script>: a trap for text extraction."""
    junk = [u for u in web.pages if "<script" in web.raw[u]]
    assert len(junk) >= 50
    pat = re.compile(TOPICS[1]["pattern"], re.I)  # unicode
    fooled = [u for u in junk if pat.search(web.raw[u]) and not pat.search(web.text(u))]
    assert len(fooled) >= 20
    assert all("trackedTopics" not in web.text(u) and "{font-family" not in web.text(u)
               for u in junk)


def _files(root: Path) -> dict[str, bytes]:
    return {f.relative_to(root).as_posix(): f.read_bytes() for f in root.rglob("*") if f.is_file()}


def test_first_use_builds_the_same_site_once_when_four_processes_start_at_once(
        tmp_path: Path, web: Web) -> None:
    site = (tmp_path / "site").resolve()
    env = {**os.environ, DIR_VARIABLE: str(site)}
    code = "from focuscrawl.demo import ensure_site; print(ensure_site())"
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, outs
    assert {out.strip() for out, _ in outs} == {str(site)}
    assert sum("building the demo web" in err for _, err in outs) == 1  # the others waited
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.lock", "site"]
    # deterministic: byte for byte the site the other tests read
    assert _files(site) == _files(web.root)


def test_server_serves_the_demo(web: Web) -> None:
    with ServerProcess(root=web.root) as srv:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": srv.proxy_url}))
        for seed in seeds():
            with opener.open(seed, timeout=10) as r:
                body = r.read().decode()
            assert body == web.raw[seed]
        with opener.open(f"http://{HOSTS['docs']}/library/regex.html", timeout=10) as r:
            assert r.geturl() == f"http://{HOSTS['docs']}/library/re.html"
        with opener.open(f"http://{HOSTS['news']}/docs.html", timeout=10) as r:
            assert r.geturl() == f"http://{HOSTS['docs']}/index.html"
        st, _, body = srv.get(HOSTS["wiki"], "/robots.txt")
        assert (st, body) == (200, b"User-agent: *\nDisallow: /edit/\n")
        assert srv.get(HOSTS["docs"], "/robots.txt")[2] == b"User-agent: *\nAllow: /\n"
        assert srv.get(HOSTS["docs"], "/_redirects.json")[0] == 404
        assert srv.get(HOSTS["blog"], "/latest.html")[0] == 302
        st, _, body = srv.get(HOSTS["docs"], "/library/")
        assert (st, body.decode()) == (200, web.raw[f"http://{HOSTS['docs']}/library/index.html"])
        st, h, _ = srv.get(HOSTS["docs"], "/library")
        assert (st, h["location"]) == (301, "/library/")
        assert srv.get(HOSTS["docs"], "/library/nothing.html")[0] == 404
        # every page, over one keep-alive connection, byte for byte as on disk
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        for url, raw in web.raw.items():
            conn.request("GET", url)
            r = conn.getresponse()
            assert (r.status, r.read().decode()) == (200, raw), url
        conn.close()
        rows = srv.read_log()
    assert set(HOSTS.values()) == {r["host"] for r in rows}


def test_cli_seeds_and_serve() -> None:
    out = subprocess.run([sys.executable, "-m", "focuscrawl.demo", "seeds"], cwd=REPO,
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == SEEDS
    proc = subprocess.Popen([sys.executable, "-m", "focuscrawl.demo", "serve", "--port", "0"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:  # blocks until the server prints its banner
            lines.append(line)
            if line.startswith("Stop with"):
                break
        proxy = next(ln.split("=", 1)[1].strip() for ln in lines if "export http_proxy=" in ln)
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", proxy)
        assert any(SEEDS[0] in ln for ln in lines)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
        with opener.open(SEEDS[0], timeout=10) as r:
            assert b"Python library documentation" in r.read()
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
        for f in (proc.stdout, proc.stderr):
            if f is not None:
                f.close()


def test_off_topic_hosts_hang_off_the_topic_pages(web: Web) -> None:
    """As on the real web: a big off-topic site, linked from on-topic pages, and link hubs."""
    cook, links = HOSTS["cookbook"], HOSTS["links"]
    recipes = [u for u in web.pages if urlsplit(u).hostname == cook and "/recipes/" in u]
    assert len(recipes) >= 200
    for topic in TOPICS:
        on_topic = set(topic_pages(web, topic))
        assert not on_topic & set(recipes), topic["id"]
        # most of the topic's pages on the first five hosts link to a recipe
        pages = [u for u in on_topic if urlsplit(u).hostname not in (cook, links)]
        to_recipes = [u for u in pages if any(urlsplit(x).hostname == cook and "/recipes/" in x
                                              for x in web.outlinks(u))]
        assert len(to_recipes) >= len(pages) // 3, (topic["id"], len(to_recipes), len(pages))
    # hubs: aggregator pages of links into other hosts' pages (not the header's home pages)
    hubs = [u for u in web.pages if urlsplit(u).hostname == links and sum(
        1 for x in web.outlinks(u)
        if urlsplit(x).hostname != links and not x.endswith("/index.html")) >= 12]
    assert len(hubs) >= 25
    # the seed reaches both off-topic hosts in one step
    seed_hosts = {urlsplit(x).hostname for x in web.outlinks(SEEDS[0])}
    assert {cook, links} <= seed_hosts

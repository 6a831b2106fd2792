"""Distributed mode: a reference frontier and random webs; a site and a cluster of
`scrapy crawl` worker processes against one Redis."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from focuscrawl.core.frontier import Link
from focuscrawl.core.orders import make_frontier
from focuscrawl.demo.webserver import Page, ServerProcess
from focuscrawl.distributed.frontier import Op, RedisFrontier, add_op, crawled_op

# --------------------------------------------------------------------------- the frontier alone
HOSTS = ["a.test", "b.test", "c.test", "d.test"]


class ParkMiller:
    """The Redis frontier's batch shuffle, for the reference frontier to use the same order."""

    def __init__(self, seed: int) -> None:
        self.state = seed % 2147483646 + 1

    def shuffle(self, items: list) -> None:
        for i in range(len(items), 1, -1):
            self.state = self.state * 48271 % 2147483647
            j = self.state % i
            items[i - 1], items[j] = items[j], items[i - 1]


def random_web(seed: int, pages: int = 80) -> dict[str, Any]:
    """Pages with outlinks (some with a keyword anchor), scores and hotness."""
    rng = random.Random(seed)
    urls = [f"http://{HOSTS[i % len(HOSTS)]}/p{i}" for i in range(pages)]
    return {
        "urls": urls,
        "links": {u: [(rng.choice(urls), rng.random() < 0.1) for _ in range(rng.randint(0, 6))]
                  for u in urls},
        "score": {u: round(rng.choice([0.0, 0.0, rng.random()]), 3) for u in urls},
        "hot": {u: rng.random() < 0.15 for u in urls},
    }


class Reference:
    """focuscrawl.core.frontier's strategy, driven like the Redis one."""

    def __init__(self, strategy: str, **options: Any) -> None:
        self.f = make_frontier(strategy, **options)
        policy = getattr(self.f, "policy", None)  # Best-N-First's batches draw from its policy
        if hasattr(policy, "rng"):
            policy.rng = ParkMiller(options.get("seed", 0))

    def add(self, link: Link) -> None:
        self.f.add(link)

    def pop(self, busy: set[str]) -> tuple[Any, str] | None:
        e = self.f.pop(lambda h: h not in busy)
        return None if e is None else (e, e.url)

    def done(self, handle: Any, crawled: tuple[str, float, bool] | None) -> None:
        if crawled is None:
            self.f.requeue(handle)
        else:
            self.f.crawled(*crawled)

    def size(self) -> int:
        return len(self.f)


class InRedis:
    """The Redis frontier; a busy server is one whose slot a live ghost worker holds.

    ``batched``: as a worker writes, a page's score and outlinks kept and sent in one ADD_MANY
    call before its lease is settled or the next URL handed out (``calls`` counts them)."""

    def __init__(self, client: Any, prefix: str, strategy: str, *, batched: bool = False,
                  **options: Any) -> None:
        self.client, self.prefix = client, prefix
        self.f = RedisFrontier(client, prefix, "w1")
        self.f.configure({"strategy": strategy, "delay": 0, "concurrency": 1, **options})
        self.f.heartbeat(60)
        client.set(prefix + "w:ghost", 1, px=60_000)
        self.batched = batched
        self.ops: list[Op] = []
        self.calls: Counter[str] = Counter()
        for name, script in self.f._scripts.items():
            self.f._scripts[name] = self._counted(name, script)

    def _counted(self, name: str, script: Any) -> Callable[..., Any]:
        def call(**kwargs: Any) -> Any:
            self.calls[name] += 1
            return script(**kwargs)
        return call

    def flush(self) -> None:
        if self.ops:
            self.f.apply(self.ops)
            self.ops = []

    def add(self, link: Link) -> None:
        if self.batched:
            self.ops.append(add_op(link))
        else:
            self.f.add(link)

    def pop(self, busy: set[str]) -> tuple[Any, str] | None:
        self.flush()
        for h in busy:
            self.client.hset(f"{self.prefix}hs:{h}", "ghost-slot", "ghost|a")
        got = self.f.pop()
        for h in busy:
            self.client.hdel(f"{self.prefix}hs:{h}", "ghost-slot")
        return None if got is None else (got[0], got[1].url)

    def done(self, lease: int, crawled: tuple[str, float, bool] | None) -> None:
        if crawled is None:
            assert self.f.release([lease]) == 1
            return
        assert self.f.downloaded(lease, True) > 0
        if self.batched:
            self.ops.append(crawled_op(*crawled))
        else:
            self.f.crawled(*crawled)

    def settle(self, lease: int) -> None:
        self.flush()
        assert self.f.settle([lease]) == 1

    def size(self) -> int:
        return len(self.f)


def virtual_crawl(frontier: Any, web: dict[str, Any], seed: int, steps: int = 400) -> list[str]:
    """Cho's virtual crawler: pop, score, report outlinks; some servers busy, some fetches
    failing (requeued).  The random choices depend only on ``seed`` and the step."""
    rng = random.Random(seed)
    frontier.add(Link(web["urls"][0], host=HOSTS[0], keyword=True))
    frontier.add(Link(web["urls"][1], host=HOSTS[1]))
    order: list[str] = []
    for _ in range(steps):
        busy = {h for h in HOSTS if rng.random() < 0.3}
        got = frontier.pop(busy)
        if got is None and busy:
            got = frontier.pop(set())
        if got is None:
            break
        handle, url = got
        if rng.random() < 0.08:  # the download failed before any page came: requeue
            frontier.done(handle, None)
            order.append("requeued " + url)
            continue
        order.append(url)
        score, hot = web["score"][url], web["hot"][url]
        frontier.done(handle, (url, score, hot))
        for dst, kw in web["links"][url]:
            frontier.add(Link(dst, host=dst.split("/")[2], anchor="x", parent=url,
                              parent_score=score, parent_hot=hot, keyword=kw))
        if isinstance(frontier, InRedis):
            frontier.settle(handle)
    order.append(f"left {frontier.size()}")
    return order


CASES: list[tuple[str, dict[str, Any]]] = [
    ("breadth-first", {}),
    ("breadth-first", {"max_buffer": 12}),
    ("cho", {}),
    ("cho", {"reorder": "backlinks"}),
    ("cho", {"reorder": "score"}),
    ("cho-distance", {}),
    ("cho-distance", {"reorder": "backlinks", "distance_limit": 2}),
    ("best-first", {}),
    ("best-first", {"max_buffer": 15}),
    ("best-n-first", {"n": 5, "seed": 3}),
    ("best-n-first", {"n": 4, "max_buffer": 20, "seed": 9}),
]


# --------------------------------------------------------------------------- cluster mechanics
def frontier_for(client: Any, prefix: str, worker: str, **options: Any) -> RedisFrontier:
    f = RedisFrontier(client, prefix, worker)
    f.configure({"strategy": "breadth-first", "delay": 0, "concurrency": 1, **options})
    f.heartbeat(60)
    return f


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)  # polling an external condition (a Redis key expiring)


# --------------------------------------------------------------------------- worker processes
ADDON = "focuscrawl.distributed.addon.Distributed"
ROOT = Path(__file__).resolve().parents[2]
SITE_HOSTS = [f"h{i}.test" for i in range(6)]
DELAY = 0.15  # FOCUS_DELAY of the crawls
ROBOTS = "User-agent: *\nDisallow: /private/\n"


def site(pages_per_host: int, seed_delay_ms: float = 0.0) -> dict[str, dict[str, Page]]:
    """Per host a binary tree of pages, each also linking to the next host's page of the same
    number; on h1 a robots.txt-disallowed link, on h2 a redirect and a 404, on h3 a PDF.
    ``seed_delay_ms``: the seed page is that slow, so workers started together are all up
    before its outlinks are (however slowly a loaded machine starts them)."""
    pages: dict[str, dict[str, Page]] = {h: {} for h in SITE_HOSTS}
    for n, h in enumerate(SITE_HOSTS):
        for i in range(pages_per_host):
            links = [f"/p{j}.html" for j in (2 * i + 1, 2 * i + 2) if j < pages_per_host]
            links.append(f"http://{SITE_HOSTS[(n + 1) % len(SITE_HOSTS)]}/p{i}.html")
            if i == 1:
                links += {"h1.test": ["/private/secret.html"], "h2.test": ["/old.html", "/gone"],
                          "h3.test": ["/paper.pdf"]}.get(h, [])
            anchors = " ".join(f'<a href="{u}">regex link {k}</a>' for k, u in enumerate(links))
            pages[h][f"/p{i}.html"] = Page(
                f"<html><head><title>{h} page {i}</title></head><body>"
                f"<p>{'regex ' * (i % 4)} notes on page {i}</p>{anchors}</body></html>",
                delay_ms=seed_delay_ms if (n, i) == (0, 0) else 0.0)
    pages["h1.test"]["/private/secret.html"] = Page("<html><body>secret</body></html>")
    pages["h2.test"]["/old.html"] = Page.redirect("/moved.html")
    pages["h2.test"]["/moved.html"] = Page("<html><title>moved</title><body>here</body></html>")
    pages["h3.test"]["/paper.pdf"] = Page(b"%PDF-1.4", content_type="application/pdf")
    return pages


def reachable(pages_per_host: int) -> set[str]:
    """What a complete crawl requests (robots.txt aside): everything but the disallowed page."""
    urls = {f"{h}/p{i}.html" for h in SITE_HOSTS for i in range(pages_per_host)}
    return urls | {"h2.test/old.html", "h2.test/moved.html", "h2.test/gone", "h3.test/paper.pdf"}


class Cluster:
    """``scrapy crawl topic`` worker processes against one web server and one Redis."""

    def __init__(self, server: ServerProcess, redis_url: str, tmp: Path, key: str) -> None:
        self.server, self.redis_url, self.tmp, self.key = server, redis_url, tmp, key
        self.procs: list[subprocess.Popen[bytes]] = []
        self.items: list[Path] = []
        self.logs: list[Path] = []

    def start(self, n: int, *args: str, distributed: bool = True) -> list[subprocess.Popen]:
        env = {**os.environ, **self.server.proxy_env()}
        env.pop("SCRAPY_SETTINGS_MODULE", None)
        if distributed:
            env["SCRAPY_SETTINGS_MODULE"] = "settings.distributed"
        started = []
        for _ in range(n):
            i = len(self.procs)
            items, log = self.tmp / f"items{i}.jsonl", self.tmp / f"worker{i}.log"
            cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", "keywords=regex",
                   "-a", "seeds=http://h0.test/p0.html", "-O", str(items),
                   "-s", f"LOG_FILE={log}", "-s", "LOG_LEVEL=INFO", "-s", f"FOCUS_DELAY={DELAY}",
                   "-s", f"REDIS_URL={self.redis_url}", "-s", f"FOCUS_REDIS_KEY={self.key}",
                   "-s", "FOCUS_REDIS_START_LOG=1000",
                   # pages of a few ms: a busy machine must not make them time out and retry
                   "-s", "DOWNLOAD_TIMEOUT=60", *args]
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.procs.append(proc)
            self.items.append(items)
            self.logs.append(log)
            started.append(proc)
        return started

    def wait(self, procs: list[subprocess.Popen] | None = None, timeout: float = 90) -> list[int]:
        codes = []
        for proc in procs if procs is not None else self.procs:
            try:
                codes.append(proc.wait(timeout))
            except subprocess.TimeoutExpired:
                proc.kill()
                raise AssertionError(
                    f"worker {proc.pid} did not finish:\n{self.tails()}") from None
        return codes

    def tails(self) -> str:
        return "\n".join(f"--- {p.name}\n" + "\n".join(
            p.read_text(errors="replace").splitlines()[-25:]) for p in self.logs if p.exists())

    def log_text(self, i: int) -> str:
        return self.logs[i].read_text(errors="replace")

    def exported(self, i: int) -> list[dict[str, Any]]:
        path = self.items[i]
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line]

    def kill_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def kill_one_holding_leases(workers: list[subprocess.Popen], worker_ids: Callable[[], list[str]],
                            holds: Callable[[str], bool], *,
                            ready: Callable[[], bool] = lambda: True,
                            timeout: float = 120) -> subprocess.Popen:
    """SIGKILL a worker that holds leases, once ``ready()``: frozen (SIGSTOP) first, so its
    leases cannot settle between the check and the kill; one that holds none goes on."""
    by_pid = {p.pid: p for p in workers}
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, "no worker held a lease mid-crawl"
        if ready():
            for wid in worker_ids():
                pid = int(wid.rsplit("-", 2)[1])
                proc = by_pid.get(pid)
                if proc is None or proc.poll() is not None or not holds(wid):
                    continue
                proc.send_signal(signal.SIGSTOP)
                if holds(wid):
                    proc.send_signal(signal.SIGKILL)
                    return proc
                proc.send_signal(signal.SIGCONT)
        time.sleep(0.01)  # watching the crawl's progress in Redis


def requested(rows: list[dict[str, Any]]) -> list[str]:
    return [r["host"] + r["path"] for r in rows if r["path"] != "/robots.txt"]


def stat(log: str, name: str) -> int:
    """A counter from a worker's final stats dump (0 if absent)."""
    found = re.search(rf"'{re.escape(name)}': (\d+)", log)
    return int(found.group(1)) if found else 0


#: the files of :func:`site` that are not HTML: fetched, but no page
NOT_HTML = {"h3.test/paper.pdf"}


def fetched_pages(rows: list[dict[str, Any]]) -> set[str]:
    """The URLs the server answered with a page (2xx HTML): what MAX_PAGES counts."""
    return {r["host"] + r["path"] for r in rows
            if r["path"] != "/robots.txt" and 200 <= r["status"] < 300} - NOT_HTML

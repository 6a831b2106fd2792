"""A small deterministic multi-host site and a `scrapy crawl` runner for the resume tests."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from focuscrawl.demo.webserver import Page

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ("a.test", "b.test", "c.test")
TOPIC = "garden compost"


def site(pages_per_host: int = 50, seed: int = 8) -> dict[str, dict[str, Page]]:
    """``len(HOSTS) * pages_per_host`` pages, all reachable from http://a.test/p0.html.

    Every page links to the next one (a chain through all hosts, so the whole site is found
    whatever the order) and to four pseudo-random others; some pages are on the topic.
    """
    rng = random.Random(seed)
    urls = [f"http://{h}/p{i}.html" for h in HOSTS for i in range(pages_per_host)]
    pages: dict[str, dict[str, Page]] = {h: {} for h in HOSTS}
    for k, url in enumerate(urls):
        links = [urls[(k + 1) % len(urls)]] + rng.sample(urls, 4)
        topical = rng.random() < 0.4
        words = ("garden compost soil " * 5) if topical else "weather report rain "
        anchors = "".join(f'<a href="{u}">{"garden" if i % 2 else "page"} {i}</a> '
                          for i, u in enumerate(links))
        body = (f"<html><head><title>Page {k}</title></head><body><p>{words * 3}</p>"
                f"{anchors}</body></html>")
        host, path = url[len("http://"):].split("/", 1)
        pages[host]["/" + path] = Page(body)
    return pages


def page_urls(pages: dict[str, dict[str, Page]]) -> set[str]:
    return {f"http://{h}{p}" for h, ps in pages.items() for p in ps}


def crawl_command(out: Path, jobdir: Path, max_pages: int, *, overwrite: bool = False,
                  **settings: Any) -> list[str]:
    """``scrapy crawl topic`` with JOBDIR and ``-o out`` (``-O`` with ``overwrite``)."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"keywords={TOPIC}",
           "-a", "seeds=http://a.test/p0.html", "-a", "strategy=breadth-first",
           "-a", f"max_pages={max_pages}", "-O" if overwrite else "-o", str(out),
           "-s", f"JOBDIR={jobdir}"]
    base = {"FOCUS_DELAY": 0, "LOG_LEVEL": "INFO", "TELNETCONSOLE_ENABLED": False}
    base.update(settings)
    for name, value in base.items():
        cmd += ["-s", f"{name}={value}"]
    return cmd


def start_crawl(cmd: list[str], server: Any, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.update(server.proxy_env())
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=open(log, "ab"))  # noqa: SIM115


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSON-lines file, parsed; fails on a torn or invalid line."""
    if not path.exists():
        return []
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), "torn last line"
    return [json.loads(line) for line in data.splitlines()]


def line_count(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def page_fetches(rows: list[dict[str, Any]]) -> Counter[str]:
    """URL -> times the server answered it (robots.txt left out)."""
    return Counter(f"http://{r['host']}{r['path']}" for r in rows
                   if r["path"] != "/robots.txt" and r["method"] == "GET")

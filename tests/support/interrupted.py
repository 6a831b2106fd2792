"""`scrapy crawl` with JOBDIR interrupted at random points (SIGKILL, SIGINT) and resumed to the
end, in focuscrawl's project or a third party's, writing JSON lines or Parquet."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from focuscrawl.demo.webserver import ServerProcess, read_log
from focuscrawl.seam.output.feeds import parquet_rows_path
from tests.support.jobdir_site import ROOT, TOPIC, line_count, read_lines
from tests.support.project import write_project

THIRD_PARTY_SETTINGS = """
BOT_NAME = "theirs"
SPIDER_MODULES = ["theirs.spiders"]
ADDONS = {"focuscrawl.addon.FocusCrawl": 0}
"""

THIRD_PARTY_SPIDER = '''
import os

import scrapy


class FollowSpider(scrapy.Spider):
    """The third party's own spider: follows every link, yields url and title."""

    name = "follow"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [os.environ["FOLLOW_START"]]

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
        yield from response.follow_all(css="a")
'''


def third_party_project(root: Path) -> Path:
    """A Scrapy project of someone else's: only the add-on and its own spider."""
    return write_project(root, "theirs", THIRD_PARTY_SETTINGS, {"follow": THIRD_PARTY_SPIDER})


@dataclass
class Crawl:
    """One crawl's command, in its project, and where its pages go."""

    cwd: Path
    cmd: list[str]
    out: Path
    fmt: str  # "jsonl" | "parquet" | "csv"
    env: dict[str, str] = field(default_factory=dict)

    @property
    def progress_file(self) -> Path:
        """The file whose lines count the pages written: the Parquet feed's staged rows."""
        return parquet_rows_path(self.out) if self.fmt == "parquet" else self.out

    def written(self) -> int:
        count = line_count(self.progress_file)
        if self.fmt == "parquet" and count == 0 and self.out.exists():
            count = len(parquet_rows(self.out))  # a clean stop wrote the Parquet file
        return count

    def pages(self) -> list[dict[str, Any]]:
        if self.fmt == "parquet":
            assert not self.progress_file.exists(), "staged rows left after the last run"
            return parquet_rows(self.out)
        return read_lines(self.out)


def parquet_rows(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


# a small delay per server keeps a crawl of the tiny site long enough (about a second) for each
# signal to land mid-crawl however busy the machine is
COMMON = {"FOCUS_DELAY": "0.05", "FOCUS_CONCURRENCY_PER_SERVER": "2", "CONCURRENT_REQUESTS": "8",
          "LOG_LEVEL": "INFO", "TELNETCONSOLE_ENABLED": "False"}


def third_party_crawl(project: Path, out: Path, jobdir: Path | None, fmt: str,
                      start: str) -> Crawl:
    """The third party's spider; JSON lines by ``-o``; Parquet by FEEDS (Scrapy's own crawl
    command checks ``-o`` formats before any add-on loads: docs/own-project.md)."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "follow"]
    if fmt == "parquet":
        cmd += ["-s", "FEEDS=" + json.dumps({str(out): {"format": "parquet"}})]
    else:
        cmd += ["-o", str(out)]
    settings = {**COMMON, **({"JOBDIR": str(jobdir)} if jobdir else {})}
    for name, value in settings.items():
        cmd += ["-s", f"{name}={value}"]
    return Crawl(project, cmd, out, fmt, {"FOLLOW_START": start})


def project_crawl(out: Path, jobdir: Path | None, max_pages: int, start: str) -> Crawl:
    """focuscrawl's own project and topic spider; ``-o pages.parquet`` as much as JSON lines."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"keywords={TOPIC}",
           "-a", f"seeds={start}", "-a", "strategy=breadth-first",
           "-a", f"max_pages={max_pages}", "-o", str(out)]
    settings = {**COMMON, **({"JOBDIR": str(jobdir)} if jobdir else {})}
    for name, value in settings.items():
        cmd += ["-s", f"{name}={value}"]
    return Crawl(ROOT, cmd, out, out.suffix.lstrip("."))


def start(crawl: Crawl, server: ServerProcess, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env.update(server.proxy_env())
    env.update(crawl.env)
    return subprocess.Popen(crawl.cmd, cwd=crawl.cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=open(log, "ab"))  # noqa: SIM115


def served(server: ServerProcess) -> int:
    """Pages the server has answered so far (robots.txt left out)."""
    return sum(1 for r in read_log(server.log_path)
               if r["path"] != "/robots.txt" and r["method"] == "GET")


@dataclass
class Interruption:
    signal: signal.Signals
    #: "written": once the output holds `at` pages; "served": once the server has answered as
    #: many pages in this run as the output lacked of `at` when the run started (so before the
    #: output holds them: pages in flight)
    by: str
    at: int
    written_then: int = -1  # pages in the output when the signal was sent


def plan(rng: random.Random, total: int) -> list[Interruption]:
    """SIGKILL, SIGINT (a clean stop), SIGKILL: at seeded random points of the crawl, the last
    well before its end (a clean stop lets the pages in flight finish)."""
    marks = sorted(rng.sample(range(5, total - 25), 3))
    return [Interruption(signal.SIGKILL, "written", marks[0]),
            Interruption(signal.SIGINT, "written", marks[1]),
            Interruption(signal.SIGKILL, "served", marks[2])]


def run_interrupted(crawl: Crawl, server: ServerProcess, log: Path,
                    interruptions: list[Interruption]) -> None:
    """Each interruption in its own run, then one run to the end (exit 0)."""
    for stop in [*interruptions, None]:
        proc = start(crawl, server, log)
        if stop is None:
            assert proc.wait(timeout=180) == 0, log.read_text()[-3000:]
            return
        base = served(server) - crawl.written() if stop.by == "served" else 0
        deadline = time.monotonic() + 120
        while proc.poll() is None:
            now = crawl.written() if stop.by == "written" else served(server) - base
            if now >= stop.at:
                break
            assert time.monotonic() < deadline, "no progress"
            time.sleep(0.002)  # polling the crawl's progress, not a timing bet
        assert proc.poll() is None, f"the run ended before its {stop}"
        stop.written_then = crawl.written()
        proc.send_signal(stop.signal)
        code = proc.wait(timeout=120)
        assert code == (-signal.SIGKILL if stop.signal == signal.SIGKILL else 0), code

"""Throughput under politeness: focuscrawl's scheduler against Scrapy's, on the same spider.

    .venv/bin/python bench/politeness.py [--hosts 8] [--delay 0.25] [--pages 40] [--latency-ms 10]

A local multi-host server (``focuscrawl.demo.webserver``, reached as a proxy) serves H hosts of N
linked pages each, every response taking ``--latency-ms``.  With one connection per host and a
delay d between request starts, no crawler can do better than H/d requests per second: the
politeness bound.  The ``topic`` spider crawls the whole web in the same process, three times:

* **focuscrawl** -- the project's settings: FocusScheduler (per-server queues, leases) and the
  politeness middleware, FOCUS_DELAY=d, FOCUS_CONCURRENCY_PER_SERVER=1, robots.txt, filters,
  best-first order;
* **best-n-first** -- the same with Best-N-First (N=256), work-conserving: while the batch's
  URLs all wait on busy servers, the next batch is opened for the idle ones;
* **best-n-first-barrier** -- Best-N-First with Pant et al.'s barrier (FOCUS_BEST_N_BARRIER):
  the next batch only once the current one is handed out;
* **learned** -- the default learned order;
* **revisit** -- best-first as a continuous crawl (FOCUS_REVISIT) of the same web changing as
  the changing demo web changes (focuscrawl.demo.changing, on a server of its own), stopped
  after ``--revisit-seconds``: discovery, then revisits (conditional requests), one politeness;
* **scrapy** -- Scrapy's default scheduler with DOWNLOAD_DELAY=d, CONCURRENT_REQUESTS_PER_DOMAIN=1
  and its default DOWNLOAD_DELAY_JITTER=0.5 (each delay drawn in [0.5d, 1.5d]), our middlewares
  and filters off.  Its default queue, DownloaderAwarePriorityQueue, keeps one queue per
  download slot and serves the least busy slot first: per-server fairness of its own;
* **scrapy-fixed** -- the same with DOWNLOAD_DELAY_JITTER=0;
* **scrapy-global** -- scrapy-fixed with one global priority order, as a focused crawler wants
  it: ScrapyPriorityQueue, and each outlink's priority is its parent page's score (best-first
  on parent score).  Host i's pages mention the topic about i times, so the best requests come
  from a few hosts; they fill CONCURRENT_REQUESTS while waiting in those hosts' download slots
  and the crawl serialises.

From the server's access log, per crawl: requests (robots.txt included), pages/s over the crawl
(spider open to close) and over the log's span (first to last arrival), each divided by the
bound H/d, and the violations: request arrivals to a host closer than d minus 30 ms (the margin
tests/integration/test_politeness.py explains), and arrivals while another request to the same
host was in flight.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

JITTER = 0.03
MODES = ("focuscrawl", "best-n-first", "best-n-first-barrier", "learned", "revisit", "scrapy",
         "scrapy-fixed", "scrapy-global")
ORDERS = {"focuscrawl": {"FOCUS_STRATEGY": "best-first"},
          "best-n-first": {"FOCUS_STRATEGY": "best-n-first", "FOCUS_BEST_N": 256},
          "best-n-first-barrier": {"FOCUS_STRATEGY": "best-n-first", "FOCUS_BEST_N": 256,
                                   "FOCUS_BEST_N_BARRIER": True},
          "learned": {"FOCUS_STRATEGY": "learned"},
          "revisit": {"FOCUS_STRATEGY": "best-first", "FOCUS_REVISIT": True}}
#: the changing web of the revisit mode: an hour of changes a second
CHANGING = {"seed": 1, "speed": 3600.0}
TOPIC = "regex"
WORDS = "river stone cloud garden paper window music travel market engine".split()


def build_site(hosts: int, pages: int, seed: int = 7) -> dict[str, dict[str, Any]]:
    """H hosts of ``pages`` linked pages; host i's pages mention the topic about i times."""
    from focuscrawl.demo.webserver import Page

    rng = random.Random(seed)
    names = [f"h{i}.bench.test" for i in range(hosts)]
    site: dict[str, dict[str, Any]] = {}
    for i, h in enumerate(names):
        site[h] = {"/": Page(_html(rng, f"{h} home", [f"/p{k}.html" for k in range(3)], i))}
        for k in range(pages):
            links = [f"/p{j}.html" for j in range(k + 1, min(k + 4, pages))]
            links += [f"http://{rng.choice(names)}/p{rng.randrange(pages)}.html" for _ in range(2)]
            site[h][f"/p{k}.html"] = Page(_html(rng, f"{h} page {k}", links, i))
    return site


def _html(rng: random.Random, title: str, links: list[str], topicality: int) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(150))
    topical = " ".join([TOPIC] * rng.randint(topicality, topicality + 1))
    anchors = " ".join(f'<a href="{u}">{rng.choice(WORDS)} {TOPIC}</a>' for u in links)
    return (f"<html><head><title>{title}</title></head><body><p>{words} {topical}</p>"
            f"<p>{anchors}</p></body></html>")


def crawl_settings(mode: str, delay: float, seconds: float = 0.0) -> Any:
    from scrapy.settings import Settings

    from focuscrawl.config import COMPONENTS

    s = Settings()
    s.setmodule("settings", priority="project")
    common = {"LOG_LEVEL": "WARNING", "FEEDS": {}, "FOCUS_DEFAULT_FEED": "",
              "FOCUS_MAX_PAGES": 0}
    if mode in ORDERS:
        extra = {"FOCUS_DELAY": delay, "FOCUS_CONCURRENCY_PER_SERVER": 1, **ORDERS[mode]}
        if mode == "revisit":  # a continuous crawl ends when it is stopped
            extra["CLOSESPIDER_TIMEOUT"] = seconds
    else:
        # focuscrawl's middlewares off (the project's add-on keeps a component mapped to None
        # off); its extensions stay
        ours_off = dict.fromkeys(COMPONENTS["DOWNLOADER_MIDDLEWARES"])
        extra = {
            "SCHEDULER": "scrapy.core.scheduler.Scheduler",
            "DOWNLOAD_DELAY": delay,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
            "DOWNLOAD_DELAY_JITTER": 0.5 if mode == "scrapy" else 0.0,
            "DOWNLOADER_MIDDLEWARES": ours_off,
            "SPIDER_MIDDLEWARES": dict.fromkeys(COMPONENTS["SPIDER_MIDDLEWARES"]),
        }
        if mode == "scrapy-global":
            extra["SPIDER_MIDDLEWARES"][f"{__name__}.ScorePriority"] = 990
            extra["SCHEDULER_PRIORITY_QUEUE"] = "scrapy.pqueues.ScrapyPriorityQueue"
    for name, value in {**common, **extra}.items():
        s.set(name, value, priority="cmdline")
    return s


class ScorePriority(BaseSpiderMiddleware):
    """Spider middleware for scrapy-global: an outlink's priority is its parent's score."""

    def get_processed_request(self, request: Any, response: Any) -> Any:
        focus = request.meta.get("focus")
        if response is not None and focus:
            request.priority = int(1000 * float(focus.get("parent_score", 0.0)))
        return request


async def run_crawl(mode: str, delay: float, seeds: list[str], seconds: float = 0.0
                    ) -> dict[str, Any]:
    from scrapy import signals
    from scrapy.crawler import CrawlerRunner

    from spiders.topic import TopicSpider

    runner = CrawlerRunner(crawl_settings(mode, delay, seconds))
    crawler = runner.create_crawler(TopicSpider)
    times: dict[str, float] = {}
    crawler.signals.connect(lambda: times.setdefault("open", time.time()),
                            signal=signals.spider_opened, weak=False)
    crawler.signals.connect(lambda: times.setdefault("close", time.time()),
                            signal=signals.spider_closed, weak=False)
    await runner.crawl(crawler, keywords=TOPIC, seeds=",".join(seeds))
    return {"open": times["open"], "close": times["close"],
            "items": crawler.stats.get_value("item_scraped_count", 0),
            "min_start_gap": crawler.stats.get_value("focus/politeness/min_start_gap")}


def measure(rows: list[dict[str, Any]], run: dict[str, Any], hosts: int, delay: float
            ) -> dict[str, Any]:
    by_host: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_host[r["host"]].append(r)
    early = busy = 0
    for rs in by_host.values():
        rs.sort(key=lambda r: r["time_epoch"])
        for a, b in zip(rs, rs[1:], strict=False):
            if b["time_epoch"] - a["time_epoch"] < delay - JITTER:
                early += 1
                if os.environ.get("BENCH_DEBUG"):
                    print("early", a["host"], a["path"], b["path"],
                          round(b["time_epoch"] - a["time_epoch"], 4), b["inflight_total"])
        busy += sum(1 for r in rs if r["inflight_host"] > 1)
    bound = hosts / delay
    wall = run["close"] - run["open"]
    first, last = min(r["time_epoch"] for r in rows), max(r["time_epoch"] for r in rows)
    pages = sum(1 for r in rows if r["path"] != "/robots.txt" and r["status"] == 200)
    return {
        "requests": len(rows), "pages": pages, "items": run["items"], "wall_s": wall,
        "rate": len(rows) / wall, "ratio": len(rows) / wall / bound,
        # n requests to a host span at least (n - 1) * d: the span bound is (n - H) / span
        "span_ratio": (len(rows) - len(by_host)) / (last - first) / bound,
        "early": early, "busy": busy, "min_start_gap": run.get("min_start_gap"),
    }


async def bench(args: argparse.Namespace) -> None:
    from focuscrawl.demo.webserver import ServerProcess

    site = build_site(args.hosts, args.pages)
    seeds = [f"http://{h}/" for h in site]
    config = {"defaults": {"delay_ms": args.latency_ms}}
    results = {}
    with ServerProcess(pages=site, config=config) as server, ServerProcess(
            pages=site, config=config, changing=CHANGING) as changing:
        os.environ.pop("no_proxy", None)
        for mode in args.modes:
            web = changing if mode == "revisit" else server
            os.environ["http_proxy"] = web.proxy_url
            before = len(web.read_log())
            run = await run_crawl(mode, args.delay, seeds, args.revisit_seconds)
            rows = web.read_log()[before:]
            results[mode] = measure(rows, run, args.hosts, args.delay)
    bound = args.hosts / args.delay
    print(f"{args.hosts} hosts x {args.pages + 1} pages, delay {args.delay} s, "
          f"latency {args.latency_ms} ms, concurrency 1: bound H/d = {bound:.1f} requests/s")
    print(f"{'crawler':<16} {'requests':>8} {'pages':>6} {'wall s':>7} {'req/s':>7} "
          f"{'/bound':>7} {'span/bound':>10} {'early':>6} {'busy':>5} {'min gap':>8}")
    for mode, m in results.items():
        gap = m["min_start_gap"]
        print(f"{mode:<16} {m['requests']:>8} {m['pages']:>6} {m['wall_s']:>7.2f} "
              f"{m['rate']:>7.2f} {m['ratio']:>7.3f} {m['span_ratio']:>10.3f} "
              f"{m['early']:>6} {m['busy']:>5} {'-' if gap is None else f'{gap:.4f}':>8}")
    print(f"early: arrivals closer than d - {JITTER * 1000:.0f} ms to the host's previous one; "
          "busy: arrivals while the host had a request in flight; min gap: the shortest gap "
          "between two request starts to one server on the crawler's clock (focuscrawl's "
          "schedulers; arrivals jitter on a loaded machine, starts do not)")
    if "focuscrawl" in results:
        base = results["focuscrawl"]["pages"] / results["focuscrawl"]["wall_s"]
        for mode in ("best-n-first", "best-n-first-barrier", "learned"):
            if mode in results:
                m = results[mode]
                print(f"{mode} pages/s as a ratio of best-first's: "
                      f"{m['pages'] / m['wall_s'] / base:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--delay", type=float, default=0.25)
    ap.add_argument("--pages", type=int, default=40, help="pages per host (plus its home page)")
    ap.add_argument("--latency-ms", type=float, default=10.0)
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    ap.add_argument("--revisit-seconds", type=float, default=30.0,
                    help="how long the continuous crawl (mode revisit) runs")
    args = ap.parse_args()
    os.chdir(ROOT)

    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from twisted.internet import reactor
    from twisted.internet.defer import Deferred

    def start() -> None:
        d = Deferred.fromCoroutine(bench(args))
        d.addErrback(lambda f: (f.printTraceback(file=sys.stderr), None)[1])
        d.addBoth(lambda _: reactor.stop())

    reactor.callWhenRunning(start)
    reactor.run()


if __name__ == "__main__":
    main()

"""Pages per second: focuscrawl against a plain Scrapy spider, replaying the same repository.

    .venv/bin/python bench/throughput.py [--pages 3000] [--rounds 2] [--kinds plain,...]
                                         [--profile DIR]

Both crawl docweb's repository WARC (built by ``bench/harvest.py`` if missing) from every
host's index page, with the same replay download handler, no politeness delay and no network,
so what differs is the crawler:

* **plain Scrapy** -- this file's ``PlainSpider`` run by ``scrapy runspider`` outside the
  project: Scrapy's default settings, scheduler and dupefilter (16 requests at a time), no
  scoring; it follows every ``<a href>`` of every HTML page.
* **focuscrawl** -- ``scrapy crawl topic`` with the project's settings (FocusScheduler, best-first
  frontier, scoring, link filters, robots.txt, politeness middleware) in its normal mode
  (32 requests at a time), and in the evaluation mode the comparisons use (strict order, one
  request at a time);
* **focuscrawl learned** -- the same normal mode with the default ``learned`` order (link
  features, the online model, re-ranks); its rate is also given as a ratio of best-first's,
  and again with ``FOCUS_SLACK=1.0`` (its default, adaptive, may wait for a busy server,
  as best-first never does), and without exploration (``FOCUS_EXPLORE=0``,
  ``FOCUS_EXPLORE_HOSTS=0``): the default explores hosts it has not reached, and most hosts
  docweb's pages link to are off it, so those ratios tell the cost of learning from the cost
  of exploring.

Each run stops after ``--pages`` pages: 2xx HTML responses for focuscrawl (``MAX_PAGES``), any
response for plain Scrapy (``CLOSESPIDER_PAGECOUNT``). The rate is responses per second between
the spider's opening and closing (measured by this file's ``StatsDump`` extension in both, so
the WARC's indexing at start-up is outside it); the table also gives the mean page size and the
requests the spider produced per page, since the crawlers visit different pages. Runs alternate
between the crawlers for ``--rounds`` rounds; the table gives the median rate and focuscrawl's
ratio to plain Scrapy, and the crawl process's CPU milliseconds per response over the same span
(a figure a loaded machine does not blur, as it does the rates); pages/s counts responses, 2xx/s
the 2xx responses alone. Learned against best-first is also given per download: the learned
order spreads over more hosts than best-first, and most hosts docweb's pages link to are off it
(a robots.txt fetch and a page or its refusal each), so it makes more requests for the same
pages.

The focuscrawl crawlers export no page content (``-a content=none``: the crawler alone, as
before content existed) but ``focuscrawl-text``, best-first with ``-a content=text`` (the
default: each page's main text and metadata extracted); its pages/s is also given as a ratio
of best-first's with ``content=none`` in the same rounds.

``--dashboard`` also runs each focuscrawl crawler with the live dashboard on
(``FOCUS_DASHBOARD=127.0.0.1:PORT``) and a viewer: a thread that reads ``/status.json`` every
1.5 s and ``/metrics`` every 15 s, as an open page and a Prometheus scrape do; the runs
alternate with the dashboard-off ones in the same rounds, and the table ends with the ratios
on / off of pages per second and of CPU ms per page.

``--near-duplicates`` also runs each focuscrawl crawler with ``FOCUS_NEAR_DUPLICATES=off``,
alternating with the default (``mark``: every page's main text signed and checked against the
index) in the same rounds, and the table ends with the ratios mark / off of pages per second
and of CPU ms per page: the index's cost (best-first crawls the same pages either way; the
learned order's pages may differ, as it learns that a copy is nothing new).

``--kinds`` runs only some of the crawlers; ``--profile DIR`` runs each under cProfile, keeps
the profiles in DIR and prints, per run, CPU ms per page by function (own time and with
callees): where a page's time goes.  The profiler slows every crawler by about half.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import scrapy
from scrapy import signals
from scrapy.http import TextResponse

from focuscrawl.seam.records import is_html, is_page

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HANDLERS = {"http": "focuscrawl.seam.replay.ReplayDownloadHandler",
            "https": "focuscrawl.seam.replay.ReplayDownloadHandler"}
TOPIC = "thread lock concurrency"
KINDS = ("plain", "focuscrawl", "focuscrawl-learned", "focuscrawl-learned-any",
         "focuscrawl-learned-stay", "focuscrawl-strict", "focuscrawl-text")
#: the content mode of each focuscrawl kind: none (the crawler alone) but for the -text one
CONTENT = {"focuscrawl-text": "text"}


class StatsDump:
    """Extension: responses and seconds from spider_opened to spider_closed, to a JSON file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.responses = 0
        self.pages = 0  # what MAX_PAGES counts (records.is_page: 2xx HTML responses)
        self.bytes = 0
        self.requests = 0  # every request the spider produced (before the scheduler's checks)
        self.t0 = 0.0
        self.cpu0 = 0.0  # the process's CPU seconds at spider_opened (load does not blur them)

    @classmethod
    def from_crawler(cls, crawler: Any) -> StatsDump:
        ext = cls(crawler.settings.get("BENCH_STATS_FILE"))
        crawler.signals.connect(ext.opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.response, signal=signals.response_received)
        crawler.signals.connect(ext.scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(ext.closed, signal=signals.spider_closed)
        ext.crawler = crawler
        return ext

    def opened(self, spider: Any) -> None:
        self.t0 = time.perf_counter()
        self.cpu0 = time.process_time()

    def response(self, response: Any, request: Any, spider: Any) -> None:
        self.responses += 1
        self.pages += is_page(response.status, is_html(response))
        self.bytes += len(response.body)

    def scheduled(self, request: Any, spider: Any) -> None:
        self.requests += 1

    def closed(self, spider: Any, reason: str) -> None:
        seconds = time.perf_counter() - self.t0
        cpu = time.process_time() - self.cpu0
        stats = self.crawler.stats.get_stats()
        with open(self.path, "w", encoding="utf-8") as f:
            json.dump({"responses": self.responses, "pages": self.pages,
                       "downloads": stats.get("downloader/request_count", 0),
                       "seconds": seconds, "cpu": cpu,
                       "reason": reason,
                       "bytes": self.bytes, "requests": self.requests,
                       "items": stats.get("item_scraped_count", 0),
                       "near_duplicates": stats.get("focus/near_duplicates", 0),
                       "replay_hits": stats.get("replay/hit", 0),
                       "replay_misses": stats.get("replay/miss", 0)}, f)


class PlainSpider(scrapy.Spider):
    """Follow every link, score nothing: Scrapy's defaults as the baseline."""

    name = "plain"

    def __init__(self, seeds: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seed_file = seeds

    async def start(self):
        with open(self.seed_file, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield scrapy.Request(line.strip())

    def parse(self, response):
        if not isinstance(response, TextResponse):
            return
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            if url.startswith(("http://", "https://")):
                yield scrapy.Request(url)


DASHBOARD = "+dashboard"  # a kind's suffix: the same crawl with the dashboard on and watched
NEAR_OFF = "+near-off"  # a kind's suffix: the same crawl with FOCUS_NEAR_DUPLICATES=off


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def view(port: int, done: threading.Event) -> list[int]:
    """What an open dashboard page and a Prometheus scrape ask until ``done``: status.json
    every 1.5 s, /metrics every 15 s; [answers, refusals] (the crawl not listening yet)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    counts = [0, 0]
    n = 0
    while not done.wait(1.5):
        paths = ["status.json"] + (["metrics"] if n % 10 == 0 else [])
        n += 1
        for path in paths:
            try:
                with opener.open(f"http://127.0.0.1:{port}/{path}", timeout=10) as r:
                    r.read()
                counts[0] += 1
            except OSError:
                counts[1] += 1
    return counts


def run(kind: str, *, warc: Path, seeds: Path, pages: int, work: Path,
        profile: Path | None = None) -> dict[str, Any]:
    """One crawl of ``kind``; with ``profile`` (a file name) under cProfile, saved there."""
    near_off = kind.endswith(NEAR_OFF)
    kind = kind.removesuffix(NEAR_OFF)
    dashboard = kind.endswith(DASHBOARD)
    kind = kind.removesuffix(DASHBOARD)
    stats_file = work / f"{kind}-{time.monotonic_ns()}.json"
    common = {"FOCUS_REPLAY": str(warc), "DOWNLOAD_HANDLERS": json.dumps(HANDLERS),
              "EXTENSIONS": json.dumps({"throughput.StatsDump": 1000}),
              "BENCH_STATS_FILE": str(stats_file), "LOG_LEVEL": "WARNING",
              "TELNETCONSOLE_ENABLED": "False", "REMOTE_CONTROL_ENABLED": "False"}
    env = {k: v for k, v in os.environ.items()
           if k not in ("SCRAPY_SETTINGS_MODULE", "http_proxy", "https_proxy")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(HERE)])
    if kind == "plain":
        settings = {**common, "CLOSESPIDER_PAGECOUNT": str(pages)}
        cmd = [sys.executable, "-m", "scrapy", "runspider", str(Path(__file__).resolve()),
               "-a", f"seeds={seeds}"]
    else:
        env["SCRAPY_SETTINGS_MODULE"] = "settings"
        # no feed file; no private-address guard (its DNS lookups of recorded hosts would time
        # out offline: nothing leaves the machine in a replay)
        # the project's add-on adds focuscrawl's extensions beside StatsDump
        settings = {**common, "FOCUS_DELAY": "0", "FOCUS_DEFAULT_FEED": "",
                    "FOCUS_BLOCK_PRIVATE": "False",
                    "EXTENSIONS": json.dumps({"throughput.StatsDump": 1000})}
        if kind == "focuscrawl-strict":
            settings |= {"FOCUS_STRICT_ORDER": "True", "CONCURRENT_REQUESTS": "1"}
        if kind == "focuscrawl-learned-any":
            settings["FOCUS_SLACK"] = "1.0"  # as best-first: any idle server's best URL
        if kind == "focuscrawl-learned-stay":  # no exploration: no bonus, no host bandit
            settings |= {"FOCUS_EXPLORE": "0", "FOCUS_EXPLORE_HOSTS": "0"}
        if dashboard:
            port = free_port()
            settings["FOCUS_DASHBOARD"] = f"127.0.0.1:{port}"
        if near_off:
            settings["FOCUS_NEAR_DUPLICATES"] = "off"
        strategy = "learned" if kind.startswith("focuscrawl-learned") else "best-first"
        cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"keywords={TOPIC}",
               "-a", f"seeds={seeds}", "-a", f"strategy={strategy}", "-a", f"max_pages={pages}",
               "-a", f"content={CONTENT.get(kind, 'none')}"]
    for k, v in settings.items():
        cmd += ["-s", f"{k}={v}"]
    if profile is not None:
        cmd[1:1] = ["-m", "cProfile", "-o", str(profile)]
    done = threading.Event()
    viewed: list[list[int]] = []
    if dashboard:
        viewer = threading.Thread(target=lambda: viewed.append(view(port, done)))
        viewer.start()
    proc = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True)
    done.set()
    if dashboard:
        viewer.join()
    if proc.returncode != 0 or not stats_file.exists():
        raise RuntimeError(f"{kind} run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    out = json.loads(stats_file.read_text())
    if dashboard:
        out["viewed"] = viewed[0][0] if viewed else 0
    out["rate"] = out["responses"] / out["seconds"]
    out["page_rate"] = out["pages"] / out["seconds"]
    return out


def profile_table(path: Path, pages: int, top: int = 30) -> str:
    """CPU ms per page by function in one profile: own time (tottime) and with callees
    (cumtime), the functions with the most own time, and with the most time with callees
    among the project's own (focuscrawl, the spiders): where a page's CPU time goes."""
    import pstats

    st = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    rows = [(f"{Path(file).name}:{line}({name})", tt, ct, file)
            for (file, line, name), (_cc, _nc, tt, ct, _callers) in st.items()]
    total = sum(tt for _, tt, _, _ in rows)
    out = [f"{path.name}: {1000 * total / pages:.2f} CPU ms/page profiled ({pages} responses)",
           f"{'ms/page own':>11s} {'with callees':>12s}  function"]
    own = sorted(rows, key=lambda r: -r[1])[:top]
    ours = sorted((r for r in rows if "focuscrawl" in r[3] or "/spiders/" in r[3]),
                  key=lambda r: -r[2])[:top]
    for title, chosen in (("most own time", own), ("project functions, most time with "
                                                   "callees", ours)):
        out.append(f"-- {title}")
        out += [f"{1000 * tt / pages:11.3f} {1000 * ct / pages:12.3f}  {name}"
                for name, tt, ct, _ in chosen]
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pages", type=int, default=3000,
                   help="pages per run (focuscrawl: 2xx HTML responses; plain Scrapy: responses)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--kinds", default=",".join(KINDS),
                   help=f"comma-separated crawlers to run (default all: {','.join(KINDS)})")
    p.add_argument("--profile", type=Path, default=None, metavar="DIR",
                   help="run each crawl under cProfile, keep the profiles in DIR and print CPU "
                        "ms per page by function (the profiler slows every crawler)")
    p.add_argument("--dashboard", action="store_true",
                   help="also run each focuscrawl crawler with the live dashboard on and "
                        "watched, alternating with it off, and give the ratios")
    p.add_argument("--near-duplicates", action="store_true",
                   help="also run each focuscrawl crawler with FOCUS_NEAR_DUPLICATES=off, "
                        "alternating with the default (mark), and give the ratios")
    args = p.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    if unknown := set(kinds) - set(KINDS):
        p.error(f"unknown kinds: {', '.join(sorted(unknown))}")
    if args.dashboard:
        kinds = [x for k in kinds for x in ((k, k + DASHBOARD) if k != "plain" else (k,))]
    if args.near_duplicates:
        kinds = [x for k in kinds for x in ((k, k + NEAR_OFF) if k != "plain" else (k,))]
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)

    from harvest import data_dir, docweb_data, record_repository

    warc = data_dir() / "docweb.warc.gz"
    record_repository(warc, delay=0.01, force=False)
    hosts = json.loads((docweb_data() / "hosts.json").read_text("utf-8"))["hosts"]
    results: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory(prefix="throughput-") as tmp:
        work = Path(tmp)
        seeds = work / "seeds.txt"
        seeds.write_text("\n".join(f"https://{h}{v['index']}" for h, v in hosts.items()
                                   if v.get("index")) + "\n")
        for r in range(args.rounds):
            for kind in kinds:
                prof = (args.profile / f"{kind}-r{r + 1}.prof" if args.profile is not None
                        else None)
                res = run(kind, warc=warc, seeds=seeds, pages=args.pages, work=work,
                          profile=prof)
                results[kind].append(res)
                print(f"round {r + 1} {kind:18s} {res['responses']:6d} responses in "
                      f"{res['seconds']:6.1f} s = {res['rate']:6.1f} /s, "
                      f"{1000 * res['cpu'] / res['responses']:5.1f} CPU ms/page",
                      file=sys.stderr)
                if prof is not None:
                    print(profile_table(prof, res["responses"]))
    plain = (statistics.median(x["rate"] for x in results["plain"]) if results.get("plain")
             else float("nan"))
    plain_pages = (statistics.median(x["page_rate"] for x in results["plain"])
                   if results.get("plain") else float("nan"))
    print(f"\nReplay throughput, docweb repository {warc}, {args.pages} pages per run, "
          f"median of {args.rounds} rounds (cpu: {os.cpu_count()} cores)")
    print(f"{'crawler':46s} {'responses':>9s} {'seconds':>8s} {'KB/page':>7s} "
          f"{'links/page':>10s} {'CPU ms/page':>11s} {'pages/s':>8s} {'ratio':>6s} "
          f"{'2xx/s':>7s} {'ratio':>6s}")
    labels = {"plain": "plain Scrapy (default scheduler, no scoring)",
              "focuscrawl": "focuscrawl best-first (32 concurrent)",
              "focuscrawl-learned": "focuscrawl learned (32 concurrent)",
              "focuscrawl-learned-any": "focuscrawl learned, FOCUS_SLACK=1.0",
              "focuscrawl-learned-stay": "focuscrawl learned, no exploration",
              "focuscrawl-strict": "focuscrawl best-first, evaluation mode",
              "focuscrawl-text": "focuscrawl best-first, content=text"}
    for kind in kinds:
        if kind.endswith(NEAR_OFF):
            labels[kind] = labels.get(kind.removesuffix(NEAR_OFF), kind) + ", near-dups off"
        elif kind.endswith(DASHBOARD):
            labels[kind] = labels[kind.removesuffix(DASHBOARD)] + ", dashboard"
        rate = statistics.median(x["rate"] for x in results[kind])
        pages = statistics.median(x["page_rate"] for x in results[kind])
        resp = statistics.median(x["responses"] for x in results[kind])
        secs = statistics.median(x["seconds"] for x in results[kind])
        kb = statistics.median(x["bytes"] / 1024 / x["responses"] for x in results[kind])
        links = statistics.median(x["requests"] / x["responses"] for x in results[kind])
        cpu = statistics.median(1000 * x["cpu"] / x["responses"] for x in results[kind])
        print(f"{labels[kind]:46s} {resp:9.0f} {secs:8.1f} {kb:7.1f} {links:10.0f} "
              f"{cpu:11.1f} {rate:8.1f} {rate / plain:6.2f} {pages:7.1f} "
              f"{pages / plain_pages:6.2f}")
    def med(kind: str, name: str) -> float:
        return statistics.median(x[name] for x in results[kind])

    if {"focuscrawl", "focuscrawl-learned"} <= set(kinds):
        def per_download(kind: str) -> float:
            return statistics.median(1000 * x["cpu"] / max(x["downloads"], 1)
                                     for x in results[kind])

        b, le = "focuscrawl", "focuscrawl-learned"
        print(f"learned / best-first: responses/s {med(le, 'rate') / med(b, 'rate'):.2f}, "
              f"pages (2xx)/s {med(le, 'page_rate') / med(b, 'page_rate'):.2f} (its "
              f"adaptive slack may wait for a busy server); downloads (robots.txt and failures "
              f"included) {med(le, 'downloads'):.0f} against {med(b, 'downloads'):.0f}, CPU ms "
              f"a download {per_download(le):.1f} against {per_download(b):.1f}")
    if {"focuscrawl", "focuscrawl-learned-any"} <= set(kinds):
        best = statistics.median(x["rate"] for x in results["focuscrawl"])
        anyslack = statistics.median(x["rate"] for x in results["focuscrawl-learned-any"])
        print(f"learned with FOCUS_SLACK=1.0 (as best-first) / best-first responses/s: "
              f"{anyslack / best:.2f}")
    if {"focuscrawl", "focuscrawl-learned-stay"} <= set(kinds):
        b, st = "focuscrawl", "focuscrawl-learned-stay"
        print(f"learned without exploration / best-first: pages (2xx)/s "
              f"{med(st, 'page_rate') / med(b, 'page_rate'):.2f}, downloads "
              f"{med(st, 'downloads'):.0f} against {med(b, 'downloads'):.0f}: the rest of the "
              f"default's cost is exploring hosts it has not reached (most of those docweb "
              f"links to are off it: a robots.txt fetch and its retry each)")
    for kind in ("focuscrawl-text",):
        if {kind, "focuscrawl"} <= set(kinds):
            ratios = [t["page_rate"] / n["page_rate"]
                      for t, n in zip(results[kind], results["focuscrawl"], strict=True)]
            print(f"{labels[kind]} / content=none: pages (2xx)/s "
                  f"{med(kind, 'page_rate') / med('focuscrawl', 'page_rate'):.2f} (per round: "
                  f"{', '.join(f'{r:.2f}' for r in ratios)}), CPU ms/page "
                  f"{1000 * med(kind, 'cpu') / med(kind, 'responses'):.1f} against "
                  f"{1000 * med('focuscrawl', 'cpu') / med('focuscrawl', 'responses'):.1f}")
    for kind in kinds:
        if not kind.endswith(DASHBOARD):
            continue
        off = kind.removesuffix(DASHBOARD)
        ratios = [on["page_rate"] / o["page_rate"]
                  for on, o in zip(results[kind], results[off], strict=True)]
        cpu_on = med(kind, "cpu") / med(kind, "responses")
        cpu_off = med(off, "cpu") / med(off, "responses")
        print(f"dashboard on / off, {labels[off]}: pages (2xx)/s "
              f"{med(kind, 'page_rate') / med(off, 'page_rate'):.3f} (per round: "
              f"{', '.join(f'{r:.3f}' for r in ratios)}), CPU ms/page {1000 * cpu_on:.2f} "
              f"against {1000 * cpu_off:.2f} ({cpu_on / cpu_off:.3f}); status.json and "
              f"/metrics read {med(kind, 'viewed'):.0f} times a run")
    for kind in kinds:
        if not kind.endswith(NEAR_OFF):
            continue
        mark = kind.removesuffix(NEAR_OFF)
        ratios = [m["page_rate"] / o["page_rate"]
                  for m, o in zip(results[mark], results[kind], strict=True)]
        cpu_mark = med(mark, "cpu") / med(mark, "responses")
        cpu_off = med(kind, "cpu") / med(kind, "responses")
        print(f"near-duplicates mark / off, {labels[mark]}: pages (2xx)/s "
              f"{med(mark, 'page_rate') / med(kind, 'page_rate'):.3f} (per round: "
              f"{', '.join(f'{r:.3f}' for r in ratios)}), CPU ms/page {1000 * cpu_mark:.2f} "
              f"against {1000 * cpu_off:.2f} ({cpu_mark / cpu_off:.3f}); "
              f"{med(mark, 'near_duplicates'):.0f} near-duplicates found a run")
    print("links/page: requests the spider produced per response (before the scheduler's "
          "de-duplication; focuscrawl's spider makes none for a link its crawl order ignores, "
          "stat focus/links/known); the crawlers fetch different pages in different orders, so "
          "KB/page tells how comparable their work was.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Distributed crawling: the same crawl by 1, 2 and 4 worker processes sharing one Redis.

    .venv/bin/python bench/distributed.py [--workers 1,2,4] [--hosts 32] [--pages 25]
        [--latency-ms 150] [--delay 0.15] [--concurrent-requests 8]

A local multi-host site (``focuscrawl.demo.webserver``, every response ``--latency-ms`` late) is
crawled breadth-first to the end, from one seed per host, by N ``scrapy crawl topic`` processes
with ``settings.distributed`` against a redis-server started here; first by the single-process
crawler for reference.  Each worker has ``--concurrent-requests`` connections (what one process
can drive), each server one connection and ``--delay`` seconds between request starts, cluster-
wide.  From the server's access log: pages, URLs fetched twice, the crawl's pages/s (first to
last request) and its speed-up over one worker, and whether the union of fetched URLs is the
whole site.  The ceiling is politeness: hosts / max(delay, latency) pages/s.  From Redis
(``INFO commandstats``, reset before each crawl): the script calls the workers made per page
fetched -- every worker call is one script (EVALSHA), so this is the Redis round trips per page --
and the Redis memory the crawl left per URL it knows (``used_memory`` growth / URLs seen).  CPU
per page fetched, figures that the machine's load blurs less than the rates: the workers'
(``/proc/<pid>/stat`` sampled every 50 ms, between the crawl's first and last request, so
start-up and shut-down are left out), Redis's (``INFO cpu``, the whole run) and the local site's
(the server process, sampled as the workers): on a small machine the three share its CPUs.
``--by-script`` also counts the calls per page of each script (a ``MONITOR`` connection: it
slows Redis, so its rates are not comparable); ``--profile DIR`` runs every worker under
cProfile and prints CPU ms per page by function of each (CPU time, not wall-clock; the
profiler slows the workers).  Last, the Redis frontier alone: adds and leases per second from
one client (each is one Lua script call), adds in calls of 20 links (``add_many``, a page's
outlinks), and the Redis memory per queued URL.

``--memory N`` measures only the Redis memory per URL, at scale (``bench/redis_memory.py``): N
queued URLs (default 1,000,000) and ``--memory-fetched`` fetched ones (default N / 4) over
``--memory-hosts`` servers, through the real scripts; ``--memory-config NAME=VALUE`` sets a
Redis setting first (``CONFIG SET``).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from focuscrawl.demo.webserver import Page, ServerProcess, analyze  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

WORDS = ("regex pattern match engine syntax group river stone cloud garden paper window "
         "music travel market").split()


def build_site(hosts: int, pages: int, seed: int = 7) -> dict[str, dict[str, Page]]:
    """Per host a tree of pages (every page reachable from the host's p0), with cross links."""
    rng = random.Random(seed)
    names = [f"s{i}.test" for i in range(hosts)]
    site: dict[str, dict[str, Page]] = {}
    for n, name in enumerate(names):
        site[name] = {}
        for i in range(pages):
            links = [f"/p{j}.html" for j in (2 * i + 1, 2 * i + 2) if j < pages]
            links += [f"http://{names[(n + k) % hosts]}/p{rng.randrange(pages)}.html"
                      for k in (1, 2, 3)]
            text = " ".join(rng.choice(WORDS) for _ in range(400))
            anchors = " ".join(f'<a href="{u}">{rng.choice(WORDS)} link</a>' for u in links)
            site[name][f"/p{i}.html"] = Page(
                f"<html><head><title>{name} {i}</title></head><body><p>{text}</p>"
                f"{anchors}</body></html>")
    return site


#: ``python -c`` this scrapy: a worker under cProfile timed by CPU, not wall-clock time (a
#: wall-clock profile counts the waits for Redis's answers and for the network as the worker's)
PROFILED = ("import cProfile, runpy, sys, time; p = cProfile.Profile(time.process_time); "
            "sys.argv = sys.argv[1:]\n"
            "try: p.runcall(runpy.run_module, 'scrapy', run_name='__main__', alter_sys=True)\n"
            "finally: p.dump_stats({path!r})")
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class CpuSampler(threading.Thread):
    """Every 50 ms, each process's CPU seconds (user + system, from ``/proc``), timestamped."""

    def __init__(self, pids: list[int]) -> None:
        super().__init__(daemon=True)
        self.pids = pids
        self.samples: dict[int, list[tuple[float, float]]] = {pid: [] for pid in pids}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            now = time.time()
            for pid in self.pids:
                try:
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                except (OSError, IndexError):
                    continue
                self.samples[pid].append((now, (int(fields[11]) + int(fields[12])) / TICKS))
            self.stop.wait(0.05)

    def between(self, t0: float, t1: float) -> float:
        """CPU seconds all the processes spent from ``t0`` to ``t1`` (last sample before each)."""
        total = 0.0
        for samples in self.samples.values():
            before = [c for t, c in samples if t <= t0] or [0.0]
            upto = [c for t, c in samples if t <= t1] or [0.0]
            total += upto[-1] - before[-1]
        return total


class ScriptCounter(threading.Thread):
    """Counts EVALSHA calls by script name: ``redis-cli monitor`` in a subprocess."""

    def __init__(self, redis_url: str) -> None:
        super().__init__(daemon=True)
        from focuscrawl.distributed import scripts

        self.names = dict(scripts.BY_SHA)
        self.counts: Counter[str] = Counter()
        self.proc = subprocess.Popen(["redis-cli", "-u", redis_url, "monitor"],
                                     stdout=subprocess.PIPE, text=True)

    def run(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            parts = line.split('"')
            if len(parts) > 3 and parts[1].upper() == "EVALSHA":
                self.counts[self.names.get(parts[3], parts[3][:8])] += 1

    def close(self) -> None:
        time.sleep(0.5)  # the last lines
        self.proc.terminate()
        self.join()


#: how ``run`` reads Redis's figures (``--cluster``: summed over the cluster's nodes)
STATS: list[Any] = [redis.Redis.from_url]


def run(n: int, server: ServerProcess, redis_url: str, key: str, args: argparse.Namespace,
        logdir: Path) -> dict:
    """One crawl by ``n`` workers (n=0: the single-process crawler); its figures."""
    seeds = ",".join(f"http://s{i}.test/p0.html" for i in range(args.hosts))
    env = {**os.environ, **server.proxy_env()}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    if n:
        env["SCRAPY_SETTINGS_MODULE"] = "settings.distributed"
    before = len(server.read_log())
    rclient = STATS[0](redis_url)
    rclient.config_resetstat()
    memory0 = rclient.info("memory")["used_memory"]
    cpu = rclient.info("cpu")
    redis_cpu0 = cpu["used_cpu_user"] + cpu["used_cpu_sys"]
    counter = None
    if args.by_script and n:
        counter = ScriptCounter(redis_url)
        counter.start()
        time.sleep(0.5)  # monitoring before the first call
    procs = []
    t0 = time.monotonic()
    for w in range(max(1, n)):
        profile = ["-c", PROFILED.format(path=str(args.profile / f"{key}-{w}.prof"))
                   ] if args.profile is not None else ["-m"]
        cmd = [sys.executable, *profile, "scrapy", "crawl", "topic",
               "-a", "keywords=regex pattern", "-a", f"seeds={seeds}",
               "-a", "strategy=breadth-first", "-a", f"max_pages={args.hosts * args.pages * 2}",
               "-s", f"FOCUS_DELAY={args.delay}", "-s", "FOCUS_DEFAULT_FEED=",
               "-s", f"CONCURRENT_REQUESTS={args.concurrent_requests}",
               "-s", f"REDIS_URL={redis_url}", "-s", f"FOCUS_REDIS_KEY={key}",
               "-s", "LOG_LEVEL=INFO", "-s", f"LOG_FILE={logdir / f'{key}-{w}.log'}"]
        for setting in args.set:
            cmd += ["-s", setting]
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL))
    sampler = CpuSampler([p.pid for p in procs])
    site_cpu = CpuSampler([server.proc.pid] if server.proc is not None else [])
    sampler.start()
    site_cpu.start()
    codes = [p.wait() for p in procs]
    wall = time.monotonic() - t0
    for each in (sampler, site_cpu):
        each.stop.set()
        each.join()
    rows = [r for r in server.read_log()[before:] if r["path"] != "/robots.txt"]
    urls = [f"{r['host']}{r['path']}" for r in rows]
    starts = sorted(r["time_epoch"] for r in rows)
    crawl = starts[-1] - starts[0] if len(starts) > 1 else float("nan")
    if counter is not None:
        counter.close()
    cmds = rclient.info("commandstats")
    cpu = rclient.info("cpu")
    redis_cpu = cpu["used_cpu_user"] + cpu["used_cpu_sys"] - redis_cpu0
    worker_cpu = sampler.between(starts[0], starts[-1]) if len(starts) > 1 else float("nan")
    web_cpu = site_cpu.between(starts[0], starts[-1]) if len(starts) > 1 else float("nan")
    scripts = sum(cmds.get(f"cmdstat_{c}", {}).get("calls", 0) for c in ("evalsha", "eval"))
    # the crawl fetches the whole site, so the URLs it knows are the ones it fetched (the
    # seen-set is fingerprints in buckets: no one key to count)
    known = len(set(urls)) if n else 0
    memory = rclient.info("memory")["used_memory"] - memory0
    return {
        "workers": n, "codes": codes, "pages": len(rows), "unique": len(set(urls)),
        "twice": len(urls) - len(set(urls)), "wall": wall, "crawl": crawl,
        "rate": len(rows) / crawl, "urls": set(urls),
        "calls": scripts / max(1, len(rows)) if n else float("nan"),
        "by_script": {name: c / max(1, len(rows)) for name, c in counter.counts.most_common()}
        if counter is not None else {},
        "worker_ms": 1000 * worker_cpu / max(1, len(rows)),
        "redis_ms": 1000 * redis_cpu / max(1, len(rows)),
        "site_ms": 1000 * web_cpu / max(1, len(rows)),
        "bytes_per_url": memory / known if known else float("nan"),
        "max_inflight": max(rep["max_inflight"]
                            for rep in analyze(server.read_log()[before:]).values()),
    }


def frontier_ops(redis_url: str, n: int, strategy: str) -> tuple[float, float, float, float]:
    """Operations per second of the Redis frontier alone: add n links one call each, then lease
    them all; the Redis memory per queued URL; adds per second in calls of 20 (a page's
    outlinks, ``add_many``) into a fresh crawl."""
    from focuscrawl.core.frontier import Link
    from focuscrawl.distributed.frontier import RedisFrontier

    rng = random.Random(1)
    client = redis.Redis.from_url(redis_url)
    f = RedisFrontier(client, f"ops-{strategy}:", "w1")
    f.configure({"strategy": strategy, "delay": 0, "concurrency": 10**6, "n": 256})
    f.heartbeat(600)
    links = [Link(f"http://h{rng.randrange(200)}.test/p{i}.html", host=f"h{i % 200}.test",
                  parent=f"http://h{i % 200}.test/p{i // 20}.html",
                  parent_score=round(rng.betavariate(1.2, 6.0), 4), keyword=rng.random() < 0.05)
             for i in range(n)]
    memory0 = client.info("memory")["used_memory"]
    t0 = time.perf_counter()
    for link in links:
        f.add(link)
    t1 = time.perf_counter()
    per_url = (client.info("memory")["used_memory"] - memory0) / max(1, len(f))
    popped = 0
    while (got := f.pop()) is not None:
        f.downloaded(got[0], True)
        f.settle([got[0]])
        popped += 1
    t2 = time.perf_counter()
    g = RedisFrontier(client, f"ops-{strategy}-many:", "w1")
    g.configure({"strategy": strategy, "delay": 0, "concurrency": 10**6, "n": 256})
    t3 = time.perf_counter()
    for i in range(0, n, 20):
        g.add_many(links[i:i + 20])
    t4 = time.perf_counter()
    return n / (t1 - t0), popped / (t2 - t1), per_url, n / (t4 - t3)


def memory(args: argparse.Namespace) -> int:
    """``--memory``: bytes per queued and per fetched URL in a redis-server started here."""
    from bench.redis_memory import report

    fetched = args.memory // 4 if args.memory_fetched is None else args.memory_fetched
    with RedisServer() as redis_server:
        report(redis_server.url, args.memory, fetched, args.memory_hosts,
               dict(item.split("=", 1) for item in args.memory_config))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", default="1,2,4", help="worker counts to run")
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--pages", type=int, default=25, help="pages per host")
    ap.add_argument("--latency-ms", type=float, default=150.0)
    ap.add_argument("--delay", type=float, default=0.15, help="FOCUS_DELAY (s)")
    ap.add_argument("--concurrent-requests", type=int, default=8, help="per worker")
    ap.add_argument("--no-single", action="store_true", help="skip the single-process crawl")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a setting for every crawler (repeatable)")
    ap.add_argument("--by-script", action="store_true",
                    help="count each script's calls per page (MONITOR: slows Redis)")
    ap.add_argument("--profile", type=Path, default=None, metavar="DIR",
                    help="run every worker under cProfile, keep the profiles in DIR and print "
                         "CPU ms per page by function (the profiler slows the workers)")
    ap.add_argument("--ops", type=int, default=20000,
                    help="links for the frontier-only measure (0: skip)")
    ap.add_argument("--memory", type=int, nargs="?", const=1_000_000, default=None,
                    metavar="N", help="only the Redis memory per queued and per fetched URL, "
                                      "N queued URLs (default 1,000,000)")
    ap.add_argument("--memory-fetched", type=int, default=None, metavar="M",
                    help="fetched URLs for --memory (default N / 4)")
    ap.add_argument("--memory-hosts", type=int, default=20_000, help="hosts for --memory")
    ap.add_argument("--memory-config", action="append", default=[], metavar="NAME=VALUE",
                    help="a Redis setting for --memory (CONFIG SET; repeatable)")
    ap.add_argument("--cluster", action="store_true",
                    help="each count on one Redis, then on a local Redis Cluster of --masters "
                         "masters (bench/distributed_cluster.py)")
    ap.add_argument("--masters", type=int, default=3)
    ap.add_argument("--replicas", type=int, default=0, help="per master, with --cluster")
    args = ap.parse_args()
    if args.memory is not None:
        return memory(args)
    counts = [int(x) for x in args.workers.split(",")]
    site = build_site(args.hosts, args.pages)
    everything = {f"{h}{p}" for h, pages in site.items() for p in pages}
    if args.cluster:
        from bench import distributed_cluster

        return distributed_cluster.main(args, run, site, everything,
                                        lambda make: STATS.__setitem__(0, make))
    ceiling = args.hosts / max(args.delay, args.latency_ms / 1000)
    print(f"site: {args.hosts} hosts x {args.pages} pages = {len(everything)} pages, "
          f"latency {args.latency_ms:.0f} ms; FOCUS_DELAY {args.delay} s, 1 connection per "
          f"server; CONCURRENT_REQUESTS {args.concurrent_requests} per worker; "
          f"{os.cpu_count()} CPUs; politeness ceiling ~{ceiling:.0f} pages/s")
    logdir = Path(tempfile.mkdtemp(prefix="bench-distributed-"))
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    results = []
    with RedisServer() as redis_server, ServerProcess(
            pages=site, config={"defaults": {"delay_ms": args.latency_ms}}) as server:
        for n in ([0] if not args.no_single else []) + counts:
            results.append(run(n, server, redis_server.url, f"bench{n}:", args, logdir))
        ops = {name: frontier_ops(redis_server.url, args.ops, name)
               for name in ("breadth-first", "cho-distance", "best-n-first")} if args.ops else {}
    base = next((r["rate"] for r in results if r["workers"] == 1), None)
    print(f"\n{'workers':>14} {'pages':>6} {'twice':>6} {'wall s':>7} {'crawl s':>8} "
          f"{'pages/s':>8} {'vs 1':>6} {'max/host':>8} {'calls/page':>10} {'B/URL':>6}"
          f" {'cpu ms/page':>11} {'redis ms':>8} {'site ms':>7}  union = site")
    for r in results:
        label = "single-process" if r["workers"] == 0 else str(r["workers"])
        rel = f"{r['rate'] / base:.2f}x" if base else "-"
        ok = "yes" if r["urls"] == everything and r["codes"] == [0] * len(r["codes"]) else "NO"
        print(f"{label:>14} {r['pages']:>6} {r['twice']:>6} {r['wall']:>7.1f} {r['crawl']:>8.1f} "
              f"{r['rate']:>8.1f} {rel:>6} {r['max_inflight']:>8} {r['calls']:>10.1f} "
              f"{r['bytes_per_url']:>6.0f} {r['worker_ms']:>11.2f} {r['redis_ms']:>8.2f} "
              f"{r['site_ms']:>7.2f}  {ok}")
        if r["by_script"]:
            print(" " * 15 + "calls/page by script: " + ", ".join(
                f"{name} {c:.2f}" for name, c in r["by_script"].items()))
    for name, (adds, pops, per_url, many) in ops.items():
        print(f"Redis frontier alone, {name}: {adds:,.0f} adds/s ({many:,.0f} in calls of 20), "
              f"{pops:,.0f} leases/s (pop + downloaded + settle, one worker, {args.ops} links); "
              f"{per_url:,.0f} B of Redis memory per queued URL")
    if args.profile is not None:
        from bench.throughput import profile_table

        for r in results:
            for w in range(max(1, r["workers"])):
                prof = args.profile / f"bench{r['workers']}:-{w}.prof"
                print(f"\n{r['workers']} worker(s), worker {w}: CPU ms per page of the crawl")
                print(profile_table(prof, r["pages"], top=25))
    print(f"\nworker logs: {logdir}")
    return 0 if all(r["urls"] == everything for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

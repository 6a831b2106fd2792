"""Keeping a topic fresh, live: real continuous crawls of the served changing demo web, one per
revisit policy, at the same politeness, in the same run.

    .venv/bin/python bench/freshness_live.py [--seconds 240] [--speed 2880] [--delay 0.5]
                                             [--max-pages 300] [--seed 1] [--topic regex]

For each policy (FOCUS_REVISIT_POLICY: ``optimal``, ours; ``uniform``; ``proportional``) a
demo web server changing as ``python -m focuscrawl.demo serve --changing`` does (the same
seed, model time ``--speed`` times the clock from its first page: every crawl sees the same
web) and ``scrapy crawl topic -a revisit=true -a max_pages=N`` through it, all at once, each
for ``--seconds`` (CLOSESPIDER_TIMEOUT).  The fetch budget is what politeness allows, the same
for every policy: one connection a server, ``--delay`` seconds between two requests to it
(FOCUS_DELAY); FOCUS_REVISIT_PRIOR is a model day.  Pages neither go away nor lose their
in-links here (a page gone leaves the comparison unequal).

Measured on the pages every crawl kept, over the window in which every crawl had fetched all
of them (each crawl's own time from its server's first page) to the end of the shortest:

* time-averaged freshness weighted by relevance (the page's cosine score against the topic's
  keywords as a share of FOCUS_RELEVANT_SCORE, as the crawl weighs it), exactly: the server's
  access log gives every fetch that got the page (200 or 304), ``/_changes.json`` every true
  change of its main content;
* the revisits in the window and those that found no change (by the truth);
* the optimum from the true rates, which no crawler knows, computed offline for the same
  budget (the revisits per second ours made, one a server every ``--delay`` s at most): the
  fluid model's value (``analytic``), and the crawler's own schedule run on the true rates and
  the true change times on a simulated clock (``oracle``; every copy fresh at the window's
  start, so a little ahead of any live crawl).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from bisect import bisect_right
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from freshness import site_pages  # noqa: E402

from focuscrawl.core.refresh import RevisitSchedule, allocate  # noqa: E402
from focuscrawl.core.refresh.freshness import weighted_freshness  # noqa: E402
from focuscrawl.core.refresh.simulate import simulate  # noqa: E402
from focuscrawl.core.relevance import Topic  # noqa: E402
from focuscrawl.demo import TOPICS, ensure_site, seeds  # noqa: E402
from focuscrawl.demo.changing import DAY  # noqa: E402
from focuscrawl.demo.webserver import ServerProcess  # noqa: E402

POLICIES = {"ours": "optimal", "uniform": "uniform", "proportional": "proportional"}


def crawl(server: ServerProcess, policy: str, keywords: str, args: argparse.Namespace,
          out: Path) -> dict[str, Any]:
    """One ``scrapy crawl topic -a revisit=true`` through ``server``; its output lines."""
    env = {**os.environ, **server.proxy_env(), "PYTHONPATH": str(ROOT)}
    log = out.with_suffix(".log")
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"keywords={keywords}",
           "-a", f"seeds={','.join(seeds())}", "-a", "revisit=true",
           "-a", f"max_pages={args.max_pages}", "-s", f"FOCUS_REVISIT_POLICY={policy}",
           "-s", f"FOCUS_DELAY={args.delay}", "-s", f"CLOSESPIDER_TIMEOUT={args.seconds}",
           "-s", f"FOCUS_REVISIT_PRIOR={DAY / args.speed:g}", "-s", "LOG_LEVEL=INFO",
           "-s", f"LOG_FILE={log}", "-O", str(out)]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"crawl {policy} failed ({proc.returncode}):\n"
                           + proc.stderr.decode("utf-8", "replace")[-2000:])
    lines = [json.loads(s) for s in out.read_text("utf-8").splitlines() if s.strip()]
    return {"lines": lines, "wall": time.monotonic() - t0}


def fetches(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Each page's fetches that got its content (200) or confirmed it (304), by arrival."""
    out: dict[str, list[float]] = {}
    for r in rows:
        if r["status"] in (200, 304) and r["path"].endswith(".html"):
            out.setdefault(f"http://{r['host']}{r['path']}", []).append(r["time_epoch"])
    return {u: sorted(ts) for u, ts in out.items()}


def measure(run: dict[str, Any], pages: list[str], weights: dict[str, float],
            window: tuple[float, float]) -> dict[str, float]:
    """Freshness over ``window`` (seconds after the run's server started) and revisit counts."""
    start = run["truth"]["start"]
    lo, hi = start + window[0], start + window[1]
    truth = run["truth"]["pages"]
    visits = {u: run["fetches"][u] for u in pages}
    changes = {u: truth[u]["changes"] for u in pages}
    w = {u: weights[u] for u in pages}
    revisits = unchanged = 0
    for u in pages:
        ts = visits[u]
        for a, b in zip(ts, ts[1:], strict=False):
            if lo <= b < hi:
                revisits += 1
                seen = changes[u]
                unchanged += bisect_right(seen, b) == bisect_right(seen, a)
    return {"freshness": weighted_freshness(visits, changes, w, lo, hi),
            "unweighted": weighted_freshness(visits, changes, dict.fromkeys(pages, 1.0), lo, hi),
            "revisits": revisits, "unchanged": unchanged}


def optimum(run: dict[str, Any], pages: list[str], weights: dict[str, float],
            window: tuple[float, float], budget: float, delay: float) -> dict[str, float]:
    """The true-rate optimum for ``budget`` revisits per second over ``pages``, computed
    offline: the fluid model's value, and the crawler's schedule on the true rates."""
    truth = run["truth"]["pages"]
    rates = {u: float(truth[u]["rate"]) for u in pages}
    hosts = [u.split("/")[2] for u in pages]
    caps = {h: 1.0 / delay for h in hosts}
    analytic = allocate("optimal", np.array([rates[u] for u in pages]),
                        np.array([weights[u] for u in pages]), budget, hosts, caps).expected
    lo = run["truth"]["start"] + window[0]
    span = window[1] - window[0]
    changes = {u: [t - lo for t in truth[u]["changes"] if lo < t <= lo + span] for u in pages}
    oracle = simulate(RevisitSchedule("optimal", rate_of=lambda p: rates[p.url]), changes,
                      {u: weights[u] for u in pages}, budget=budget, duration=span, delay=delay,
                      calibrate_every=span)
    return {"analytic": analytic, "oracle": oracle.freshness, "oracle_revisits": oracle.fetches}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=240.0, help="each crawl's wall time")
    ap.add_argument("--speed", type=float, default=2880.0,
                    help="model seconds per second (2880: a model day every 30 s)")
    ap.add_argument("--delay", type=float, default=0.5, help="FOCUS_DELAY, every crawl")
    ap.add_argument("--max-pages", type=int, default=300, help="distinct pages kept")
    ap.add_argument("--seed", type=int, default=1, help="the changing web's seed")
    ap.add_argument("--topic", default="regex", help="a demo topic id")
    ap.add_argument("--keep", help="keep the crawls' output and logs in this directory")
    args = ap.parse_args(argv)
    topic = next((t for t in TOPICS if t["id"] == args.topic), None)
    if topic is None:
        ap.error(f"unknown demo topic {args.topic!r}: " + ", ".join(t["id"] for t in TOPICS))
    weights = site_pages(Topic(topic["keywords"]))
    changing = {"seed": args.seed, "speed": args.speed, "gone": 0.0, "unlinked": 0.0}
    work = Path(args.keep or tempfile.mkdtemp(prefix="freshness-live-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"{len(POLICIES)} crawls at once, {args.seconds:g} s each, model time x{args.speed:g} "
          f"({args.seconds * args.speed / DAY:.1f} model days), FOCUS_DELAY={args.delay:g}, "
          f"max_pages={args.max_pages}, seed {args.seed}, topic {args.topic!r}; "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    servers = {name: ServerProcess(root=ensure_site(), changing=changing) for name in POLICIES}
    runs: dict[str, dict[str, Any]] = {}
    try:
        for server in servers.values():
            server.start()
        with ThreadPoolExecutor(len(POLICIES)) as pool:
            futures = {name: pool.submit(crawl, servers[name], policy, topic["keywords"], args,
                                         work / f"{name}.jsonl")
                       for name, policy in POLICIES.items()}
            for name, future in futures.items():
                runs[name] = future.result()
        for name, server in servers.items():
            runs[name]["truth"] = server.changes()
            server.stop()
            runs[name]["fetches"] = fetches(server.read_log())
    finally:
        for server in servers.values():
            server.stop()
    # the pages every crawl kept, and the window in which every crawl had them all
    kept = [{i["url"] for i in run["lines"] if not i.get("gone")} for run in runs.values()]
    pages = sorted(set.intersection(*kept) & set(weights))
    for run in runs.values():
        start = run["truth"]["start"]
        run["ready"] = max(run["fetches"][u][0] for u in pages) - start
        run["end"] = max(t for ts in run["fetches"].values() for t in ts) - start
    window = (max(r["ready"] for r in runs.values()), min(r["end"] for r in runs.values()))
    if window[1] - window[0] < 10:
        print(f"the crawls kept their pages too late to compare (window {window}): "
              "give them more --seconds")
        return 1
    relevant = sum(weights[u] >= 1.0 for u in pages)
    print(f"{len(pages)} pages kept by every crawl ({relevant} at weight 1); window "
          f"{window[0]:.0f}-{window[1]:.0f} s ({(window[1] - window[0]) * args.speed / DAY:.1f} "
          f"model days)\n")
    span = window[1] - window[0]
    results = {name: measure(run, pages, weights, window) for name, run in runs.items()}
    budget = results["ours"]["revisits"] / span
    best = optimum(runs["ours"], pages, weights, window, budget, args.delay)
    print(f"{'policy':<14}{'freshness':>10}{'unweighted':>11}{'revisits':>10}{'no change':>11}"
          f"{'share':>7}")
    for name, row in results.items():
        print(f"{name:<14}{row['freshness']:>10.4f}{row['unweighted']:>11.4f}"
              f"{row['revisits']:>10}{row['unchanged']:>11}"
              f"{row['unchanged'] / max(row['revisits'], 1):>7.2f}")
    print(f"{'oracle':<14}{best['oracle']:>10.4f}{'':>11}{best['oracle_revisits']:>10}")
    print(f"{'analytic':<14}{best['analytic']:>10.4f}")
    ours = results["ours"]["freshness"]
    print(f"\nbudget: {budget:.2f} revisits/s (ours', {budget * DAY / args.speed / len(pages):.2f}"
          " a page a model day)")
    print(f"ours / optimum (analytic)  {ours / best['analytic']:.3f}   (goal >= 0.9)")
    print(f"ours / oracle  {ours / best['oracle']:.3f}")
    print(f"ours / uniform  {ours / results['uniform']['freshness']:.3f}   (goal > 1)")
    print(f"ours / proportional  {ours / results['proportional']['freshness']:.3f}")
    print(f"\nload {os.getloadavg()[0]:.1f}; crawls' output in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

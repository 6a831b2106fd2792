"""Focus under politeness: live crawls of docweb through its proxy, harvest and pages/s.

    .venv/bin/python bench/live_focus.py [--max-pages 150] [--delays 0.25 1.0]
                                         [--slacks 1.0 0.5 0.2] [--parallel 6]

Replayed crawls (``bench/harvest.py``) are sequential: every server is always ready, so they
measure the order and nothing else.  A real crawl waits ``FOCUS_DELAY`` between requests to a
server, and the scheduler hands out the best URL among the servers that may be contacted now.
With ``FOCUS_SLACK`` = 1 that is any idle server's best URL, however poor; with a smaller slack
an idle server's URL is taken only if its value is at least ``(1 - slack)`` times the best URL
waiting on a busy server, else the crawl waits for that server.  Lower slack: better pages per
page fetched, fewer pages per second.

docweb's server (``../shared/docweb/serve.py``) is started on a free loopback port; every crawl
is ``scrapy crawl topic`` through it as an http(s) proxy, robots.txt obeyed, one connection per
server, on docweb's six topics from the examples and from the neighbours.  Per configuration
(strategy, delay, slack): relevant pages found (docweb's judge, counted as its ``simulate.py``
counts them: score >= 0.15, seeds excluded), pages, seconds from the first to the last page,
pages/s, and relevant pages per minute -- summed over the topics.  Several crawls run at once
(``--parallel``): they share the server, not their politeness.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from harvest import _count, docweb_data, docweb_dir, docweb_server  # noqa: E402

TASKS = {"examples": "from_examples", "neighbors": "from_neighbors"}


def crawl(proxy: str, out: Path, keywords: str, seeds: Path, strategy: str, delay: float,
          slack: float, max_pages: int) -> dict:
    env = {**os.environ, "http_proxy": proxy, "https_proxy": proxy,
           "SCRAPY_SETTINGS_MODULE": "settings", "PYTHONPATH": str(ROOT)}
    env.pop("no_proxy", None)
    env.pop("NO_PROXY", None)
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"keywords={keywords}",
           "-a", f"seeds={seeds}", "-a", f"strategy={strategy}", "-a", f"max_pages={max_pages}",
           "-s", f"FOCUS_DELAY={delay}", "-s", f"FOCUS_SLACK={slack}", "-s", "LOG_LEVEL=INFO",
           "-s", f"LOG_FILE={out.with_suffix('.log')}", "-O", str(out)]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"crawl failed ({proc.returncode}): {out}\n{proc.stderr[-2000:]}")
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines() if line.strip()]
    rows.sort(key=lambda r: r.get("order") or 0)
    stamps = [datetime.fromisoformat(r["fetched_at"]).timestamp() for r in rows]
    span = max(stamps) - min(stamps) if len(stamps) > 1 else 0.0
    return {"urls": [r["url"] for r in rows], "span": span, "wall": time.monotonic() - t0}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--max-pages", type=int, default=150)
    p.add_argument("--delays", type=float, nargs="+", default=[0.25, 1.0])
    p.add_argument("--slacks", type=float, nargs="+", default=[1.0, 0.5, 0.2],
                   help="FOCUS_SLACK values for the learned order (best-first runs at 1.0)")
    p.add_argument("--strategies", nargs="+", default=["best-first", "learned"])
    p.add_argument("--parallel", type=int, default=6)
    args = p.parse_args()

    sys.path.insert(0, str(docweb_dir()))
    import serve  # docweb's URL mapper

    site = serve.load_site(str(docweb_data() / "hosts.json"))
    topics = json.loads((docweb_data() / "topics.json").read_text("utf-8"))
    urls = topics["urls"]
    configs = [(s, d, sl) for d in args.delays for s in args.strategies
               for sl in (args.slacks if s == "learned" else [1.0])]
    work = Path(tempfile.mkdtemp(prefix="live-focus-"))
    jobs = []
    for t in topics["topics"]:
        for task, key in TASKS.items():
            seeds = [s if isinstance(s, str) else s["url"] for s in t["seeds"][key]]
            seed_file = work / f"{t['id']}-{task}.txt"
            seed_file.write_text("\n".join(seeds) + "\n")
            for strategy, delay, slack in configs:
                out = work / f"{t['id']}-{task}-{strategy}-d{delay}-s{slack}.jsonl"
                jobs.append((t, task, seeds, seed_file, strategy, delay, slack, out))
    print(f"{len(jobs)} live crawls of {args.max_pages} pages, {args.parallel} at a time; "
          f"work in {work}", file=sys.stderr)
    results: dict[tuple, list] = {}
    t_all = time.monotonic()
    with docweb_server() as proxy, ThreadPoolExecutor(args.parallel) as pool:
        futures = {pool.submit(crawl, proxy, out, t["keywords"], seed_file, strategy, delay,
                               slack, args.max_pages): (t, task, seeds, strategy, delay, slack)
                   for t, task, seeds, seed_file, strategy, delay, slack, out in jobs}
        for i, fut in enumerate(futures, 1):
            t, task, seeds, strategy, delay, slack = futures[fut]
            res = fut.result()
            score = {urls[k]: s for k, s in t["ranking"]}
            rel = {u for u, s in score.items() if s >= 0.15}
            pages = [site.canonical(u) or u for u in res["urls"]]
            found = _count(pages, rel, seeds, [len(pages)])[0]
            results.setdefault((task, strategy, delay, slack), []).append(
                (found, len(pages), res["span"]))
            print(f"  [{i}/{len(jobs)}] {task}/{t['id']} {strategy} delay={delay} "
                  f"slack={slack}: {found} relevant in {len(pages)} pages, "
                  f"{res['span']:.0f} s", file=sys.stderr)
    print(f"\nLive crawls of docweb through its proxy, MAX_PAGES={args.max_pages}, one "
          f"connection per server, robots.txt obeyed; sums over 6 topics "
          f"({time.monotonic() - t_all:.0f} s in all)")
    print(f"{'task':10s} {'strategy':11s} {'delay':>5s} {'slack':>5s} {'relevant':>8s} "
          f"{'pages':>6s} {'seconds':>8s} {'pages/s':>7s} {'rel/min':>7s}")
    for (task, strategy, delay, slack), rows in sorted(results.items()):
        found = sum(r[0] for r in rows)
        pages = sum(r[1] for r in rows)
        secs = sum(r[2] for r in rows)
        print(f"{task:10s} {strategy:11s} {delay:5.2f} {slack:5.2f} {found:8d} {pages:6d} "
              f"{secs:8.0f} {pages / secs if secs else 0:7.2f} "
              f"{60 * found / secs if secs else 0:7.1f}")
    print("seconds: first to last page of each crawl, summed; pages/s = pages / seconds.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

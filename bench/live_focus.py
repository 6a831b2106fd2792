"""Focus under politeness: live crawls of docweb through its proxy, relevant pages per minute.

    .venv/bin/python bench/live_focus.py [--max-pages 300] [--delays 1.0]
        [--slacks adaptive 0.5] [--strategies best-first learned] [--parallel 4]
        [--topics ID ...] [--tasks examples neighbors] [--topic-defs bench/heldout.def.json]
        [--repeat N] [--within 45] [--seconds 120] [--out results.json] [--set NAME=VALUE ...]
        [--told]

Replayed crawls (``bench/harvest.py``) are sequential: every server is always ready, so they
measure the order and nothing else.  A real crawl waits ``FOCUS_DELAY`` between requests to a
server, and the scheduler hands out the best URL among the servers that may be contacted now.
With ``FOCUS_SLACK`` = 1 that is any idle server's best URL, however poor; with a smaller slack
an idle server's URL is taken only if its value is at least ``(1 - slack)`` times the best URL
waiting on a busy server, else the crawl waits for that server.  Lower slack: better pages per
page fetched, fewer pages per second.  ``adaptive`` in ``--slacks`` leaves ``FOCUS_SLACK``
unset and sets ``FOCUS_SLACK_ADAPTIVE``: the crawl chooses its slack as it goes.

docweb's server (``../shared/docweb/serve.py``) is started on a free loopback port; every crawl
is ``scrapy crawl topic`` through it as an http(s) proxy, robots.txt obeyed, one connection per
server, on docweb's six topics (or ``--topic-defs``' topics, judged and seeded by docweb's
``topics.py`` as ``bench/harvest.py`` does) from the examples and from the neighbours.  Each
crawl is repeated ``--repeat`` times.  Per crawl: relevant pages found (docweb's judge, counted
as its ``simulate.py`` counts them: score >= 0.15, seeds excluded), pages, seconds from the first
to the last page.  Printed: per configuration the sums over topics (relevant per page, pages/s,
relevant per minute, and the ratio of relevant per minute to best-first's from the same runs);
per topic each configuration's relevant per minute (mean, min-max over repeats) and its ratio to
best-first's split into the order's part (relevant per page) and the waiting's (pages/s), and
the learned order's slack and verdict on whether the seeds are examples.  Under the sums, each
configuration's pages on the topic's servers (those holding a page docweb judges relevant) and
its relevant pages a page there: at one page a server a delay, a crawl bounded by time gains
on another only by its choice among those servers' pages, or by reaching them sooner.
Relevant per minute over a whole crawl favours a crawl that finds little and ends early, so a
crawl bounded by time (``CLOSESPIDER_TIMEOUT``) is also judged as such: the relevant pages
among those fetched in its first ``--within`` seconds (``rel@Ns``; a run that ended sooner
counts what it found, and the runs that did are counted under the table).  With ``--seconds``
rel@ is also given against a *polite oracle*: docweb's oracle bound by the same politeness, each
server giving one page per delay, the truly best waiting page of each server at each tick (and
what the same oracle finds ordering by keyword cosine instead, a perfect link model's share).
Several crawls run at once (``--parallel``): they share the server, not their politeness.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from harvest import (_count, data_dir, docweb_data, docweb_dir, docweb_server,  # noqa: E402, I001
                     topics_from, Oracle)

TASKS = {"examples": "from_examples", "neighbors": "from_neighbors"}
BASE = "best-first"
ADAPTIVE = "adaptive"
# the crawl's own figures about its slack and its verdict on the seeds, read back from its
# log's stats dump
_STAT = re.compile(r"'(focus/slack[\w/]*|focus/seeds_are_examples)': ([-\d.e]+)")


def crawl(proxy: str, out: Path, keywords: str, seeds: Path, strategy: str, delay: float,
          slack: str, max_pages: int, extra: list[str], seconds: float | None = None) -> dict:
    env = {**os.environ, "http_proxy": proxy, "https_proxy": proxy,
           "SCRAPY_SETTINGS_MODULE": "settings", "PYTHONPATH": str(ROOT)}
    env.pop("no_proxy", None)
    env.pop("NO_PROXY", None)
    if slack == ADAPTIVE:
        slack_settings = ["-s", "FOCUS_SLACK_ADAPTIVE=True"]
    elif slack:
        slack_settings = ["-s", f"FOCUS_SLACK={slack}", "-s", "FOCUS_SLACK_ADAPTIVE=False"]
    else:  # the order's default
        slack_settings = []
    if strategy == "learned":
        slack_settings += [a for kv in extra for a in ("-s", kv)]
    if seconds:  # a crawl bounded by time, every strategy alike
        slack_settings += ["-s", f"CLOSESPIDER_TIMEOUT={seconds:g}"]
    log = out.with_suffix(".log")
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", f"keywords={keywords}",
           "-a", f"seeds={seeds}", "-a", f"strategy={strategy}", "-a", f"max_pages={max_pages}",
           "-s", f"FOCUS_DELAY={delay}", *slack_settings, "-s", "LOG_LEVEL=INFO",
           "-s", f"LOG_FILE={log}", "-O", str(out)]
    t0 = time.monotonic()
    err = out.with_suffix(".err")
    with open(err, "wb") as stderr:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=stderr)
        # the crawl's own CPU time (the crawls run at once share the machine, not their CPU)
        _, status, usage = os.wait4(proc.pid, 0)
    returncode = proc.returncode = os.waitstatus_to_exitcode(status)
    if returncode != 0:
        tail = err.read_text("utf-8", errors="replace")[-2000:]
        raise RuntimeError(f"crawl failed ({returncode}): {out}\n{tail}")
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines() if line.strip()]
    rows.sort(key=lambda r: r.get("order") or 0)
    stamps = [datetime.fromisoformat(r["fetched_at"]).timestamp() for r in rows]
    span = max(stamps) - min(stamps) if len(stamps) > 1 else 0.0
    stats = {k: float(v) for k, v in _STAT.findall(log.read_text("utf-8", errors="replace"))}
    return {"urls": [r["url"] for r in rows], "span": span, "wall": time.monotonic() - t0,
            "stats": stats, "offsets": [s - min(stamps) for s in stamps],
            "cpu": usage.ru_utime + usage.ru_stime}


def _seeds(topic: dict, task: str) -> list[str]:
    """A docweb topic's seed URLs for ``task`` (seeds are URLs or ``{"url": ...}``)."""
    return [s if isinstance(s, str) else s["url"] for s in topic["seeds"][TASKS[task]]]


def _label(strategy: str, slack: str) -> str:
    return strategy if not slack else f"{strategy}:{slack}"


def _rate(found: float, secs: float) -> float:
    return 60 * found / secs if secs else 0.0


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def summarise(results: list[dict], oracle: dict[tuple[str, str], int] | None = None,
              seconds: float = 45.0,
              polite: dict[tuple[str, str, float], tuple[int, int]] | None = None) -> str:
    """Tables of the runs: sums per configuration, then per topic, paired with best-first.
    ``oracle``: (task, topic) -> relevant pages docweb's oracle finds in as many pages from the
    same seeds; a crawl's relevant pages are then also given as a ratio of it.  ``seconds``:
    the runs' ``within`` figures count the relevant pages fetched in their first that many.
    ``polite``: (task, topic, delay) -> relevant pages the oracle, and the keyword oracle, find
    in those seconds when each server gives one page per delay; rel@ is then also given as a
    ratio of the oracle's."""
    lines: list[str] = []
    tasks = sorted({r["task"] for r in results})
    for delay in sorted({r["delay"] for r in results}):
        for task in tasks:
            rows = [r for r in results if r["task"] == task and r["delay"] == delay]
            labels = list(dict.fromkeys(r["config"] for r in rows))
            topics = list(dict.fromkeys(r["topic"] for r in rows))
            sums: dict[str, tuple[int, int, float]] = {}
            within = {label: sum(r["within"] for r in rows if r["config"] == label)
                      for label in labels}
            per: dict[tuple[str, str], list[dict]] = {}
            for r in rows:
                per.setdefault((r["config"], r["topic"]), []).append(r)
            for label in labels:
                mine = [r for r in rows if r["config"] == label]
                sums[label] = (sum(r["relevant"] for r in mine), sum(r["pages"] for r in mine),
                               sum(r["seconds"] for r in mine))
            base = sums.get(BASE)
            lines.append(f"\n{task}, delay {delay:g} s, {len(topics)} topics, sums over "
                         f"topics and repeats")
            repeats = {label: len({r["repeat"] for r in rows if r["config"] == label})
                       for label in labels}
            best = sum(oracle.get((task, t), 0) for t in topics) if oracle else 0
            if best:
                lines.append(f"oracle: {best} relevant pages in as many pages a run, summed "
                             f"over topics; 'x oracle' = relevant a run / that; 'behind page' = "
                             f"topics under 0.9x best-first's relevant pages")
            in_time, by_kw = (sum(polite.get((task, t, delay), (0, 0))[k] for t in topics)
                              for k in (0, 1)) if polite else (0, 0)
            if in_time:
                lines.append(f"polite oracle: {in_time} relevant pages in {seconds:g} s a run "
                             f"(one page a server every {delay:g} s; by keyword cosine "
                             f"{by_kw}), summed over topics; 'x polite' = rel@{seconds:g}s a "
                             f"run / the oracle's")
            lines.append(f"{'config':22s} {'relevant':>8s} {'pages':>6s} {'seconds':>8s} "
                         f"{'rel/page':>8s} {'pages/s':>7s} {'rel/min':>7s} {'vs BF':>6s} "
                         f"{'behind':>6s}" + (f" {'x oracle':>8s} {'behind page':>11s}"
                                              if best else "")
                         + f" {'rel@' + format(seconds, 'g') + 's':>8s} {'vs BF':>6s} "
                           f"{'behind':>6s}" + (f" {'x polite':>8s}" if in_time else ""))
            for label in labels:
                found, pages, secs = sums[label]
                behind = sum(1 for t in topics if _topic(per, label, t)[0]
                             < _topic(per, BASE, t)[0]) if base else 0
                lines.append(
                    f"{label:22s} {found:8d} {pages:6d} {secs:8.0f} "
                    f"{found / pages if pages else 0:8.3f} {pages / secs if secs else 0:7.2f} "
                    f"{_rate(found, secs):7.1f} "
                    f"{_ratio(_rate(found, secs), _rate(base[0], base[2])) if base else '-':>6s}"
                    f" {behind if base else '-':>6}" + (
                        f" {found / repeats[label] / best:7.2f}x "
                        f"{_behind(per, label, topics, 'relevant', 0.9) if base else '-':>11}"
                        if best else "")
                    + f" {within[label]:8d} "
                      f"{_ratio(within[label], within[BASE]) if base else '-':>6s} "
                      f"{_behind(per, label, topics, 'within') if base else '-':>6}"
                    + (f" {within[label] / repeats[label] / in_time:7.2f}x" if in_time else ""))
            on_hosts = {label: sum(r.get("on_topic_hosts", 0) for r in rows
                                   if r["config"] == label) for label in labels}
            if any(on_hosts.values()):
                # in a crawl bounded by time, the servers holding the topic give at most a page
                # per delay each: an order gains there only by its choice among their pages
                lines.append("pages on the topic's servers (those holding a page docweb judges "
                             "relevant), their share of the pages, x best-first's; relevant a "
                             "page there")
                for label in labels:
                    n, pages = on_hosts[label], sums[label][1]
                    lines.append(f"  {label:22s} {n:6d} {n / pages if pages else 0:6.2f} "
                                 f"{_ratio(n, on_hosts[BASE]) if base else '-':>6s} "
                                 f"{sums[label][0] / n if n else 0:8.3f}")
            cpu = {label: sum(r.get("cpu", 0.0) for r in rows if r["config"] == label)
                   for label in labels}
            if any(cpu.values()):
                # a crawl bounded by time that spends more CPU a page fetches fewer pages on a
                # busy machine: its servers wait for the reactor, not for their delay
                lines.append("the crawl process's CPU seconds, CPU ms a page, x best-first's "
                             "a page; pages x best-first's")
                for label in labels:
                    pages = sums[label][1]
                    per_page = cpu[label] / pages if pages else 0.0
                    base_page = cpu[BASE] / base[1] if base and base[1] else 0.0
                    lines.append(f"  {label:22s} {cpu[label]:8.1f} {1000 * per_page:7.1f} "
                                 f"{_ratio(per_page, base_page) if base else '-':>6s} "
                                 f"{_ratio(pages, base[1]) if base else '-':>6s}")
            ended = sum(1 for r in rows if r["seconds"] < seconds)
            if ended:
                lines.append(f"({ended} run(s) ended within {seconds:g} s: rel@ counts all "
                             f"they found)")
            lines.append("per topic: relevant/min mean (min-max over repeats); vs BF = ratio "
                         "of pooled rel/min = order (rel/page) x wait (pages/s)")
            for t in topics:
                for label in labels:
                    rate, lo, hi, rpp, pps = _topic(per, label, t)
                    cell = f"{t:14s} {label:22s} {rate:6.1f} ({lo:5.1f}-{hi:5.1f})"
                    if base and label != BASE:
                        b = _topic(per, BASE, t)
                        cell += (f"  vs BF {_ratio(rate, b[0]):>6s} = order "
                                 f"{_ratio(rpp, b[3]):>6s} x wait {_ratio(pps, b[4]):>6s}")
                    cell += f"  rel@{seconds:g}s " + str(sum(r["within"]
                                                          for r in per.get((label, t), [])))
                    slack = [r["stats"].get("focus/slack") for r in per.get((label, t), [])]
                    if any(s is not None for s in slack):
                        cell += "  slack " + ",".join(f"{s:.2f}" for s in slack if s is not None)
                    verdicts = [r["stats"].get("focus/seeds_are_examples")
                                for r in per.get((label, t), [])]
                    if any(v is not None for v in verdicts):
                        cell += "  examples " + ",".join("yes" if v else "no" for v in verdicts
                                                         if v is not None)
                    lines.append(cell)
    return "\n".join(lines)


def _behind(per: dict, label: str, topics: list[str], field: str, share: float = 1.0) -> int:
    """Topics where ``label``'s pooled ``field`` (relevant pages: "relevant", or those of the
    first seconds: "within") is under ``share`` times best-first's."""
    def found(config: str, t: str) -> int:
        return sum(r[field] for r in per.get((config, t), []))
    return sum(1 for t in topics if found(label, t) < share * found(BASE, t))


def _topic(per: dict, label: str, topic: str) -> tuple[float, float, float, float, float]:
    """Pooled rel/min, min and max over repeats, rel/page and pages/s of one topic's runs."""
    runs = per.get((label, topic), [])
    if not runs:
        return (0.0, 0.0, 0.0, 0.0, 0.0)
    found = sum(r["relevant"] for r in runs)
    pages = sum(r["pages"] for r in runs)
    secs = sum(r["seconds"] for r in runs)
    each = [_rate(r["relevant"], r["seconds"]) for r in runs]
    return (_rate(found, secs), min(each), max(each), found / pages if pages else 0.0,
            pages / secs if secs else 0.0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--max-pages", type=int, default=300)
    p.add_argument("--delays", type=float, nargs="+", default=[1.0])
    p.add_argument("--slacks", nargs="+", default=[ADAPTIVE, "0.5"],
                   help="for the learned order: FOCUS_SLACK values, 'adaptive' (the crawl "
                        "adapts it) or 'default' (nothing set); best-first runs at its default")
    p.add_argument("--strategies", nargs="+", default=[BASE, "learned"])
    p.add_argument("--topics", nargs="+", help="topic ids (default: all)")
    p.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    p.add_argument("--topic-defs", type=Path,
                   help="topic definitions in place of docweb's (e.g. bench/heldout.def.json)")
    p.add_argument("--repeat", type=int, default=1, help="crawls per topic and configuration")
    p.add_argument("--parallel", type=int, default=4)
    p.add_argument("--within", type=float, metavar="SECONDS",
                   help="also count each run's relevant pages in its first SECONDS (rel@)")
    p.add_argument("--seconds", type=float, metavar="SECONDS",
                   help="bound every crawl by time too (CLOSESPIDER_TIMEOUT), and count rel@ "
                        "within it unless --within says otherwise")
    p.add_argument("--out", type=Path, help="write every run's figures here (JSON)")
    p.add_argument("--set", nargs="+", default=[], metavar="NAME=VALUE",
                   help="Scrapy settings for the learned order's crawls")
    p.add_argument("--told", action="store_true",
                   help="tell the learned order that the examples task's seeds are examples "
                        "(FOCUS_EXAMPLES=True, as -a examples=true), as a user who has example "
                        "pages would; bench/harvest.py's replays always do")
    args = p.parse_args()
    if args.within is None:
        args.within = args.seconds or 45.0

    sys.path.insert(0, str(docweb_dir()))
    import serve  # docweb's URL mapper

    site = serve.load_site(str(docweb_data() / "hosts.json"))
    topic_dir = topics_from(args.topic_defs, data_dir()) if args.topic_defs else docweb_data()
    topics = json.loads((topic_dir / "topics.json").read_text("utf-8"))
    chosen = [t for t in topics["topics"] if not args.topics or t["id"] in args.topics]
    if args.topics and len(chosen) != len(args.topics):
        p.error(f"unknown topic among {args.topics}: {[t['id'] for t in topics['topics']]}")
    urls = topics["urls"]
    configs = [(s, d, "" if sl == "default" else sl) for d in args.delays
               for s in args.strategies for sl in (args.slacks if s == "learned" else [""])]
    work = Path(tempfile.mkdtemp(prefix="live-focus-"))
    jobs = []
    for rep in range(args.repeat):
        for t in chosen:
            for task in args.tasks:
                seeds = _seeds(t, task)
                seed_file = work / f"{t['id']}-{task}.txt"
                seed_file.write_text("\n".join(seeds) + "\n")
                for strategy, delay, slack in configs:
                    out = work / f"{t['id']}-{task}-{strategy}-d{delay}-s{slack}-r{rep}.jsonl"
                    jobs.append((t, task, seeds, seed_file, strategy, delay, slack, rep, out))
    print(f"{len(jobs)} live crawls of {args.max_pages} pages, {args.parallel} at a time; "
          f"work in {work}", file=sys.stderr)
    results: list[dict[str, Any]] = []
    t_all = time.monotonic()
    with docweb_server() as proxy, ThreadPoolExecutor(args.parallel) as pool:
        futures = {pool.submit(crawl, proxy, out, t["keywords"], seed_file, strategy, delay,
                               slack, args.max_pages,
                               args.set + (["FOCUS_EXAMPLES=True"]
                                           if args.told and task == "examples" else []),
                               args.seconds):
                   (t, task, seeds, strategy, delay, slack, rep)
                   for t, task, seeds, seed_file, strategy, delay, slack, rep, out in jobs}
        for i, fut in enumerate(futures, 1):
            t, task, seeds, strategy, delay, slack, rep = futures[fut]
            res = fut.result()
            score = {urls[k]: s for k, s in t["ranking"]}
            rel = {u for u, s in score.items() if s >= 0.15}
            pages = [site.canonical(u) or u for u in res["urls"]]
            found = _count(pages, rel, seeds, [len(pages)])[0]
            early = sum(1 for s in res["offsets"] if s <= args.within)
            within = _count(pages[:early], rel, seeds, [early])[0] if early else 0
            topic_hosts = {urlsplit(u).hostname for u in rel}
            on_topic_hosts = sum(1 for u in pages if urlsplit(u).hostname in topic_hosts)
            results.append({"topic": t["id"], "task": task, "strategy": strategy,
                            "slack": slack, "config": _label(strategy, slack), "delay": delay,
                            "repeat": rep, "relevant": found, "pages": len(pages),
                            "seconds": round(res["span"], 2), "within": within,
                            "on_topic_hosts": on_topic_hosts, "stats": res["stats"],
                            "cpu": round(res["cpu"], 2)})
            print(f"  [{i}/{len(jobs)}] {task}/{t['id']} {_label(strategy, slack)} "
                  f"delay={delay} #{rep}: {found} relevant in {len(pages)} pages, "
                  f"{res['span']:.0f} s", file=sys.stderr)
    print(f"Live crawls of docweb through its proxy, MAX_PAGES={args.max_pages}, one "
          f"connection per server, robots.txt obeyed, "
          + (f"at most {args.seconds:g} s a crawl, " if args.seconds else "")
          + f"{args.repeat} run(s) each "
          f"({time.monotonic() - t_all:.0f} s in all); seconds: first to last page")
    oracle = Oracle(docweb_dir())
    best = {(task, t["id"]): oracle.found(t, _seeds(t, task), [args.max_pages])[0]
            for t in chosen for task in args.tasks}
    # a crawl bounded by time is measured against the oracle bound by the same politeness
    polite = {(task, t["id"], d): (oracle.found_polite(t, _seeds(t, task), args.seconds, d),
                                   oracle.found_polite(t, _seeds(t, task), args.seconds, d,
                                                       keywords=True))
              for t in chosen for task in args.tasks for d in args.delays} if args.seconds else {}
    print(summarise(results, best, args.within, polite))
    if args.out:
        args.out.write_text(json.dumps({"max_pages": args.max_pages, "repeat": args.repeat,
                                        "within": args.within,
                                        "topic_defs": str(args.topic_defs or ""),
                                        "oracle": {f"{task}/{t}": n
                                                   for (task, t), n in best.items()},
                                        "polite_oracle": {f"{task}/{t}/{d:g}": n for
                                                          (task, t, d), n in polite.items()},
                                        "runs": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

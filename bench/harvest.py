"""Strategies compared on real pages: docweb's 6 topics, Pant's two tasks, replayed crawls.

    .venv/bin/python bench/harvest.py [--max-pages 1000] [--seeds 0 1 2] [--jobs 2]
        [--leave-one-out] [--baseline DIR] [--topic-defs bench/heldout.def.json]

1. **Repository** (once, cached in ``$FOCUS_BENCH_DATA`` or ``~/.cache/focuscrawl-bench``):
   docweb's server (``../shared/docweb/serve.py``) is started on a free loopback port and
   crawled breadth-first through it as an http(s) proxy by the real topic spider, robots.txt
   obeyed, 0.01 s between requests to a server, every response recorded into
   ``docweb.warc.gz`` (``python -m focuscrawl.evaluation record``).  Seeds: every host's index
   page and every topic's seed pages.
2. **Judge**: docweb's corpus, cut down to the pages the WARC holds, with docweb's relevance
   scores (SMART ltc over the description, Snowball stems) and its ``Site.canonical`` URL map.
   Targets: the relevant robots-allowed pages other than the examples.
3. **Crawls**: breadth-first, cho, cho-distance, best-first (N=1), best-n-first (N=256) and
   distiller, for every topic, from the examples and from the neighbours, replayed from the
   WARC through ``scrapy crawl topic`` (strict order, one request at a time), MAX_PAGES each;
   best-n-first once per random seed (the others draw no random numbers).
   ``--topic-defs FILE`` puts topics of one's own in place of docweb's six: docweb's
   ``topics.py`` judges and seeds them over the same corpus (a held-out check of defaults
   chosen on the six; ``bench/heldout.def.json`` holds six such topics).
4. **Tables** of every metric (mean ± s.e. across topics) and whether the papers' findings
   hold here, decided by the numbers below and nothing else.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import heapq
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from protego import Protego

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from focuscrawl.evaluation.compare import (  # noqa: E402
    CompareResult,
    TopicSpec,
    _slug,
    compare,
    load_repository,
    load_topics,
    record,
    report,
)
from focuscrawl.evaluation.metrics import fetched_urls, read_crawl  # noqa: E402
from focuscrawl.evaluation.repository import Repository  # noqa: E402

STRATEGIES = ["breadth-first", "cho", "cho-distance", "best-first", "best-n-first:n=256",
              "distiller", "learned"]
N1, N256 = "best-first", "best-n-first:n=256"
LEARNED = "learned"
BUDGETS = (100, 250, 500, 1000)
SIM_TASKS = {"examples": "from_examples", "neighbors": "from_neighbors"}
KW_ORACLE = "keyword-oracle"


def data_dir() -> Path:
    return Path(os.environ.get("FOCUS_BENCH_DATA") or Path.home() / ".cache/focuscrawl-bench")


def docweb_dir() -> Path:
    return Path(os.environ.get("DOCWEB_DIR") or ROOT.parent / "shared" / "docweb")


def docweb_data() -> Path:
    return Path(os.environ.get("DOCWEB_DATA") or Path.home() / ".cache/docweb")


def topics_from(defs: Path, data: Path) -> Path:
    """A docweb data directory whose ``topics.json`` docweb's ``topics.py`` made from ``defs``
    (ground truth and both seed sets, as for its own topics), beside links to the corpus and
    hosts: :func:`docweb_data` then points there.  Made again when ``defs`` changed."""
    source = docweb_data()
    text = defs.read_bytes()
    target = data / f"topics-{defs.stem}-{zlib.crc32(text):08x}"
    if not (target / "topics.json").exists():
        target.mkdir(parents=True, exist_ok=True)
        for name in ("corpus.jsonl.gz", "hosts.json"):
            link = target / name
            if not link.exists():
                link.symlink_to(source / name)
        # run with docweb's own data directory, whose .venv has its stemmer
        env = {**os.environ, "DOCWEB_DATA": str(source)}
        subprocess.run([sys.executable, str(docweb_dir() / "topics.py"), "--defs", str(defs),
                        "--corpus", str(target / "corpus.jsonl.gz"),
                        "--hosts", str(target / "hosts.json"),
                        "--out", str(target / "topics.json")], check=True, env=env)
    return target


def docweb_hosts(data: Path) -> dict[str, dict]:
    """docweb's served hosts (``hosts.json``): each one's index page and robots.txt."""
    return json.loads((data / "hosts.json").read_text("utf-8"))["hosts"]


def seed_urls(docweb: Path, topics_path: Path) -> list[str]:
    """Every served host's index page, then every topic's seeds (so both tasks start inside)."""
    hosts = docweb_hosts(docweb)
    urls = [f"https://{h}{v['index']}" for h, v in hosts.items() if v.get("index")]
    for topics in load_topics(topics_path).values():
        for t in topics:
            urls += t.seeds
    return list(dict.fromkeys(urls))


@contextlib.contextmanager
def docweb_server(log: Path | None = None) -> Iterator[str]:
    """docweb's server on a free loopback port; yields its proxy URL, stops it after."""
    tmp = Path(tempfile.mkdtemp(prefix="docweb-bench-"))
    port_file = tmp / "port"
    cmd = [sys.executable, str(docweb_dir() / "serve.py"), "--port", "0", "--port-file",
           str(port_file), "--log", str(log or tmp / "access.log")]
    with open(tmp / "server.txt", "wb") as err:
        server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                                  stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("docweb server did not start: "
                                   + (tmp / "server.txt").read_text(errors="replace"))
            time.sleep(0.1)  # waiting for the server to write its port: polling, not a timing
        yield f"http://127.0.0.1:{port_file.read_text().strip()}"
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def record_repository(warc: Path, *, delay: float, force: bool) -> None:
    """Serve docweb on a free port and crawl it into ``warc`` through the proxy."""
    if warc.exists() and not force:
        # replays move with the recording (which pages a crawl can fetch): its size is printed
        # so that two runs' figures can be told apart when they replayed different ones
        meta = Path(f"{warc}.json")
        pages = json.loads(meta.read_text("utf-8")).get("pages") if meta.exists() else None
        print(f"repository: {warc}, {pages if pages is not None else 'unknown number of'} "
              "pages (cached; --force-record records it again)", file=sys.stderr)
        return
    log = Path(tempfile.mkdtemp(prefix="docweb-log-")) / "access.log"
    with docweb_server(log) as proxy:
        seeds = seed_urls(docweb_data(), docweb_data() / "topics.json")
        record(seeds, warc, proxy=proxy, delay=delay, force=True)
    if log.exists():
        shutil.copy(log, f"{warc}.access.log")  # the server's view, for serve.py --analyze
    shutil.rmtree(log.parent, ignore_errors=True)


def verdict(p: dict) -> str:
    """Holds when the mean difference is positive and more topics agree than disagree."""
    mean, se = p["mean"], p["se"]
    if math.isnan(mean):
        return "no data"
    if p["wins"] == p["losses"] == 0:
        return f"no difference on any of the {p['n']} topics"
    if mean > 0 and p["wins"] > p["losses"]:
        word = "holds"
    elif mean < 0 and p["losses"] > p["wins"]:
        word = "does NOT hold (reversed)"
    else:
        word = "mixed"
    weak = "" if math.isnan(se) or abs(mean) > 2 * se else ", within 2 s.e."
    return (f"{word}: Δ = {mean:+.3g} ± {se:.2g}, better on {p['wins']}/{p['n']} topics, "
            f"worse on {p['losses']}{weak}")


def findings(result: CompareResult) -> str:
    """The seeds' claims, checked one by one with paired differences per topic."""
    tasks = list(result.config["tasks"])
    lines = ["== Do the papers' findings hold on docweb?"]
    lines.append("Cho et al.: the distance-aware crawler finds hot pages sooner "
                 "(metric: mean % of hot pages crawled over k = 1..K, and % at K/4)")
    for task in tasks:
        for other in ("cho", "breadth-first"):
            for metric in ("hot_auc", "hot_pct_q"):
                p = result.paired(task, metric, "cho-distance", other)
                lines.append(f"  [{task}] cho-distance vs {other}, {metric}: {verdict(p)}")
    lines.append("Pant et al.: N=256 covers more top pages than N=1 (static coverage, mean over "
                 "n = 1..500, and at n = 100)")
    for task in tasks:
        for metric in ("static_lexical_auc", "static_linkage_auc", "static_lexical_100",
                       "static_linkage_100"):
            p = result.paired(task, metric, N256, N1)
            lines.append(f"  [{task}] {N256} vs {N1}, {metric}: {verdict(p)}")
    if "neighbors" in tasks:
        lines.append("Pant et al.: breadth-first is worst from the neighbours (vs N=1 and "
                     "N=256: static coverage and recall of the targets)")
        for metric in ("static_lexical_auc", "static_linkage_auc", "recall"):
            for other in (N1, N256):
                p = result.paired("neighbors", metric, other, "breadth-first")
                lines.append(f"  [neighbors] {other} vs breadth-first, {metric}: {verdict(p)}")
            order = sorted(((result.value("neighbors", s, metric)[0], s)
                            for s in result.config["strategies"]), reverse=True)
            lines.append(f"    ranking by {metric} (all six): "
                         + " > ".join(f"{s} {v:.2f}" for v, s in order))
    return "\n".join(lines)


def leave_one_out(tasks: dict[str, list[TopicSpec]]) -> tuple[dict[str, list[TopicSpec]],
                                                                 dict[str, str]]:
    """Each topic once per seed, with that seed left out (``<id>-without-<k>``), and the map
    from those ids back to the topics'.

    Why: from the neighbours, which host a crawl settles on early decides most of a topic's
    count, so two variants of an order can swap one topic's 80 for 54 and another's 3 for 26:
    with six crawls a task the sum moves by more than most changes are worth.  Five crawls a
    topic from different starts tell a change that helps from one that moved a coin.
    """
    out: dict[str, list[TopicSpec]] = {}
    base: dict[str, str] = {}
    for task, specs in tasks.items():
        out[task] = []
        for t in specs:
            if len(t.seeds) < 2:  # nothing to leave out: crawled as it is
                out[task].append(t)
                continue
            for k in range(len(t.seeds)):
                variant = dataclasses.replace(
                    t, id=f"{t.id}-without-{k + 1}",
                    seeds=[u for j, u in enumerate(t.seeds) if j != k])
                out[task].append(variant)
                base[variant.id] = t.id
    return out, base


def found_table(result: CompareResult, repo: Repository, out_dir: Path, docweb: Path,
                threshold: float = 0.15, tasks: dict[str, list[TopicSpec]] | None = None,
                base: dict[str, str] | None = None, baseline: Path | None = None) -> str:
    """Relevant pages found in the first K pages, per strategy, beside docweb's oracle.

    Counted as ``../shared/docweb/simulate.py`` counts them (judge score >= threshold, seeds
    excluded, each page once), so the oracle's numbers and the crawls' are comparable.  The
    oracle orders the frontier by each target's true relevance: a perfect link predictor.
    The keyword oracle (``KW_ORACLE``) orders it the same way by each target's cosine with
    the topic's keywords (``simulate.py``'s ``cosine_kw``): a perfect predictor of what the
    crawl can see of a page without the topic's description.  The two apart tell a link
    model's loss (a crawl below the keyword oracle) from what keywords cannot tell (the
    keyword oracle below the oracle).
    ``tasks``/``base``: the crawls' own topics (seeds) when they are not docweb's, e.g.
    :func:`leave_one_out`'s, and their topics' ids.  ``baseline``: another run's results
    directory (say, the previous code's) whose crawls of the same topics and strategies are
    counted too, crawl by crawl beside these.
    """
    oracle = Oracle(docweb)
    sim, urls, idx, graph, texts = oracle.sim, oracle.urls, oracle.idx, oracle.graph, oracle.texts
    blocked = oracle.blocked
    data = docweb_data()
    topics = json.loads((data / "topics.json").read_text("utf-8"))["topics"]
    budgets = [b for b in BUDGETS if b <= result.config["max_pages"]]
    found: dict[tuple[str, str, str], list[int]] = {}  # (task, strategy, topic) -> per budget
    before: dict[tuple[str, str, str], list[int]] = {}  # the same, in ``baseline``
    by_id = {t["id"]: t for t in topics}
    cosines: dict[str, Callable[[int], float]] = {}  # keywords -> the keyword oracle's scores
    for task, key in SIM_TASKS.items():
        if task not in result.config["tasks"]:
            continue
        if tasks is None:  # docweb's own topics and seeds
            crawled_topics = [(t["id"], t, [s if isinstance(s, str) else s["url"]
                                            for s in t["seeds"][key]]) for t in topics]
        else:
            crawled_topics = [(spec.id, by_id[(base or {}).get(spec.id, spec.id)], spec.seeds)
                              for spec in tasks[task]]
        for tid, t, seeds in crawled_topics:
            score = {urls[i]: s for i, s in t["ranking"]}
            rel = {u for u, s in score.items() if s >= threshold}
            seed_ids = [idx[s] for s in seeds]
            found[(task, "oracle", tid)] = oracle.found(t, seeds, budgets, threshold)
            by_keywords = cosines.get(t["keywords"])
            if by_keywords is None:  # leave-one-out crawls a topic's keywords five times
                by_keywords = cosines[t["keywords"]] = _keyword_cosines(sim, t["keywords"],
                                                                        texts)
            order = sim.crawl(lambda p, c, kw=by_keywords: kw(c), seed_ids, graph,
                              max(budgets), blocked)
            found[(task, KW_ORACLE, tid)] = _count([urls[i] for i in order], rel, seeds,
                                                   budgets)
            for label in result.config["strategies"]:
                where = Path("crawls", _slug(task), _slug(tid), _slug(label))
                counts = _crawl_counts(out_dir / where, repo, rel, seeds, budgets)
                if counts is not None:
                    found[(task, label, tid)] = counts
                if baseline is not None:
                    counts = _crawl_counts(baseline / where, repo, rel, seeds, budgets)
                    if counts is not None:
                        before[(task, label, tid)] = counts
    lines = ["== Relevant pages found in the first K pages (sum over topics), and as a ratio "
             "of the oracle (a perfect link predictor, docweb's simulate.py); the keyword "
             "oracle predicts each target's keyword cosine perfectly instead"]
    names = ["oracle", KW_ORACLE, *result.config["strategies"]]
    for task in result.config["tasks"]:
        lines.append(f"[{task}]  " + "  ".join(f"{'@' + str(b):>12}" for b in budgets))
        total = {n: [sum(v[k] for (tk, s, _), v in found.items() if tk == task and s == n)
                     for k in range(len(budgets))] for n in names}
        for n in names:
            cells = [f"{x:5d} {x / o:5.2f}x" if o else f"{x:5d}    - "
                     for x, o in zip(total[n], total["oracle"], strict=True)]
            lines.append(f"  {n:22s}" + "  ".join(cells))
        k500 = budgets.index(500) if 500 in budgets else len(budgets) - 1
        lines.append(f"  per topic @{budgets[k500]}: " + ", ".join(
            f"{tid}: " + " ".join(f"{n.split(':')[0]} {found[(task, n, tid)][k500]}"
                                  for n in ("oracle", KW_ORACLE, LEARNED, N1)
                                  if (task, n, tid) in found)
            for tid in dict.fromkeys(t for (tk, _, t) in found if tk == task)))
        seeds_only = [n for n in result.config["strategies"]
                      if n.split(":")[0] != LEARNED]
        if LEARNED in names and seeds_only:
            k500 = budgets.index(500) if 500 in budgets else len(budgets) - 1
            best = max(seeds_only, key=lambda n: total[n][k500])
            lines.append(f"  paired per topic, {LEARNED} - {best} (the best seed strategy "
                         f"at @{budgets[k500]}), and {LEARNED} - {N1}:")
            for other in dict.fromkeys([best, N1]):
                for k, b in enumerate(budgets):
                    diffs = [found[(task, LEARNED, tid)][k] - found[(task, other, tid)][k]
                             for (tk, s, tid) in found if tk == task and s == LEARNED
                             and (task, other, tid) in found]
                    if diffs:
                        lines.append(f"    vs {other:20s} @{b:<5d} "
                                     + " ".join(f"{d:+d}" for d in diffs)
                                     + f"   better on {sum(d > 0 for d in diffs)}/{len(diffs)},"
                                     f" worse on {sum(d < 0 for d in diffs)}")
        if before:
            lines.extend(_against_baseline(task, found, before, budgets))
    return "\n".join(lines)


def _crawl_counts(crawls: Path, repo: Repository, rel: set[str], seeds: list[str],
                  budgets: list[int]) -> list[int] | None:
    """Relevant pages in one (task, topic, strategy)'s crawls at each budget, averaged over
    its random seeds; None if it has no crawl there."""
    counts = []
    for path in sorted(crawls.glob("seed*.jsonl")):
        pages = [repo.pages[i].url if i is not None else u for u, i in
                 ((u, repo.resolve(u)) for u in fetched_urls(read_crawl(path)))]
        counts.append(_count(pages, rel, seeds, budgets))
    if not counts:
        return None
    return [round(sum(c[k] for c in counts) / len(counts)) for k in range(len(budgets))]


def _against_baseline(task: str, found: dict[tuple[str, str, str], list[int]],
                      before: dict[tuple[str, str, str], list[int]],
                      budgets: list[int]) -> list[str]:
    """Per strategy, this run's sums beside the baseline's over the crawls both have, and in
    how many of those crawls this run is ahead and behind: with leave-one-out, thirty crawls a
    task tell a change that helps from one that moved which host a crawl settled on."""
    lines = ["  against --baseline (the crawls both runs have):"]
    for label in dict.fromkeys(s for (tk, s, _) in before if tk == task):
        pairs = [(found[key], old) for key, old in before.items()
                 if key[0] == task and key[1] == label and key in found]
        if not pairs:
            continue
        here = [sum(new[k] for new, _ in pairs) for k in range(len(budgets))]
        there = [sum(old[k] for _, old in pairs) for k in range(len(budgets))]
        k = len(budgets) - 1
        ahead = sum(new[k] > old[k] for new, old in pairs)
        behind = sum(new[k] < old[k] for new, old in pairs)
        lines.append(f"    {label:22s} {' / '.join(map(str, here))} against "
                     f"{' / '.join(map(str, there))}; at @{budgets[k]} ahead in {ahead} of "
                     f"{len(pairs)} crawls, behind in {behind}")
    return lines


def _keyword_cosines(sim: Any, keywords: str, texts: list[str]) -> Callable[[int], float]:
    """Page number -> its cosine with ``keywords`` (``simulate.py``'s), computed once a page."""
    cache: dict[int, float] = {}

    def cosine(page: int) -> float:
        value = cache.get(page)
        if value is None:
            value = cache[page] = sim.cosine_kw(keywords, texts[page])
        return value
    return cosine


class Oracle:
    """docweb's oracle (``simulate.py``'s crawl ordered by each target's true relevance) over
    its corpus graph, robots-disallowed pages skipped as a crawl skips them."""

    def __init__(self, docweb: Path) -> None:
        import importlib.util

        spec = importlib.util.spec_from_file_location("docweb_simulate", docweb / "simulate.py")
        assert spec is not None and spec.loader is not None
        self.sim = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.sim)
        data = docweb_data()
        self.urls, self.idx, self.graph, self.texts, self.titles = self.sim.load(
            str(data / "corpus.jsonl.gz"))
        self.blocked = robots_blocked(self.urls, docweb_hosts(data))
        self.hosts: list[str] | None = None

    def found(self, topic: dict, seeds: list[str], budgets: list[int],
              threshold: float = 0.15) -> list[int]:
        """Relevant pages the oracle finds from ``seeds`` in the first K pages, K in
        ``budgets``, counted as :func:`_count` counts a crawl's."""
        urls = self.urls
        score = {urls[i]: s for i, s in topic["ranking"]}
        rel = {u for u, s in score.items() if s >= threshold}
        order = self.sim.crawl(lambda p, c: score.get(urls[c], 0.0),
                               [self.idx[s] for s in seeds], self.graph, max(budgets),
                               self.blocked)
        return _count([urls[i] for i in order], rel, seeds, budgets)

    def found_polite(self, topic: dict, seeds: list[str], seconds: float, delay: float,
                     threshold: float = 0.15, keywords: bool = False) -> int:
        """Relevant pages the oracle finds from ``seeds`` in ``seconds`` when, as in a polite
        crawl, each server gives one page per ``delay``: at every tick each host with links
        waiting fetches its truly best one (no latency, links usable at the next tick).
        ``keywords``: best by the page's keyword cosine instead (the keyword oracle)."""
        urls = self.urls
        score = {i: s for i, s in topic["ranking"]}
        rel = {urls[i] for i, s in topic["ranking"] if s >= threshold}
        if self.hosts is None:
            self.hosts = [urlsplit(u).hostname or "" for u in urls]
        value = (_keyword_cosines(self.sim, topic["keywords"], self.texts) if keywords
                 else lambda page: score.get(page, 0.0))
        order = polite_crawl(value, [self.idx[s] for s in seeds], self.graph, self.hosts,
                             int(seconds / delay) + 1, self.blocked)
        return _count([urls[i] for i in order], rel, seeds, [len(order)])[0]


def polite_crawl(value: Callable[[int], float], seeds: list[int], graph: list[list[int]],
                 hosts: list[str], ticks: int, blocked: set[int]) -> list[int]:
    """Pages in the order a crawl fetches them that takes, at each of ``ticks`` ticks, the
    highest-``value`` waiting page of every host (one page a host a tick)."""
    seen: set[int] = set()
    waiting: dict[str, list[tuple[float, int, int]]] = {}
    fetched: list[int] = []

    def push(page: int) -> None:
        if page not in seen and page not in blocked:
            seen.add(page)
            heapq.heappush(waiting.setdefault(hosts[page], []),
                           (-value(page), len(seen), page))
    for s in seeds:
        push(s)
    for _ in range(ticks):
        got = [heapq.heappop(q)[2] for q in waiting.values() if q]
        if not got:
            break
        fetched.extend(got)
        for page in got:
            for child in graph[page]:
                push(child)
    return fetched


def robots_blocked(urls: list[str], hosts: dict[str, dict]) -> set[int]:
    """The pages docweb's robots.txt files disallow (the oracle skips them, as a crawl does)."""
    rules = {h: Protego.parse(v["robots"]) for h, v in hosts.items() if v.get("robots")}
    return {i for i, u in enumerate(urls)
            if (r := rules.get(urlsplit(u).hostname or "")) and not r.can_fetch(u, "*")}


def _count(pages: list[str], rel: set[str], seeds: list[str], budgets: list[int]) -> list[int]:
    """Distinct relevant non-seed pages among the first b pages, for each budget b."""
    seen: set[str] = set()
    out, n, k = [], 0, 0
    for b in budgets:
        while k < min(b, len(pages)):
            u = pages[k]
            k += 1
            if u in rel and u not in seeds and u not in seen:
                seen.add(u)
                n += 1
        out.append(n)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--max-pages", type=int, default=1000,
                   help="MAX_PAGES per crawl (default 1000: 96 crawls in about 30 min on 2 "
                        "cores; a docweb page carries ~200-340 links, each costing the spider, "
                        "its middlewares and the scheduler ~0.1 ms)")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2],
                   help="random seeds (only best-n-first uses them)")
    p.add_argument("--jobs", type=int, default=2, help="crawls at the same time")
    p.add_argument("--strategies", nargs="+", default=STRATEGIES)
    p.add_argument("--tasks", nargs="+", default=["examples", "neighbors"])
    p.add_argument("--out", help="results directory (default: DATA/harvest-K<max_pages>)")
    p.add_argument("--resume", action="store_true",
                   help="reuse crawls already in --out (default: crawl everything again)")
    p.add_argument("--leave-one-out", action="store_true",
                   help="crawl each topic once per seed, that seed left out (5 crawls a topic "
                        "and strategy instead of 1): a steadier comparison of two orders")
    p.add_argument("--baseline", type=Path,
                   help="another run's --out (the same tasks and strategies, say the previous "
                        "code's): its crawls are counted beside these, crawl by crawl")
    p.add_argument("--topic-defs", type=Path,
                   help="topics of your own (a JSON list of id, keywords, description, as "
                        "docweb's topics.def.json): judged and seeded by docweb's topics.py "
                        "over the same corpus, in place of its dev topics; held-out topics "
                        "tell whether an order's defaults carry over (bench/heldout.def.json)")
    p.add_argument("--record-delay", type=float, default=0.01)
    p.add_argument("--force-record", action="store_true")
    args = p.parse_args()

    t0 = time.monotonic()
    data = data_dir()
    data.mkdir(parents=True, exist_ok=True)
    warc = data / "docweb.warc.gz"
    record_repository(warc, delay=args.record_delay, force=args.force_record)
    t_record = time.monotonic() - t0
    if args.topic_defs is not None:
        os.environ["DOCWEB_DATA"] = str(topics_from(args.topic_defs, data))

    sys.path.insert(0, str(docweb_dir()))
    import serve  # docweb's server module: Site.canonical maps crawled URLs to corpus URLs

    site = serve.load_site(str(docweb_data() / "hosts.json"))
    repo = load_repository(docweb_data() / "corpus.jsonl.gz", canonical=site.canonical,
                           restrict_to=warc)
    print(f"judge: docweb corpus cut to the {len(repo)} pages the WARC holds", file=sys.stderr)
    tasks = load_topics(docweb_data() / "topics.json", args.tasks)
    base: dict[str, str] | None = None
    if args.leave_one_out:
        tasks, base = leave_one_out(tasks)
    out = Path(args.out) if args.out else data / f"harvest-K{args.max_pages}"
    t1 = time.monotonic()
    result = compare(repo, tasks, args.strategies, replay=warc, out_dir=out, seeds=args.seeds,
                     max_pages=args.max_pages, parallel=args.jobs, fresh=not args.resume)
    t_compare = time.monotonic() - t1
    print()
    print(f"docweb repository: {warc} ({len(repo)} judged pages); MAX_PAGES = {args.max_pages}; "
          f"seeds {args.seeds} (best-n-first only); {args.jobs} crawls at a time")
    print(report(result))
    print(findings(result))
    print()
    print(found_table(result, repo, out, docweb_dir(), tasks=tasks, base=base,
                      baseline=args.baseline))
    print()
    print(f"time: repository {t_record:.0f} s; {result.config['crawls']} replayed crawls in "
          f"{t_compare / 60:.1f} min (crawl subprocesses {result.config['crawl_seconds']:.0f} s "
          f"in all)")
    for name, path in result.files.items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

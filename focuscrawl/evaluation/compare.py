"""Record a repository, replay every strategy over it, judge and tabulate the crawls.

Cho et al. and Pant et al. evaluate crawl orders the same way: crawl a site once into a local
repository, run *virtual crawlers* over it (each sees only the pages it fetched), then score
their orders with omniscient metrics.  Here both crawls are the real thing: ``scrapy crawl
topic`` in a subprocess (one reactor per crawl, several crawls on several cores), recording with
``FOCUS_WARC`` and replaying with ``FOCUS_REPLAY`` through the full engine, FocusScheduler,
middlewares and spider.  No Scrapy import in this module: it builds command lines.

* :func:`record` -- a breadth-first crawl of a site (robots.txt obeyed, a small politeness delay)
  into a WARC; skipped when the WARC exists.
* :func:`compare` -- every (task, topic, strategy, random seed) replayed as the papers'
  sequential crawler (``FOCUS_STRICT_ORDER``, one request at a time, no delay), so a crawl's
  fetch order is a deterministic function of its seed; then :class:`Evaluation`'s curves per
  crawl, seeds averaged within a topic, mean and standard error across topics, written as CSV,
  JSON and PNG (:mod:`focuscrawl.evaluation.plots`).

A strategy is a spec string ``name[:param=value,...]``: lower-case params are spider arguments
(``best-n-first:n=256,max_buffer=256``), upper-case ones settings
(``distiller:FOCUS_DISTILLER_EVERY=20``); the spec is the strategy's label in tables and plots.
Only Best-N-First with N > 1 draws random numbers, so the other strategies run once and that
crawl stands for every seed (running them again would repeat it exactly).
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.robotparser
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from .metrics import Evaluation, fetched_urls, read_crawl
from .repository import Page, Repository
from .warcindex import WarcIndex

REPLAY_HANDLERS = {
    "http": "focuscrawl.seam.replay.ReplayDownloadHandler",
    "https": "focuscrawl.seam.replay.ReplayDownloadHandler",
}
WARC_RECORDER = "focuscrawl.seam.output.warc.WarcRecorder"
WARC_RECORDER_ORDER = 990  # above RetryMiddleware: sees download failures
STRATEGY_NAMES = ("breadth-first", "cho", "cho-distance", "best-first", "best-n-first",
                  "distiller", "learned")
SPIDER_PARAMS = ("n", "max_buffer", "reorder", "allowed_domains")
PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY")
STATIC_POINTS = (100, 500)  # static coverage reported at these top-n sizes (Pant: n <= 500)

Progress = Callable[[str], None]


def _print(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------ specifications
@dataclass(frozen=True)
class StrategySpec:
    """A strategy with its parameters, e.g. ``best-n-first:n=256``."""

    name: str
    params: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, spec: str | StrategySpec) -> StrategySpec:
        if isinstance(spec, StrategySpec):
            return spec
        name, _, rest = spec.strip().partition(":")
        name = name.strip().lower()
        if name not in STRATEGY_NAMES:
            raise ValueError(f"unknown strategy {name!r}; choose one of: "
                             f"{', '.join(STRATEGY_NAMES)}")
        params: list[tuple[str, str]] = []
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"strategy parameter {part!r} in {spec!r} is not name=value")
            key = key.strip()
            if key.islower() and key not in SPIDER_PARAMS:
                raise ValueError(f"unknown spider parameter {key!r} in {spec!r}: use one of "
                                 f"{', '.join(SPIDER_PARAMS)} or an UPPER_CASE setting")
            params.append((key, value.strip()))
        return cls(name, tuple(params))

    @property
    def label(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}:" + ",".join(f"{k}={v}" for k, v in self.params)

    @property
    def randomized(self) -> bool:
        """Does the crawl depend on the random seed?  Only Best-N-First's batch shuffle does."""
        return self.name == "best-n-first" and dict(self.params).get("n", "").strip() != "1"

    def spider_args(self) -> dict[str, str]:
        return {"strategy": self.name} | {k: v for k, v in self.params if k.islower()}

    def settings(self) -> dict[str, str]:
        return {k: v for k, v in self.params if not k.islower()}


@dataclass
class TopicSpec:
    """A topic as the crawler sees it (keywords, seeds) and as the judge does (the rest)."""

    id: str
    keywords: str
    description: str
    seeds: list[str]
    targets: list[str] = field(default_factory=list)
    threshold: float = 0.15
    judge_scores: dict[str, float] | None = None  # url -> score; None: SMART ltc computed here
    examples: bool = False  # the seeds are on-topic examples (Pant's task 1): told to the crawler

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TopicSpec:
        seeds = d.get("seeds") or []
        if isinstance(seeds, str):
            seeds = [s.strip() for s in seeds.split(",") if s.strip()]
        keywords = d["keywords"]
        if not isinstance(keywords, str):
            keywords = ", ".join(keywords)
        return cls(
            id=str(d["id"]), keywords=keywords, description=str(d.get("description") or keywords),
            seeds=list(seeds), targets=list(d.get("targets") or []),
            threshold=float(d.get("threshold", 0.15)), judge_scores=d.get("judge_scores"),
            examples=bool(d.get("examples", False)),
        )


DOCWEB_TASKS = {"examples": "from_examples", "neighbors": "from_neighbors"}


def load_topics(path: str | os.PathLike[str], tasks: Sequence[str] | None = None
                ) -> dict[str, list[TopicSpec]]:
    """Topics per task from a topics file.

    A JSON list of ``{id, keywords, description, seeds, targets[, threshold, judge_scores]}`` is
    one task, ``"default"``.  docweb's ``topics.json`` gives Pant's two tasks, ``examples`` (start
    from the relevant examples) and ``neighbors`` (start a few links away); in both the targets
    are the robots-allowed relevant pages other than the examples (docweb's own definition in
    ``targets_within_d_links``), and the judge's scores are docweb's.
    """
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if isinstance(doc, list):
        if tasks and list(tasks) != ["default"]:
            raise ValueError(f"{path} is a plain topics list: it has one task, 'default'")
        return {"default": [TopicSpec.from_dict(d) for d in doc]}
    if not (isinstance(doc, dict) and "topics" in doc and "urls" in doc):
        raise ValueError(f"{path}: neither a JSON list of topics nor docweb's topics.json")
    return docweb_topics(doc, tasks or list(DOCWEB_TASKS))


def robots_allowed(rules: Mapping[str, str]) -> Callable[[str], bool]:
    """A ``url -> allowed`` test from ``{host: robots.txt text}`` (docweb's ``robots.rules``)."""
    parsers = {}
    for host, text in rules.items():
        rp = urllib.robotparser.RobotFileParser()
        rp.parse(text.splitlines())
        parsers[host.lower()] = rp

    def allowed(url: str) -> bool:
        rp = parsers.get((urlsplit(url).hostname or "").lower())
        return rp is None or rp.can_fetch("*", url)

    return allowed


def docweb_topics(doc: Mapping[str, Any], tasks: Sequence[str]) -> dict[str, list[TopicSpec]]:
    urls = doc["urls"]
    allowed = robots_allowed((doc.get("robots") or {}).get("rules") or {})
    out: dict[str, list[TopicSpec]] = {}
    for task in tasks:
        if task not in DOCWEB_TASKS:
            raise ValueError(f"unknown docweb task {task!r}; choose from {', '.join(DOCWEB_TASKS)}")
        specs = []
        for t in doc["topics"]:
            threshold = float(t["relevant"]["threshold"])
            scores = {urls[i]: float(s) for i, s in t["ranking"]}
            examples = list(t["seeds"]["from_examples"])
            raw_seeds = t["seeds"][DOCWEB_TASKS[task]]
            seeds = [s["url"] if isinstance(s, dict) else s for s in raw_seeds]
            targets = [u for u, s in scores.items()
                       if s >= threshold and u not in examples and allowed(u)]
            specs.append(TopicSpec(
                id=t["id"], keywords=t["keywords"], description=t["description"], seeds=seeds,
                targets=targets, threshold=threshold, judge_scores=scores,
                examples=task == "examples",
            ))
        out[task] = specs
    return out


# ------------------------------------------------------------------------------ repositories
def load_repository(
    path: str | os.PathLike[str],
    *,
    canonical: Callable[[str], str | None] | None = None,
    restrict_to: str | os.PathLike[str] | None = None,
) -> Repository:
    """A Repository from a WARC (``.warc``/``.warc.gz``) or JSON lines (docweb's corpus).

    ``restrict_to`` (a WARC) keeps only the pages that WARC answers with a 2xx: judged against
    a corpus, a replayed crawl can only ever reach what the recording crawl fetched.
    """
    path = os.fspath(path)
    name = path.lower()
    if name.endswith((".warc", ".warc.gz")):
        repo = Repository.from_warc(path, canonical=canonical)
    else:
        repo = Repository.from_jsonl(path, canonical=canonical)
    if restrict_to is None:
        return repo
    keep: set[int] = set()
    with WarcIndex(restrict_to) as idx:
        for entry in idx:
            if 200 <= entry.status < 300:
                i = repo.resolve(entry.url)
                if i is not None:
                    keep.add(i)
    pages: list[Page] = [p for i, p in enumerate(repo.pages) if i in keep]
    return Repository(pages, redirects=repo.redirects, canonical=canonical)


# ------------------------------------------------------------------------------ subprocesses
def project_root() -> Path:
    """The directory holding the ``focuscrawl``, ``spiders`` and ``settings`` packages."""
    return Path(__file__).resolve().parents[2]


def scrapy_env(*, proxy: str | None = None) -> dict[str, str]:
    """Environment of a crawl subprocess: the project's settings, proxies only when asked."""
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    env.setdefault("SCRAPY_SETTINGS_MODULE", "settings")
    root = str(project_root())
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    if proxy:
        env["http_proxy"] = env["https_proxy"] = proxy
    return env


def project_setting(name: str, default: Any = None) -> Any:
    """A setting of the project's settings module (``SCRAPY_SETTINGS_MODULE``), read as Python."""
    module = importlib.import_module(os.environ.get("SCRAPY_SETTINGS_MODULE", "settings"))
    return getattr(module, name, default)


def crawl_command(
    *,
    keywords: str,
    seeds_file: str | os.PathLike[str],
    out: str | os.PathLike[str],
    spider_args: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    log_file: str | os.PathLike[str] | None = None,
) -> list[str]:
    """``python -m scrapy crawl topic -a ... -s ... -O out`` as an argument list."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic",
           "-a", f"keywords={keywords}", "-a", f"seeds={os.fspath(seeds_file)}"]
    for k, v in (spider_args or {}).items():
        cmd += ["-a", f"{k}={v}"]
    merged: dict[str, Any] = {"LOG_LEVEL": "INFO", "TELNETCONSOLE_ENABLED": "False",
                              "REMOTE_CONTROL_ENABLED": "False"}
    if log_file is not None:
        merged["LOG_FILE"] = os.fspath(log_file)
    merged.update(settings or {})
    for k, v in merged.items():
        if isinstance(v, (dict, list, bool)):
            v = json.dumps(v)
        cmd += ["-s", f"{k}={v}"]
    cmd += ["-O", f"{os.fspath(out)}:jsonlines"]
    return cmd


def replay_settings(replay: str | os.PathLike[str]) -> dict[str, Any]:
    """Cho's virtual crawler on the real stack: answers from the WARC, one fetch at a time in
    the frontier's order, no politeness delay (there is no server to spare).

    The private-address guard is off: nothing leaves the machine, and its DNS lookup of every
    recorded host (names that need not resolve offline) would wait for the resolver to give up,
    about 5 s per lookup, which made replays sit idle most of their time.
    """
    return {
        "FOCUS_REPLAY": os.path.abspath(os.fspath(replay)),
        "DOWNLOAD_HANDLERS": REPLAY_HANDLERS,
        "FOCUS_STRICT_ORDER": True,
        "CONCURRENT_REQUESTS": 1,
        "FOCUS_DELAY": 0,
        "FOCUS_BLOCK_PRIVATE": False,
    }


def _count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text("utf-8", "replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])


# ------------------------------------------------------------------------------ record
@dataclass
class RecordResult:
    warc: Path
    pages: int
    seconds: float
    cached: bool


def record(
    seeds: Sequence[str],
    out: str | os.PathLike[str],
    *,
    proxy: str | None = None,
    delay: float = 0.01,
    max_pages: int = 1_000_000,
    keywords: str = "repository",
    allowed_domains: Sequence[str] = (),
    settings: Mapping[str, Any] | None = None,
    force: bool = False,
    progress: Progress | None = _print,
    interval: float = 10.0,
) -> RecordResult:
    """Crawl from ``seeds`` breadth-first with the topic spider, recording a WARC at ``out``.

    Every page is kept whole (``FOCUS_MAX_PAGE_BYTES=0``: replayed crawls cut it at their own
    limit), robots.txt is obeyed, and each server gets ``delay`` seconds between requests.  The
    WARC is written under a temporary name and renamed when the crawl ends well, so an existing
    ``out`` is a complete repository and is reused unless ``force``.  A summary of the recording
    is kept next to it (``out`` + ``.json``).
    """
    out = Path(out)
    meta_path = Path(f"{out}.json")
    if out.exists() and not force:
        info = json.loads(meta_path.read_text("utf-8")) if meta_path.exists() else {}
        if progress:
            progress(f"repository {out} exists: reused (pass force to record it again)")
        return RecordResult(out, int(info.get("pages", 0)), float(info.get("seconds", 0)), True)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = out.parent / f".{out.name}.record"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    part = work / ("repository.warc.gz" if str(out).endswith(".gz") else "repository.warc")
    seeds_file = work / "seeds.txt"
    seeds_file.write_text("\n".join(seeds) + "\n", "utf-8")
    items = work / "pages.jsonl"
    middlewares = dict(project_setting("DOWNLOADER_MIDDLEWARES", {}) or {})
    middlewares[WARC_RECORDER] = WARC_RECORDER_ORDER
    args: dict[str, Any] = {"strategy": "breadth-first", "max_pages": max_pages}
    if allowed_domains:
        args["allowed_domains"] = ",".join(allowed_domains)
    cmd = crawl_command(
        keywords=keywords, seeds_file=seeds_file, out=items, spider_args=args,
        log_file=work / "crawl.log",
        settings={
            "FOCUS_WARC": str(part), "DOWNLOADER_MIDDLEWARES": middlewares,
            "FOCUS_DELAY": delay, "FOCUS_MAX_PAGE_BYTES": 0, "FOCUS_ROBOTSTXT_OBEY": True,
            "FOCUS_STRICT_ORDER": False, "FOCUS_MAX_BUFFER": 0, **(settings or {}),
        },
    )
    if progress:
        progress(f"recording {out} from {len(seeds)} seeds (breadth-first, delay {delay} s"
                 f"{', proxy ' + proxy if proxy else ''})")
    t0 = time.monotonic()
    with open(work / "stdout.txt", "wb") as stdout:
        proc = subprocess.Popen(cmd, env=scrapy_env(proxy=proxy), cwd=work, stdout=stdout,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        while True:
            try:
                proc.wait(timeout=interval)
                break
            except subprocess.TimeoutExpired:
                if progress:
                    pages = _count_lines(items)
                    rate = pages / max(time.monotonic() - t0, 1e-9)
                    progress(f"  recording: {pages} pages, {rate:.0f} pages/s")
    seconds = time.monotonic() - t0
    if proc.returncode != 0 or not part.exists():
        raise RuntimeError(f"recording crawl failed (exit {proc.returncode}); log tail:\n"
                           f"{_log_tail(work / 'crawl.log')}\n{_log_tail(work / 'stdout.txt')}")
    pages = _count_lines(items)
    os.replace(part, out)
    info = {"warc": str(out), "pages": pages, "seconds": round(seconds, 1), "seeds": list(seeds),
            "proxy": proxy, "delay": delay, "max_pages": max_pages, "command": cmd}
    meta_path.write_text(json.dumps(info, indent=1) + "\n", "utf-8")
    shutil.copy(work / "crawl.log", f"{out}.log")
    shutil.rmtree(work, ignore_errors=True)
    if progress:
        progress(f"recorded {pages} pages into {out} in {seconds:.0f} s")
    return RecordResult(out, pages, seconds, False)


# ------------------------------------------------------------------------------ replayed crawls
@dataclass
class Job:
    task: str
    topic: TopicSpec
    strategy: StrategySpec
    seed: int
    out: Path  # the crawl's JSON lines
    cmd: list[str]
    seconds: float = 0.0
    pages: int = 0
    cached: bool = False

    @property
    def name(self) -> str:
        return f"{self.task}/{self.topic.id}/{self.strategy.label}/seed={self.seed}"

    @property
    def tmp(self) -> Path:
        """Where the crawl writes its pages until it ends well."""
        return self.out.with_name(self.out.stem + ".tmp.jsonl")

    @property
    def log(self) -> Path:
        return self.out.with_suffix(".log")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"


def _fingerprint(job: Job) -> str:
    """What decides a crawl, for the cache: its arguments (not its log or output file), its
    seed URLs, and the replayed WARC's size and time."""
    keep = [a for a in job.cmd[1:-1] if not a.startswith(("LOG_FILE=", "LOG_LEVEL="))]
    keep += job.topic.seeds
    replay = next((a.split("=", 1)[1] for a in job.cmd if a.startswith("FOCUS_REPLAY=")), None)
    if replay and os.path.exists(replay):
        st = os.stat(replay)
        keep += [str(st.st_size), str(st.st_mtime_ns)]
    return hashlib.sha256("\0".join(keep).encode()).hexdigest()


def plan_jobs(
    tasks: Mapping[str, Sequence[TopicSpec]],
    strategies: Sequence[StrategySpec],
    *,
    replay: str | os.PathLike[str],
    out_dir: Path,
    seeds: Sequence[int] = (0,),
    max_pages: int = 1000,
    settings: Mapping[str, Any] | None = None,
) -> list[Job]:
    """One job per (task, topic, strategy, seed); non-random strategies get only seeds[0]."""
    jobs: list[Job] = []
    for task, topics in tasks.items():
        for topic in topics:
            seeds_file = out_dir / "seeds" / f"{_slug(task)}-{_slug(topic.id)}.txt"
            seeds_file.parent.mkdir(parents=True, exist_ok=True)
            seeds_file.write_text("\n".join(topic.seeds) + "\n", "utf-8")
            for strategy in strategies:
                for seed in (seeds if strategy.randomized else seeds[:1]):
                    out = (out_dir / "crawls" / _slug(task) / _slug(topic.id)
                           / _slug(strategy.label) / f"seed{seed}.jsonl").resolve()
                    out.parent.mkdir(parents=True, exist_ok=True)
                    job = Job(task, topic, strategy, seed, out, [])
                    job.cmd = crawl_command(
                        keywords=topic.keywords, seeds_file=seeds_file.resolve(), out=job.tmp,
                        spider_args={**strategy.spider_args(), "max_pages": max_pages,
                                     "seed": seed, **({"examples": "true"} if topic.examples
                                                      else {})},
                        settings={**replay_settings(replay), **(settings or {}),
                                  **strategy.settings()},
                        log_file=job.log,
                    )
                    jobs.append(job)
    return jobs


def run_job(job: Job) -> Job:
    """Run one replayed crawl (or reuse its output if the same command already produced it)."""
    meta_path = job.out.with_suffix(".json")
    fingerprint = _fingerprint(job)
    if job.out.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text("utf-8"))
        if meta.get("fingerprint") == fingerprint:
            job.seconds, job.pages, job.cached = meta["seconds"], meta["pages"], True
            return job
    tmp, log = job.tmp, job.log
    tmp.unlink(missing_ok=True)
    t0 = time.monotonic()
    proc = subprocess.run(job.cmd, env=scrapy_env(), cwd=job.out.parent, capture_output=True,
                          stdin=subprocess.DEVNULL)
    job.seconds = round(time.monotonic() - t0, 2)  # as cached: a rerun gives the same tables
    if proc.returncode != 0 or not tmp.exists():
        out = (proc.stdout + proc.stderr).decode("utf-8", "replace")[-2000:]
        raise RuntimeError(f"crawl {job.name} failed (exit {proc.returncode}):\n"
                           f"{_log_tail(log)}\n{out}")
    os.replace(tmp, job.out)
    job.pages = _count_lines(job.out)
    meta = {"fingerprint": fingerprint, "seconds": job.seconds, "pages": job.pages,
            "command": job.cmd}
    meta_path.write_text(json.dumps(meta, indent=1) + "\n", "utf-8")
    return job


def run_jobs(jobs: Sequence[Job], *, parallel: int = 2, progress: Progress | None = _print,
             interval: float = 30.0) -> list[Job]:
    """Run jobs ``parallel`` at a time; report each end, and a heartbeat while none ends."""
    total = len(jobs)
    done: list[Job] = []
    failures: list[str] = []
    t0 = time.monotonic()
    last = [time.monotonic()]
    stop = threading.Event()
    running: set[int] = set()
    lock = threading.Lock()

    def heartbeat() -> None:
        while not stop.wait(5.0):
            if progress and time.monotonic() - last[0] >= interval:
                with lock:
                    now = [jobs[i] for i in sorted(running)]
                live = ", ".join(f"{j.name} {_count_lines(j.tmp)} pages" for j in now)
                progress(f"  [{len(done)}/{total}] {time.monotonic() - t0:.0f} s, running: {live}")
                last[0] = time.monotonic()

    def work(i: int) -> Job:
        with lock:
            running.add(i)
        try:
            return run_job(jobs[i])
        finally:
            with lock:
                running.discard(i)

    beat = threading.Thread(target=heartbeat, daemon=True)
    beat.start()
    try:
        with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
            futures = {pool.submit(work, i): jobs[i] for i in range(total)}
            for fut in as_completed(futures):
                job = futures[fut]
                try:
                    fut.result()
                except Exception as exc:  # keep going: report every failure at the end
                    failures.append(str(exc))
                    if progress:
                        progress(f"  FAILED {job.name}")
                    continue
                done.append(job)
                last[0] = time.monotonic()
                if progress:
                    elapsed = time.monotonic() - t0
                    fresh = [j for j in done if not j.cached]
                    left = total - len(done) - len(failures)
                    eta = (elapsed / len(fresh) * left) if fresh else 0.0
                    how = "cached" if job.cached else f"{job.seconds:.1f} s"
                    progress(f"  [{len(done) + len(failures)}/{total}] {job.name}: "
                             f"{job.pages} pages, {how}; ETA {eta / 60:.1f} min")
    finally:
        stop.set()
    if failures:
        raise RuntimeError(f"{len(failures)} of {total} crawls failed:\n" + "\n".join(failures))
    return done


# ------------------------------------------------------------------------------ metrics
# Per-crawl numbers in tables: (key, header, description).
METRICS: tuple[tuple[str, str, str], ...] = (
    ("pages", "pages", "pages crawled (HTML pages the spider exported)"),
    ("harvest", "harvest", "harvest rate at the end: share of crawled pages the judge finds "
                           "relevant (score >= threshold)"),
    ("harvest_hot", "harvest hot", "share of crawled pages that are hot (Cho's rule)"),
    ("hot_pct_q", "hot% @K/4", "% of the repository's hot pages crawled after a quarter of "
                               "the page budget K"),
    ("hot_pct_h", "hot% @K/2", "% of hot pages crawled after half the budget"),
    ("hot_pct", "hot% @K", "% of hot pages crawled at the end (Cho)"),
    ("hot_auc", "hot% mean", "mean over k = 1..K of % hot pages crawled (area under Cho's "
                             "curve: higher = found sooner)"),
    ("recall", "recall", "recall of the targets at the end"),
    ("recall_auc", "recall mean", "mean over k = 1..K of target recall"),
    ("static_lexical_100", "lex@100", "static coverage: % of the top-100 pages by SMART ltc "
                                      "(lexical) crawled"),
    ("static_lexical_500", "lex@500", "% of the top-500 pages by SMART ltc crawled"),
    ("static_lexical_auc", "lex mean", "mean over n = 1..500 of lexical static coverage"),
    ("static_linkage_100", "link@100", "% of the top-100 pages by keywords + PageRank crawled"),
    ("static_linkage_500", "link@500", "% of the top-500 pages by keywords + PageRank crawled"),
    ("static_linkage_auc", "link mean", "mean over n = 1..500 of linkage static coverage"),
    ("mean_rank_lexical", "rank lex", "dynamic: mean lexical rank of the pages crawled (lower "
                                      "is better)"),
    ("mean_rank_linkage", "rank link", "dynamic: mean linkage rank of the pages crawled"),
    ("unknown", "unknown", "crawled URLs the repository does not hold"),
    ("seconds", "seconds", "wall time of the replayed crawl (subprocess)"),
)
METRIC_KEYS = tuple(k for k, _, _ in METRICS)

# Curves vs pages crawled (k) and vs top-n pages (static): (key, y label).
K_CURVES = {
    "harvest": "harvest rate (relevant)",
    "harvest_hot": "harvest rate (hot)",
    "hot_pct": "% hot pages crawled",
    "recall": "average recall of targets",
    "mean_rank_lexical": "average rank (lexical)",
    "mean_rank_linkage": "average rank (linkage)",
}
N_CURVES = {"static_lexical": "% crawled (lexical)", "static_linkage": "% crawled (linkage)"}
CARRY_ON = ("hot_pct", "recall")  # after a crawl ends early these stay at their last value


def _pad(curve: np.ndarray, length: int, carry: bool) -> np.ndarray:
    out = np.full(length, np.nan)
    m = min(len(curve), length)
    out[:m] = curve[:m]
    if carry and 0 < len(curve) < length:
        out[m:] = curve[m - 1]
    elif carry and len(curve) == 0:
        out[:] = 0.0
    return out


def _at(curve: np.ndarray, k: int) -> float:
    """Value after k pages (the last value if the crawl ended sooner); NaN for no pages."""
    if len(curve) == 0:
        return math.nan
    return float(curve[min(k, len(curve)) - 1])


def judge_crawl(ev: Evaluation, urls: Sequence[str], targets: Sequence[str], budget: int,
                max_n: int = 500) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """The table numbers and the curves of one crawl (a list of fetched URLs)."""
    n_static = min(max_n, len(ev.repo))
    k_curves = {
        "harvest": ev.harvest_rate(urls, "score"),
        "harvest_hot": ev.harvest_rate(urls, "hot"),
        "hot_pct": ev.hot_coverage(urls),
        "recall": ev.target_recall(urls, targets) if targets else np.zeros(len(urls)),
        "mean_rank_lexical": ev.dynamic_mean_rank(urls, "lexical"),
        "mean_rank_linkage": ev.dynamic_mean_rank(urls, "linkage"),
    }
    curves = {k: _pad(c, budget, k in CARRY_ON) for k, c in k_curves.items()}
    for name in ("lexical", "linkage"):
        curves[f"static_{name}"] = ev.static_coverage(urls, name, max_n=n_static)
    values: dict[str, float] = {
        "pages": float(len(urls)),
        "harvest": _at(k_curves["harvest"], len(urls)),
        "harvest_hot": _at(k_curves["harvest_hot"], len(urls)),
        "hot_pct_q": _at(k_curves["hot_pct"], max(1, budget // 4)),
        "hot_pct_h": _at(k_curves["hot_pct"], max(1, budget // 2)),
        "hot_pct": _at(k_curves["hot_pct"], len(urls)),
        "hot_auc": float(np.mean(curves["hot_pct"])) if budget else math.nan,
        "recall": _at(k_curves["recall"], len(urls)) if targets else math.nan,
        "recall_auc": float(np.mean(curves["recall"])) if targets and budget else math.nan,
        "mean_rank_lexical": _at(k_curves["mean_rank_lexical"], len(urls)),
        "mean_rank_linkage": _at(k_curves["mean_rank_linkage"], len(urls)),
        "unknown": float(sum(1 for u in urls if ev.repo.resolve(u) is None)),
    }
    for name in ("lexical", "linkage"):
        cov = curves[f"static_{name}"]
        for n in STATIC_POINTS:
            values[f"static_{name}_{n}"] = float(cov[min(n, len(cov)) - 1]) if len(cov) else 0.0
        values[f"static_{name}_auc"] = float(np.mean(cov)) if len(cov) else 0.0
    return values, curves


def _mean_se(values: Iterable[float]) -> tuple[float, float, int]:
    """Mean, standard error of the mean (NaN for fewer than 2) and count, NaNs left out."""
    v = np.asarray([x for x in values if not math.isnan(x)], dtype=np.float64)
    if v.size == 0:
        return math.nan, math.nan, 0
    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
    return float(v.mean()), se, int(v.size)


def _curve_mean_se(curves: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pointwise mean, standard error and count of curves (NaN: that crawl had ended)."""
    a = np.vstack(curves)
    with np.errstate(invalid="ignore", divide="ignore"):
        count = np.sum(~np.isnan(a), axis=0)
        mean = np.where(count > 0, np.nansum(a, axis=0) / np.maximum(count, 1), np.nan)
        dev = np.where(np.isnan(a), 0.0, a - mean) ** 2
        sd = np.sqrt(np.sum(dev, axis=0) / np.maximum(count - 1, 1))
        se = np.where(count > 1, sd / np.sqrt(np.maximum(count, 1)), np.nan)
    return mean, se, count


@dataclass
class CompareResult:
    """Everything :func:`compare` measured; ``summary`` rows are per (task, strategy)."""

    runs: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    curves: dict[str, dict[str, dict[str, dict[str, list[Any]]]]]
    per_topic: dict[tuple[str, str, str], dict[str, float]]  # (task, strategy, topic) -> values
    config: dict[str, Any]
    files: dict[str, str] = field(default_factory=dict)

    def value(self, task: str, strategy: str, metric: str) -> tuple[float, float, int]:
        for row in self.summary:
            if row["task"] == task and row["strategy"] == strategy:
                m = row["metrics"][metric]
                return m["mean"], m["se"], m["n"]
        raise KeyError((task, strategy))

    def paired(self, task: str, metric: str, a: str, b: str) -> dict[str, Any]:
        """``a - b`` per topic (seeds averaged): mean, s.e., and on how many topics a > b."""
        diffs = []
        for (t, s, topic), values in self.per_topic.items():
            if t == task and s == a:
                other = self.per_topic.get((task, b, topic))
                if other is not None:
                    diffs.append(values[metric] - other[metric])
        mean, se, n = _mean_se(diffs)
        return {"a": a, "b": b, "metric": metric, "mean": mean, "se": se, "n": n,
                "wins": sum(1 for d in diffs if d > 0), "losses": sum(1 for d in diffs if d < 0)}


def evaluate(
    repository: Repository,
    jobs: Sequence[Job],
    strategies: Sequence[StrategySpec],
    *,
    seeds: Sequence[int],
    max_pages: int,
    progress: Progress | None = _print,
) -> CompareResult:
    """Judge every crawl; average seeds within a topic, then mean ± s.e. across topics."""
    evaluations: dict[tuple[str, str], Evaluation] = {}
    runs: list[dict[str, Any]] = []
    # (task, strategy, topic) -> list of (values, curves) over seeds
    cells: dict[tuple[str, str, str], list[tuple[dict[str, float], dict[str, np.ndarray]]]]
    cells = defaultdict(list)
    t0 = time.monotonic()
    for job in jobs:
        key = (job.task, job.topic.id)
        ev = evaluations.get(key)
        if ev is None:
            ev = evaluations[key] = Evaluation(
                repository, job.topic.keywords, job.topic.description,
                threshold=job.topic.threshold, judge_scores=job.topic.judge_scores)
        urls = fetched_urls(read_crawl(job.out))
        values, crawl_curves = judge_crawl(ev, urls, job.topic.targets, max_pages)
        values["seconds"] = job.seconds
        run_seeds = seeds if not job.strategy.randomized else [job.seed]
        for seed in run_seeds:  # a deterministic crawl stands for every seed
            runs.append({"task": job.task, "topic": job.topic.id,
                         "strategy": job.strategy.label, "seed": seed,
                         "reused": seed != job.seed, **values})
        cells[(job.task, job.strategy.label, job.topic.id)].append((values, crawl_curves))
    if progress:
        progress(f"judged {len(jobs)} crawls in {time.monotonic() - t0:.1f} s")

    per_topic: dict[tuple[str, str, str], dict[str, float]] = {}
    topic_curves: dict[tuple[str, str, str], dict[str, np.ndarray]] = {}
    for cell, entries in cells.items():
        per_topic[cell] = {m: _mean_se(v[m] for v, _ in entries)[0] for m in METRIC_KEYS}
        names = entries[0][1].keys()
        topic_curves[cell] = {c: _curve_mean_se([cv[c] for _, cv in entries])[0] for c in names}

    summary: list[dict[str, Any]] = []
    curves: dict[str, dict[str, dict[str, dict[str, list[Any]]]]] = {}
    tasks = list(dict.fromkeys(job.task for job in jobs))
    for task in tasks:
        for spec in strategies:
            cells_here = [c for c in per_topic if c[0] == task and c[1] == spec.label]
            if not cells_here:
                continue
            metrics = {}
            for m in METRIC_KEYS:
                mean, se, n = _mean_se(per_topic[c][m] for c in cells_here)
                metrics[m] = {"mean": mean, "se": se, "n": n}
            summary.append({"task": task, "strategy": spec.label, "topics": len(cells_here),
                            "metrics": metrics})
            out: dict[str, dict[str, list[Any]]] = {}
            for name in list(K_CURVES) + list(N_CURVES):
                mean_c, se_c, n_c = _curve_mean_se([topic_curves[c][name] for c in cells_here])
                out[name] = {"mean": _jsonable(mean_c), "se": _jsonable(se_c),
                             "n": [int(x) for x in n_c]}
            curves.setdefault(task, {})[spec.label] = out
    config = {"strategies": [s.label for s in strategies], "seeds": list(seeds),
              "max_pages": max_pages, "repository_pages": len(repository),
              "tasks": {t: sorted({j.topic.id for j in jobs if j.task == t}) for t in tasks},
              "aggregation": "each topic's crawls averaged over seeds; mean and standard error "
                             "(sd / sqrt(topics)) across topics"}
    return CompareResult(runs, summary, curves, per_topic, config)


def _jsonable(a: np.ndarray, digits: int = 5) -> list[float | None]:
    return [None if math.isnan(x) else round(float(x), digits) for x in a]


def _clean(x: Any) -> Any:
    if isinstance(x, float):
        return None if math.isnan(x) else round(x, 6)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


# ------------------------------------------------------------------------------ output
def fmt(mean: float, se: float, digits: int = 3) -> str:
    if math.isnan(mean):
        return "-"
    if math.isnan(se):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f}±{se:.{digits}f}"


def format_table(result: CompareResult, task: str, metrics: Sequence[str],
                 digits: Mapping[str, int] | None = None) -> str:
    """A plain-text table: one row per strategy, ``mean±s.e.`` across topics per metric."""
    headers = {k: h for k, h, _ in METRICS}
    digits = digits or {}
    rows = [["strategy"] + [headers[m] for m in metrics]]
    for row in result.summary:
        if row["task"] != task:
            continue
        cells = [row["strategy"]]
        for m in metrics:
            v = row["metrics"][m]
            cells.append(fmt(v["mean"], v["se"], digits.get(m, 3)))
        rows.append(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(r, widths, strict=True))) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_outputs(result: CompareResult, out_dir: Path, *, plots: bool = True) -> dict[str, str]:
    """runs.csv (one row per crawl and seed), summary.csv, results.json and the PNG plots."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    runs_csv = out_dir / "runs.csv"
    with open(runs_csv, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["task", "topic", "strategy", "seed", "reused", *METRIC_KEYS])
        for r in result.runs:
            w.writerow([r["task"], r["topic"], r["strategy"], r["seed"], int(r["reused"]),
                        *(_csv_num(r[m]) for m in METRIC_KEYS)])
    files["runs_csv"] = str(runs_csv)
    summary_csv = out_dir / "summary.csv"
    with open(summary_csv, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["task", "strategy", "topics",
                    *(f"{m}_{s}" for m in METRIC_KEYS for s in ("mean", "se"))])
        for row in result.summary:
            w.writerow([row["task"], row["strategy"], row["topics"],
                        *(_csv_num(row["metrics"][m][s]) for m in METRIC_KEYS
                          for s in ("mean", "se"))])
    files["summary_csv"] = str(summary_csv)
    if plots:
        from .plots import plot_all

        for name, path in plot_all(result.curves, out_dir).items():
            files[name] = str(path)
    result.files = files
    results_json = out_dir / "results.json"
    files["results_json"] = str(results_json)
    doc = {"config": result.config, "metrics": {k: d for k, _, d in METRICS},
           "summary": result.summary, "runs": result.runs, "curves": result.curves,
           "files": files}
    results_json.write_text(json.dumps(_clean(doc), indent=1) + "\n", "utf-8")
    return files


def _csv_num(x: Any) -> Any:
    if isinstance(x, float):
        return "" if math.isnan(x) else f"{x:.6g}"
    return x


def compare(
    repository: Repository,
    tasks: Mapping[str, Sequence[TopicSpec]],
    strategies: Sequence[str | StrategySpec],
    *,
    replay: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    seeds: Sequence[int] = (0,),
    max_pages: int = 1000,
    parallel: int = 2,
    settings: Mapping[str, Any] | None = None,
    plots: bool = True,
    fresh: bool = False,
    progress: Progress | None = _print,
) -> CompareResult:
    """Replay every strategy for every task, topic and seed over ``replay``; judge the crawls
    against ``repository``; write runs.csv, summary.csv, results.json and plots to ``out_dir``.

    Crawls already in ``out_dir`` with the same command line, seed URLs and WARC are reused,
    so an interrupted comparison resumes where it stopped; ``fresh`` deletes them first (the
    cache cannot know that the crawler's code changed).
    """
    specs = [StrategySpec.parse(s) for s in strategies]
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"strategies given twice: {labels}")
    if not seeds:
        raise ValueError("give at least one random seed")
    out = Path(out_dir)
    if fresh:
        shutil.rmtree(out / "crawls", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    jobs = plan_jobs(tasks, specs, replay=replay, out_dir=out, seeds=seeds,
                     max_pages=max_pages, settings=settings)
    if progress:
        n_topics = sum(len(t) for t in tasks.values())
        progress(f"{len(jobs)} replayed crawls ({len(tasks)} task(s), {n_topics} topic runs, "
                 f"{len(specs)} strategies, seeds {list(seeds)}), {parallel} at a time, "
                 f"max_pages={max_pages}")
    run_jobs(jobs, parallel=parallel, progress=progress)
    result = evaluate(repository, jobs, specs, seeds=seeds, max_pages=max_pages,
                      progress=progress)
    result.config["replay"] = os.path.abspath(os.fspath(replay))
    result.config["crawls"] = len(jobs)
    result.config["crawl_seconds"] = round(sum(j.seconds for j in jobs if not j.cached), 1)
    write_outputs(result, out, plots=plots)
    return result


PANT_COLUMNS = ("static_lexical_100", "static_lexical_500", "static_linkage_100",
                "static_linkage_500", "recall", "mean_rank_lexical", "mean_rank_linkage")
CHO_COLUMNS = ("pages", "harvest", "harvest_hot", "hot_pct_q", "hot_pct_h", "hot_pct", "hot_auc")
DIGITS = {"pages": 0, "mean_rank_lexical": 0, "mean_rank_linkage": 0, "unknown": 0,
          "seconds": 1} | {k: 1 for k in METRIC_KEYS if k.startswith(("static_", "hot_pct",
                                                                         "hot_auc"))}


def report(result: CompareResult) -> str:
    """The headline tables of every task: Pant's metrics, then Cho's and the harvest rate."""
    parts = []
    for task in result.config["tasks"]:
        parts.append(f"== task: {task} (mean ± s.e. across {len(result.config['tasks'][task])}"
                     f" topics; seeds {result.config['seeds']}; K = {result.config['max_pages']}"
                     " pages)")
        parts.append("Pant: static coverage (% of top-n crawled), recall, dynamic mean rank")
        parts.append(format_table(result, task, PANT_COLUMNS, DIGITS))
        parts.append("Cho: harvest rate, % of hot pages crawled after K/4, K/2, K pages, mean")
        parts.append(format_table(result, task, CHO_COLUMNS, DIGITS))
        parts.append("")
    return "\n".join(parts)

"""Scale: crawl a synthetic web of millions of pages and watch pages/s and memory over time.

    .venv/bin/python bench/scale.py [--pages 200000] [--web 5000000] [--hosts 20000]

The web is a deterministic function of ``(seed, page id)``: no page is stored anywhere.  A
Scrapy download handler registered for ``http`` (``SyntheticWebHandler``) answers each request
for ``http://<word><host>.scale.test/<dir>/<page id>.html`` by generating that page's HTML on
the spot, so a crawl of hundreds of thousands of pages needs neither a network nor a disk:

* ``--web`` pages (default 5,000,000) on ``--hosts`` hosts (default 20,000) whose sizes follow
  a power law (a few hosts of 100,000+ pages, thousands of a few dozen);
* ``--clusters`` topical clusters (default 500), a host in one: each has its own vocabulary;
  2% of the clusters are *core* (their pages use the topic's keywords), 3% *related* (the
  topic's wider vocabulary, the keywords rarely), the rest are about something else;
* power-law out-degrees (Pareto, alpha 1.6, at least ``--links`` links, 10 by default: mean
  about 24, at most 300) plus 4 navigation links per page; 75% of the links stay on the host,
  17% go to another host of the same cluster, 8% anywhere; targets favour a host's first pages
  (power-law in-degrees); anchor texts use the target cluster's words.  ``--links 40`` queues
  35-45 new URLs a page, so that ``--until-queued 10000000`` (stop the crawl as Ctrl-C does once
  that many are queued) comes within a few hundred thousand pages.

The crawl is the real thing: ``scrapy crawl topic`` in a subprocess with the project's settings
and the default ``learned`` order, robots.txt obeyed (every host answers one), no feed file,
``FOCUS_DELAY`` = ``--delay`` (0 by default: 20,000 hosts make per-server delays rarely the
limit, and this bench measures the crawler, not the waiting), seeds on core hosts.  The
``ScaleSampler`` extension inside the crawl writes a sample every ``--every`` seconds: pages,
RSS (``/proc/self/status``), URLs queued and handed out, the seen-set's own bytes.  The bench
prints them as they come, then:

* the hot pages fetched (the order's harvest; ``--set NAME=VALUE`` passes a setting to the
  crawl, e.g. ``--set FOCUS_LEARN_RERANK=0`` to compare orders);
* pages/s over the first and the last 10% of the crawl, and their ratio (the goal: >= 0.8);
  the same per CPU second of the crawl process, which a loaded shared machine does not blur;
* bytes per queued URL and per seen URL (queued + handed out): the crawl process's RSS growth
  since the first sample divided by that count -- everything the crawl grew by, Scrapy's and
  the spider's memory included, is charged to the URLs (an upper bound);
* bytes per URL handed out in the seen-set alone (``Frontier.done``, measured on the structure);
* the same over the second half of the crawl only (marginal: without the start-up's fixed
  growth, the model's tables, Scrapy's warm-up), and the RSS 10,000,000 queued URLs would take
  at that marginal rate (the goal: <= 1.5 GB);
* the same goal per page fetched, over the last 10% of the pages: RSS growth per page and URLs
  queued per page, so the RSS at the page that brings the queue to 10,000,000 (once the spill
  holds the queue in memory flat, the growth left is per page, which the rate above charges to
  the queued URLs).
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TLD = ".scale.test"
KEYWORDS = ("glacier", "meltwater", "moraine")
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
_URL = re.compile(r"^/([a-z]+)/(\d+)\.html$")
_HOST = re.compile(r"^[a-z]+(\d+)" + re.escape(TLD) + "$")
_ROBOTS = b"User-agent: *\nDisallow: /private/\n"


def _words(rng: random.Random, n: int, syllables: tuple[int, int] = (2, 4)) -> list[str]:
    """``n`` distinct made-up words (no real word, so none is a keyword by accident)."""
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(*syllables))))
    return sorted(out)


class SyntheticWeb:
    """Pages, hosts and links as pure functions of (seed, page id); see the module docstring."""

    def __init__(self, *, seed: int = 0, pages: int = 5_000_000, hosts: int = 20_000,
                 clusters: int = 500, links: int = 10) -> None:
        if pages < hosts:
            raise ValueError("the web needs at least one page per host")
        self.seed, self.pages, self.hosts, self.clusters = seed, pages, hosts, clusters
        self.links = links  # the out-degrees' minimum (Pareto scale)
        rng = random.Random(seed)
        # host sizes: a power law, at least 1 page each, summing to `pages`
        weights = [(i + 1) ** -0.8 for i in range(hosts)]
        total = sum(weights)
        sizes = [max(1, int(w / total * pages)) for w in weights]
        sizes[0] += pages - sum(sizes)
        self.starts = [0] * hosts
        acc = 0
        for i, size in enumerate(sizes):
            self.starts[i] = acc
            acc += size
        self.sizes = sizes
        # a host's cluster: shuffled, so the biggest hosts are not all in the first clusters
        order = list(range(hosts))
        rng.shuffle(order)
        self.cluster_of = [0] * hosts
        self.members: list[list[int]] = [[] for _ in range(clusters)]
        for rank, h in enumerate(order):
            c = rank % clusters
            self.cluster_of[h] = c
            self.members[c].append(h)
        self.core = max(1, clusters * 2 // 100)  # clusters [0, core): the keywords' own
        self.related = self.core + max(1, clusters * 3 // 100)  # [core, related): wider vocab
        self.common = _words(rng, 300)
        self.topical = _words(rng, 40)  # the topic's wider vocabulary (related + core)
        self.vocab = [_words(rng, 40) for _ in range(clusters)]
        self.hostnames = [f"{self.vocab[self.cluster_of[h]][h % 40]}{h}{TLD}"
                          for h in range(hosts)]

    # -- addresses --------------------------------------------------------------------------
    def host_of(self, pid: int) -> int:
        return bisect.bisect_right(self.starts, pid) - 1

    def url(self, pid: int) -> str:
        h = self.host_of(pid)
        local = pid - self.starts[h]
        directory = self.vocab[self.cluster_of[h]][(local // 40) % 40]
        return f"http://{self.hostnames[h]}/{directory}/{pid}.html"

    def parse(self, host: str, path: str) -> int | None:
        """The page id a URL names, or None if no such page exists."""
        m, mh = _URL.match(path), _HOST.match(host)
        if m is None or mh is None:
            return None
        pid = int(m.group(2))
        if pid >= self.pages or self.hostnames[self.host_of(pid)] != host:
            return None
        return pid if self.url(pid) == f"http://{host}{path}" else None

    def home(self, h: int) -> int:
        return self.starts[h]

    def seeds(self, n: int = 5) -> list[str]:
        """Home pages of the biggest hosts of the core clusters."""
        hosts = sorted((h for c in range(self.core) for h in self.members[c]),
                       key=lambda h: -self.sizes[h])
        return [self.url(self.home(h)) for h in hosts[:n]]

    # -- pages ------------------------------------------------------------------------------
    def _target(self, rng: random.Random, h: int) -> int:
        r = rng.random()
        if r < 0.75:
            t, skew = h, 1.2  # on the host: its first pages a little more often
        elif r < 0.92:
            members = self.members[self.cluster_of[h]]
            t, skew = members[int(rng.random() * len(members))], 3.0  # its popular pages
        else:  # anywhere: a host in proportion to its size, its popular pages
            t, skew = self.host_of(int(rng.random() * self.pages)), 3.0
        return self.starts[t] + int(self.sizes[t] * rng.random() ** skew)

    def _text(self, rng: random.Random, c: int, n: int) -> str:
        own, common, topical = self.vocab[c], self.common, self.topical
        kw = 0.04 if c < self.core else 0.005 if c < self.related else 0.0
        top = kw + (0.25 if c < self.related else 0.0)
        rand = rng.random
        words = []
        for _ in range(n):
            r = rand()
            if r < kw:
                words.append(KEYWORDS[int(r / kw * 3)])
            elif r < top:
                words.append(topical[int(rand() * 40)])
            elif r < 0.6:
                words.append(own[int(rand() * 40)])
            else:
                words.append(common[int(rand() * 300)])
        return " ".join(words)

    def html(self, pid: int) -> bytes:
        """The page's HTML: a title, navigation, paragraphs with links, a footer."""
        rng = random.Random(self.seed * 1_000_003 + pid)
        h = self.host_of(pid)
        c = self.cluster_of[h]
        own = self.vocab[c]
        title = " ".join(own[rng.randrange(40)] for _ in range(3))
        if c < self.core and rng.random() < 0.7:
            title += " " + KEYWORDS[rng.randrange(3)]
        home = self.home(h)
        nav = "".join(
            f'<li><a href="{self.url(home + i)}">{own[(i * 7) % 40]}</a></li>'
            for i in range(min(4, self.sizes[h]))
        )
        degree = min(300, int(self.links * rng.random() ** (-1 / 1.6)))
        parts = []
        for _ in range(degree):
            t = self._target(rng, h)
            tv = self.vocab[self.cluster_of[self.host_of(t)]]
            anchor = " ".join(tv[int(rng.random() * 40)] for _ in range(1 + int(rng.random() * 3)))
            parts.append(f'<p>{self._text(rng, c, 6 + int(rng.random() * 10))} '
                         f'<a href="{self.url(t)}">{anchor}</a></p>')
        body = "\n".join(parts)
        return (f"<!DOCTYPE html><html><head><title>{title}</title></head><body>"
                f"<nav><ul>{nav}</ul></nav><main><h1>{title}</h1>"
                f"<p>{self._text(rng, c, 60)}</p>\n{body}</main>"
                f"<footer>{self._text(rng, c, 8)}</footer></body></html>").encode()


def _web_from(settings: Any) -> SyntheticWeb:
    return SyntheticWeb(seed=settings.getint("BENCH_SCALE_SEED", 0),
                        pages=settings.getint("BENCH_SCALE_WEB", 5_000_000),
                        hosts=settings.getint("BENCH_SCALE_HOSTS", 20_000),
                        clusters=settings.getint("BENCH_SCALE_CLUSTERS", 500),
                        links=settings.getint("BENCH_SCALE_LINKS", 10))


class SyntheticWebHandler:
    """Download handler: every http request is answered by :class:`SyntheticWeb`.

    Hosts under ``.scale.test`` answer their pages, ``/robots.txt`` and 404 for anything else;
    no request leaves the process.
    """

    lazy = False

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.web = _web_from(crawler.settings)

    @classmethod
    def from_crawler(cls, crawler: Any) -> SyntheticWebHandler:
        return cls(crawler)

    async def download_request(self, request: Any) -> Any:
        from scrapy.http import HtmlResponse, Response
        from scrapy.utils.httpobj import urlparse_cached

        parsed = urlparse_cached(request)
        host, path = parsed.hostname or "", parsed.path
        if path == "/robots.txt" and host.endswith(TLD):
            return Response(request.url, status=200, body=_ROBOTS, request=request,
                            headers={"Content-Type": "text/plain"})
        pid = self.web.parse(host, path) if not parsed.query else None
        if pid is None:
            return HtmlResponse(request.url, status=404, body=b"<html>not found</html>",
                                request=request, headers={"Content-Type": "text/html"})
        return HtmlResponse(request.url, status=200, body=self.web.html(pid), request=request,
                            headers={"Content-Type": "text/html; charset=utf-8"})

    async def close(self) -> None:
        pass


def rss_bytes() -> int:
    """This process's resident set size (VmRSS), in bytes."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def seen_set_bytes(done: Any) -> int:
    """The seen-set's own memory: a compact set reports ``nbytes``; a Python set of strings
    is the set's table plus its strings."""
    nbytes = getattr(done, "nbytes", None)
    if nbytes is not None:
        return int(nbytes)
    return sys.getsizeof(done) + sum(sys.getsizeof(u) for u in done)


class _OpenClose:
    """An extension called when the spider opens and closes (its ``opened``/``closed``)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.loop: Any = None  # a LoopingCall, stopped on close

    @classmethod
    def from_crawler(cls, crawler: Any) -> Any:
        from scrapy import signals

        ext = cls(crawler)
        crawler.signals.connect(ext.opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.closed, signal=signals.spider_closed)
        return ext

    def opened(self, spider: Any) -> None:
        raise NotImplementedError

    def closed(self, spider: Any, reason: str) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()


class ScaleSampler(_OpenClose):
    """Extension: a JSON line every BENCH_SCALE_EVERY seconds with pages, RSS and frontier."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.path = crawler.settings.get("BENCH_SCALE_SAMPLES")
        self.every = crawler.settings.getfloat("BENCH_SCALE_EVERY", 5.0)
        self.t0 = 0.0
        self.file: Any = None

    def opened(self, spider: Any) -> None:
        from twisted.internet import task

        self.t0 = time.monotonic()
        self.file = open(self.path, "a", encoding="utf-8")  # closed in closed()
        self.loop = task.LoopingCall(self.sample)
        self.loop.start(self.every, now=True)

    def sample(self, final: bool = False) -> None:
        scheduler = getattr(self.crawler.engine, "scheduler", None)
        frontier = getattr(scheduler, "frontier", None)
        row: dict[str, Any] = {"t": time.monotonic() - self.t0, "cpu": time.process_time(),
                               "pages": getattr(getattr(scheduler, "lifecycle", None), "pages", 0),
                               "rss": rss_bytes(),
                               "malloc": _mallinfo(), "pymalloc": _pymalloc()}
        if frontier is not None:
            spilled = frontier.spilled  # FOCUS_FRONTIER_MEMORY: URLs queued on disk
            row |= {"queued": len(frontier), "handed_out": len(frontier.done),
                    "on_disk": len(spilled) if spilled is not None else 0,
                    "hot": frontier.stats.get("pages_hot", 0),
                    "seen_set_bytes": seen_set_bytes(frontier.done),
                    "seen_set_type": type(frontier.done).__name__,
                    "order": frontier.describe()}  # the order's own counters (its bandit's)
        if final:
            row["final"] = True
        self.file.write(json.dumps(row) + "\n")
        self.file.flush()

    def closed(self, spider: Any, reason: str) -> None:
        super().closed(spider, reason)
        self.sample(final=True)
        self.file.close()


def _mallinfo() -> dict[str, int]:
    """glibc's own view of the heap: bytes in use (uordblks) and free inside it (fordblks);
    their sum against the RSS tells fragmentation from growth."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks",
                                                   "hblkhd", "usmblks", "fsmblks", "uordblks",
                                                   "fordblks", "keepcost")]

    from focuscrawl.core.memory import libc

    mallinfo2 = getattr(libc(), "mallinfo2", None)
    if mallinfo2 is None:
        return {}
    mallinfo2.restype = MallInfo2
    m = mallinfo2()
    return {"arena": m.arena, "mmap": m.hblkhd, "used": m.uordblks, "free": m.fordblks}


def _pymalloc() -> dict[str, int]:
    """pymalloc's own view (``sys._debugmallocstats``): its arenas (mapped apart from malloc's
    heap, so mallinfo does not count them) against the bytes of the live blocks in them;
    arenas growing while the live bytes do not is fragmentation, not objects kept."""
    import tempfile

    sys.stderr.flush()
    with tempfile.TemporaryFile() as f:
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read().decode("ascii", "replace")
    names = {"# arenas allocated current": "arenas", "# bytes in allocated blocks": "live",
             "# bytes in available blocks": "avail", "Total": "total"}
    out: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition("=")
        key = names.get(name.strip())
        if key and value.strip() and key not in out:  # the first Total: the arenas'
            out[key] = int(value.strip().replace(",", ""))
    return out


def deep_bytes(root: Any, seen: set[int] | None = None) -> int:
    """Bytes reachable from ``root`` through containers and plain objects (numpy arrays by
    their buffers; classes, modules and functions not followed); ``seen`` shared between
    calls counts a shared object once."""
    import gc
    import types

    import numpy as np

    skip = (type, types.ModuleType, types.FunctionType, types.MethodType,
            types.BuiltinFunctionType)
    seen = set() if seen is None else seen
    total, stack = 0, [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, skip) or type(obj).__module__.startswith(
                ("twisted", "scrapy.crawler", "scrapy.core.engine", "scrapy.settings",
                 "scrapy.signalmanager", "scrapy.statscollectors", "asyncio", "logging")):
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            total += sys.getsizeof(obj) + (obj.nbytes if obj.base is not None else 0)
            if obj.dtype == object:
                stack.extend(x for x in obj.ravel().tolist() if x is not None)
            continue
        total += sys.getsizeof(obj)
        if isinstance(obj, (str, bytes, int, float, bool)):
            continue
        stack.extend(gc.get_referents(obj))
    return total


def _type_counts() -> dict[str, int]:
    """Live objects the garbage collector tracks, by type (containers, not strings)."""
    import gc
    from collections import Counter

    counts = Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects())
    return dict(counts.most_common(80))


def _task_counts() -> dict[str, int]:
    """Live asyncio tasks by where each waits (its innermost awaited coroutine or generator
    and line): a task per page or per request that never finishes shows here."""
    import asyncio
    import gc
    from collections import Counter

    counts: Counter[str] = Counter()
    for o in gc.get_objects():
        if not isinstance(o, asyncio.Task):
            continue
        coro: Any = o.get_coro()
        where = "done" if o.done() else "?"
        while coro is not None:
            frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None) \
                or getattr(coro, "ag_frame", None)
            if frame is not None:
                where = f"{frame.f_code.co_qualname} {frame.f_code.co_filename}:{frame.f_lineno}"
            coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None) \
                or getattr(coro, "ag_await", None)
        counts[where] += 1
    return dict(counts.most_common(20))


def _cache_census(crawler: Any) -> dict[str, list[int]]:
    """Every ``functools.lru_cache`` of a module (any library's) or of a spider middleware:
    entries, bound, hits, misses and deep bytes (each counted alone: a key shared by two
    caches is in both).  Bounded caches are not found from the crawl's objects, fill over
    thousands of pages, and gc.get_objects() misses them once FOCUS_GC_FREEZE froze them."""
    import functools
    import gc

    found: dict[str, Any] = {}
    seen: set[Any] = set()  # a cache imported by several modules is counted once
    for module in list(sys.modules.values()):
        for value in list(getattr(module, "__dict__", {}).values()):
            if isinstance(value, functools._lru_cache_wrapper) and value not in seen:
                seen.add(value)
                found[f"{value.__module__}.{value.__qualname__}"] = value
    manager = getattr(getattr(crawler.engine, "scraper", None), "spidermw", None)
    for mw in getattr(manager, "middlewares", ()):
        for owner in (mw, *vars(mw).values()):
            for attr, value in list(getattr(owner, "__dict__", {}).items()):
                if isinstance(value, functools._lru_cache_wrapper):
                    found[f"{type(owner).__name__}.{attr}"] = value
    hubs = {id(x) for x in (crawler, crawler.engine, crawler.spider)}
    out: dict[str, list[int]] = {}
    for name, cache in found.items():
        info = cache.cache_info()
        if not info.currsize:
            continue
        size = sum(deep_bytes(r, set(hubs)) for r in gc.get_referents(cache)
                   if isinstance(r, dict) and r is not getattr(cache, "__dict__", None))
        out[name] = [info.currsize, info.maxsize or 0, info.hits, info.misses, size]
    return out


def census(crawler: Any) -> dict[str, tuple[int, int]]:
    """Length and deep bytes of each structure that may grow per page or per URL (first
    come, first counted: a string shared by two is charged to the first listed)."""
    scheduler = getattr(crawler.engine, "scheduler", None)
    frontier = getattr(scheduler, "frontier", None)
    services = getattr(scheduler, "services", None)
    roots: dict[str, Any] = {}
    if frontier is not None:
        for name in ("scores", "trainer.labels", "trainer.parents", "trainer.ex_of",
                     "fetching", "trainer.children", "bandit.reached", "scorer.hosts",
                     "scorer.dirs", "scorer.hubs", "trainer.ex_slot", "trainer.ex_label",
                     "trainer.ex_dyn", "scorer.store", "reranker.queued", "pending",
                     "bandit.tops", "scorer.featurizer", "scorer.profile", "scorer.model",
                     "entries", "queues", "_worst", "done", "spilled", "graph", "stats"):
            root = frontier
            for part in name.split("."):
                root = getattr(root, part, None)
            if root is not None:
                roots[f"frontier.{name}"] = root
    if scheduler is not None:
        for name in ("state", "records", "waker"):
            roots[f"scheduler.{name}"] = getattr(scheduler, name, None)
    if services is not None:
        for name in ("_policy", "_servers", "_lifecycle", "_directories", "_robots"):
            roots[f"services.{name}"] = getattr(services, name, None)
    downloader = getattr(crawler.engine, "downloader", None)
    roots["downloader.slots"] = getattr(downloader, "slots", None)
    roots["stats"] = getattr(crawler.stats, "_stats", None)
    # the crawl's hubs: a structure that refers to them is not charged for the world
    seen = {id(x) for x in (crawler, crawler.engine, crawler.spider, scheduler, services,
                            downloader, frontier)}
    out = {}
    for name, root in roots.items():
        if root is None:
            continue
        try:
            n = len(root)
        except TypeError:
            n = -1
        try:
            out[name] = (n, deep_bytes(root, seen))
        except Exception as e:  # a census must not stop the crawl  # noqa: BLE001
            out[name] = (n, -1)
            print(f"census {name}: {e!r}", file=sys.stderr)
    return out


class TraceSampler(_OpenClose):
    """Extension (``--trace N``): a tracemalloc snapshot dumped at N, 2N, 3N... pages
    (BENCH_TRACE_PAGES) to BENCH_TRACE_DIR/pages-<n>.snap, so that what grows per page can be
    found by allocation site (``bench/memdiff.py``) rather than guessed from the RSS.  Tracing
    starts at BENCH_TRACE_FROM pages (it slows the crawl 3-5x; what was allocated before is
    not seen, so start it a little before the first snapshot); BENCH_TRACE_FRAMES (default 8)
    frames per allocation, 0: no tracemalloc, only the :func:`census` of the crawl's
    structures at each point (points.jsonl)."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.every = crawler.settings.getint("BENCH_TRACE_PAGES", 0)
        self.dir = Path(crawler.settings.get("BENCH_TRACE_DIR", "."))
        self.frames = crawler.settings.getint("BENCH_TRACE_FRAMES", 8)
        self.start = crawler.settings.getint("BENCH_TRACE_FROM", 0)
        self.next = self.every

    def opened(self, spider: Any) -> None:
        import tracemalloc

        from twisted.internet import task

        if self.every <= 0:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.start <= 0 and self.frames:
            tracemalloc.start(self.frames)
        self.loop = task.LoopingCall(self.check)
        self.loop.start(0.5, now=False)

    def check(self) -> None:
        import gc
        import tracemalloc

        scheduler = getattr(self.crawler.engine, "scheduler", None)
        pages = getattr(scheduler, "pages", 0)
        if self.frames and not tracemalloc.is_tracing():
            if pages >= self.start:
                tracemalloc.start(self.frames)
            return
        if pages < self.next:
            return
        gc.collect()
        if self.frames:
            tracemalloc.take_snapshot().dump(str(self.dir / f"pages-{pages}.snap"))
        with open(self.dir / "points.jsonl", "a", encoding="utf-8") as f:
            frontier = getattr(scheduler, "frontier", None)
            row = {"pages": pages, "rss": rss_bytes(),
                   "traced": tracemalloc.get_traced_memory()[0],
                   "malloc": _mallinfo(),
                   "queued": len(frontier) if frontier is not None else 0,
                   "handed_out": len(frontier.done) if frontier is not None else 0,
                   "stats": dict(frontier.stats) if frontier is not None else {},
                   "census": census(self.crawler), "types": _type_counts(),
                   "tasks": _task_counts(), "caches": _cache_census(self.crawler)}
            f.write(json.dumps(row) + "\n")
        while self.next <= pages:
            self.next += self.every


def _crawl_command(args: argparse.Namespace, web: SyntheticWeb, samples: Path) -> list[str]:
    settings = {
        "DOWNLOAD_HANDLERS": json.dumps({"http": "scale.SyntheticWebHandler",
                                         "https": "scale.SyntheticWebHandler"}),
        # the project's add-on adds focuscrawl's own extensions to these
        "EXTENSIONS": json.dumps({"scale.ScaleSampler": 1000,
                                  **({"scale.TraceSampler": 1001} if args.trace else {})}),
        "BENCH_TRACE_PAGES": str(args.trace),
        "BENCH_TRACE_DIR": str(Path(args.trace_dir).resolve()),
        "BENCH_SCALE_SAMPLES": str(samples), "BENCH_SCALE_EVERY": str(args.every),
        "BENCH_SCALE_SEED": str(args.seed), "BENCH_SCALE_WEB": str(args.web),
        "BENCH_SCALE_HOSTS": str(args.hosts), "BENCH_SCALE_CLUSTERS": str(args.clusters),
        "BENCH_SCALE_LINKS": str(args.links),
        "FOCUS_DELAY": str(args.delay), "FOCUS_DEFAULT_FEED": "",
        "FOCUS_BLOCK_PRIVATE": "False",  # made-up hosts: nothing to resolve
        "LOG_LEVEL": "WARNING", "LOGSTATS_INTERVAL": "0",
        "CLOSESPIDER_TIMEOUT": str(int(args.minutes * 60)),  # 0: no time limit
    }
    profile = ["-m", "cProfile", "-o", str(Path(args.profile).resolve())] if args.profile else []
    cmd = [sys.executable, *profile, "-m", "scrapy", "crawl", "topic",
           "-a", f"keywords={' '.join(KEYWORDS)}", "-a", f"seeds={','.join(web.seeds())}",
           "-a", f"max_pages={args.pages}"]
    if args.strategy:
        cmd += ["-a", f"strategy={args.strategy}"]
    for k, v in settings.items():
        cmd += ["-s", f"{k}={v}"]
    for setting in args.set:
        cmd += ["-s", setting]
    return cmd


def _time_at(samples: list[dict[str, Any]], pages: float, clock: str = "t") -> float:
    """When the crawl reached ``pages`` pages (linear between samples), by ``clock``: "t"
    (wall seconds) or "cpu" (the crawl process's CPU seconds)."""
    prev = samples[0]
    for s in samples[1:]:
        if s["pages"] >= pages:
            span = s["pages"] - prev["pages"]
            frac = (pages - prev["pages"]) / span if span else 1.0
            return prev[clock] + frac * (s[clock] - prev[clock])
        prev = s
    return samples[-1][clock]


def _first_last(samples: list[dict[str, Any]], clock: str) -> tuple[float, float]:
    """Pages per second (of ``clock``) over the first and the last 10% of the pages."""
    total = samples[-1]["pages"]
    tenth = total / 10
    t10, t90 = _time_at(samples, tenth, clock), _time_at(samples, total - tenth, clock)
    end = _time_at(samples, total, clock)  # the last page, not the spider's close after it
    return (tenth / max(t10 - samples[0][clock], 1e-9), tenth / max(end - t90, 1e-9))


def _print_sample(s: dict[str, Any], prev: dict[str, Any] | None) -> None:
    rate = ((s["pages"] - prev["pages"]) / (s["t"] - prev["t"])
            if prev is not None and s["t"] > prev["t"] else 0.0)
    cpu_rate = ((s["pages"] - prev["pages"]) / (s["cpu"] - prev["cpu"])
                if prev is not None and s["cpu"] > prev["cpu"] else 0.0)
    print(f"{s['t']:8.1f} {s['pages']:9,d} {rate:8.1f} {cpu_rate:9.1f} {s['rss'] / 2**20:8.1f} "
          f"{s.get('queued', 0):11,d} {s.get('handed_out', 0):10,d}", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pages", type=int, default=200_000, help="pages to crawl (MAX_PAGES)")
    p.add_argument("--web", type=int, default=5_000_000, help="pages in the synthetic web")
    p.add_argument("--hosts", type=int, default=20_000)
    p.add_argument("--clusters", type=int, default=500)
    p.add_argument("--links", type=int, default=10,
                   help="the out-degrees' minimum (Pareto scale; the mean is ~2.4x it)")
    p.add_argument("--until-queued", type=int, default=0, metavar="N",
                   help="stop the crawl (as Ctrl-C does) once N URLs are queued (0: never)")
    p.add_argument("--seed", type=int, default=0, help="the web's seed")
    p.add_argument("--strategy", default="", help="crawl order (default: the project's)")
    p.add_argument("--delay", type=float, default=0.0, help="FOCUS_DELAY, seconds")
    p.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    p.add_argument("--minutes", type=float, default=0.0,
                   help="stop the crawl after this long even short of --pages (0: never)")
    p.add_argument("--keep", help="copy the samples (JSON lines) to this file")
    p.add_argument("--profile", help="run the crawl under cProfile, its stats to this file")
    p.add_argument("--trace", type=int, default=0, metavar="N",
                   help="tracemalloc snapshots every N pages (see TraceSampler), 0: none")
    p.add_argument("--trace-dir", default="trace", help="where --trace writes its snapshots")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a Scrapy setting for the crawl (repeatable), e.g. FOCUS_LEARN_RERANK=0")
    args = p.parse_args()

    web = SyntheticWeb(seed=args.seed, pages=args.web, hosts=args.hosts, clusters=args.clusters,
                       links=args.links)
    print(f"synthetic web: {args.web:,} pages, {args.hosts:,} hosts (largest {web.sizes[0]:,} "
          f"pages), {args.clusters} clusters ({web.core} core, {web.related - web.core} "
          f"related); crawl {args.pages:,} pages, strategy "
          f"{args.strategy or 'default'}, FOCUS_DELAY={args.delay}"
          + (f", at most {args.minutes:g} minutes" if args.minutes else ""))
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        work = Path(tmp)
        samples_file = work / "samples.jsonl"
        env = {k: v for k, v in os.environ.items() if k not in ("http_proxy", "https_proxy")}
        env["SCRAPY_SETTINGS_MODULE"] = "settings"
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(HERE)])
        log = open(work / "crawl.log", "w", encoding="utf-8")
        proc = subprocess.Popen(_crawl_command(args, web, samples_file), env=env, cwd=work,
                                stdout=log, stderr=subprocess.STDOUT)
        print(f"{'seconds':>8} {'pages':>9} {'pages/s':>8} {'pages/cpu':>9} {'RSS MB':>8} "
              f"{'queued':>11} "
              f"{'handed out':>10}")
        samples: list[dict[str, Any]] = []
        offset = 0
        stopping = False
        while True:
            done = proc.poll() is not None
            if samples_file.exists():
                with open(samples_file, encoding="utf-8") as f:
                    f.seek(offset)
                    for line in f:
                        if line.endswith("\n"):
                            s = json.loads(line)
                            _print_sample(s, samples[-1] if samples else None)
                            samples.append(s)
                            offset += len(line.encode())
                            if (args.until_queued and not stopping
                                    and s.get("queued", 0) >= args.until_queued):
                                proc.send_signal(signal.SIGINT)  # a clean stop, a last sample
                                stopping = True
            if done:
                break
            time.sleep(1.0)
        log.close()
        if args.keep:
            Path(args.keep).write_text(samples_file.read_text())
        if proc.returncode != 0 or len(samples) < 2:
            print((work / "crawl.log").read_text()[-4000:], file=sys.stderr)
            print(f"crawl failed (exit {proc.returncode})", file=sys.stderr)
            return 1

    first, last = samples[0], samples[-1]
    total = last["pages"]
    r_first, r_last = _first_last(samples, "t")
    c_first, c_last = _first_last(samples, "cpu")
    queued, out = last.get("queued", 0), last.get("handed_out", 0)
    grown = last["rss"] - first["rss"]
    peak = max(s["rss"] for s in samples)
    per_queued = grown / max(queued, 1)
    per_seen = grown / max(queued + out, 1)
    # marginal: over the second half of the crawl, without the start-up's fixed growth
    mid = next(s for s in samples if s["pages"] >= total / 2)
    d_rss = last["rss"] - mid["rss"]
    d_queued = queued - mid.get("queued", 0)
    d_seen = queued + out - mid.get("queued", 0) - mid.get("handed_out", 0)
    print(f"\n{total:,} pages in {last['t']:.0f} s = {total / last['t']:.1f} pages/s; "
          f"URLs queued {queued:,}, handed out {out:,} (seen {queued + out:,})")
    if last.get("on_disk"):
        grew = (last["on_disk"] - mid.get("on_disk", 0)) / max(d_queued, 1)
        print(f"  of the queued URLs {last['on_disk']:,} on disk past FOCUS_FRONTIER_MEMORY "
              f"({queued - last['on_disk']:,} in memory); of those queued in the second half "
              f"{grew:.0%} went to disk")
    if "hot" in last:  # the order's harvest: pages hot by the keywords (FOCUS_HOT_BODY_COUNT)
        print(f"hot pages {last['hot']:,} ({last['hot'] / max(total, 1):.1%} of the pages)")
    order = last.get("order", {})
    if "host_bandit_picks" in order:
        print(f"host bandit picks {order['host_bandit_picks']:,}, of them an off-topic host's "
              f"most-linked URL {order.get('host_bandit_backlink_picks', 0):,}")
    print(f"pages/s first 10% {r_first:.1f}, last 10% {r_last:.1f}: "
          f"ratio last/first {r_last / r_first:.2f} (goal >= 0.80)")
    print(f"pages per CPU second of the crawl process (what a shared machine's load does not "
          f"blur) first 10% {c_first:.1f}, last 10% {c_last:.1f}: ratio {c_last / c_first:.2f}")
    print(f"RSS {first['rss'] / 2**20:.0f} MB at the first sample, {last['rss'] / 2**20:.0f} MB "
          f"at the end (peak {peak / 2**20:.0f} MB)")
    print(f"bytes per queued URL (RSS growth / queued): {per_queued:,.0f}; per seen URL "
          f"(RSS growth / (queued + handed out)): {per_seen:,.0f}")
    if d_queued > 0 and d_seen > 0:
        print(f"  marginal, second half of the crawl: {d_rss / d_queued:,.0f} per queued URL "
              f"added, {d_rss / d_seen:,.0f} per seen URL added")
    if out:
        print(f"seen-set ({last.get('seen_set_type')}) alone: "
              f"{last.get('seen_set_bytes', 0) / out:,.1f} bytes per URL handed out")
    if queued >= 10_000_000:  # measured, not projected
        print(f"10,000,000 queued URLs reached: {last['rss'] / 2**30:.2f} GB RSS at the end, "
              f"{peak / 2**30:.2f} GB at the peak ({peak / 1.5 / 2**30:.2f}x the 1.5 GB goal)")
        return 0
    marginal = d_rss / d_queued if d_queued > 0 else per_queued
    at_10m = last["rss"] + (10_000_000 - queued) * marginal
    print(f"10,000,000 queued URLs at the marginal rate: {at_10m / 2**30:.2f} GB RSS "
          f"({at_10m / 1.5 / 2**30:.2f}x the 1.5 GB goal)")
    _per_page_projection(samples)
    return 0


def _per_page_projection(samples: list[dict[str, Any]]) -> None:
    """The same goal per page fetched, over the last 10% of the pages: once the spill holds
    the queue in memory flat, what still grows grows with the pages fetched (their scores,
    labels, fingerprints), and the URLs queued per page say how many pages 10M takes."""
    last = samples[-1]
    start = next(s for s in samples if s["pages"] >= last["pages"] * 0.9)
    pages = last["pages"] - start["pages"]
    queued = last.get("queued", 0) - start.get("queued", 0)
    if pages <= 0 or queued <= 0:
        return
    per_page = (last["rss"] - start["rss"]) / pages
    more = (10_000_000 - last.get("queued", 0)) / (queued / pages)
    at_10m = last["rss"] + more * per_page
    print(f"last 10% of the pages: {per_page:,.0f} bytes of RSS per page fetched, "
          f"{queued / pages:.1f} URLs queued per page; at those rates 10,000,000 queued URLs "
          f"come {more:,.0f} pages later at {at_10m / 2**30:.2f} GB RSS")
    kept = 1.0 - (last.get("on_disk", 0) - start.get("on_disk", 0)) / queued
    if last.get("on_disk", 0) > 0 and kept > 0.1:  # then both projections charge the
        # queue's filling to every later URL
        # (the queue in memory fills up to the limit, spills a quarter, fills again)
        why = ("filling again after a spill" if start.get("on_disk", 0) > 0 else
               "still filling towards FOCUS_FRONTIER_MEMORY")
        print(f"  caution: {kept:.0%} of the URLs queued over the last 10% stayed in memory: "
              f"the queue in memory was {why}, which these projections extrapolate; a longer "
              f"crawl (or --set FOCUS_FRONTIER_MEMORY=...) measures the growth past it")


if __name__ == "__main__":
    raise SystemExit(main())

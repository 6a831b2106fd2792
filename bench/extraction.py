"""Main-content extraction, end to end: a public benchmark's pages crawled and scored by its metric.

    .venv/bin/python bench/extraction.py PATH [--bootstrap 1000] [--keep DIR]

PATH is a copy of the public repository ``scrapinghub/article-extraction-benchmark`` (a work
tree, or the bare git directory the ``fetch`` tool brings): 181 news and blog pages
(``html/*.html.gz``), their article bodies written by people (``ground-truth.json``), and its
evaluation script (``evaluate.py``: F1 over shingles of four words, the mean of per-page
precision and recall).  Nothing of it is copied into this repository; it is read from PATH.

The pages are served by a loopback HTTP server this file starts, as host ``aeb.bench.test``
reached through it as the crawl's http(s) proxy (``http://aeb.bench.test/page/<id>.html``,
UTF-8, ``Content-Type: text/html``; anything else 404, so a request for any other host never
leaves the machine), and crawled with ``scrapy crawl topic``: the page URLs are the seeds,
every page exported (``FOCUS_MIN_SCORE`` 0), ``-a content=text``, links kept to the server's
page directory (``allowed_domains`` and ``FOCUS_NEARNESS``).  The exported ``text`` is
scored against the ground truth with the benchmark's own ``evaluate()``, beside
``focuscrawl.core.content.extract_content`` called directly on the same files in the same run
(and trafilatura's own ``extract`` as the benchmark's runner calls it, for reference).

Two crawls: with the default ``FOCUS_MAX_PAGE_BYTES`` (the crawl scores the first 100 KB of
each page, Pant's rule, and the content is extracted from the whole page, which the fetch rules
download for it) and with it off (the crawl reads whole pages too).  The direct call reads the
whole files.  The goal is each crawl's F1 within 0.02 of the direct call, same run.  For
reference, the direct call on the first 100 KB alone: what the content would lose were it
taken from the bytes the crawl scores.
"""

from __future__ import annotations

import argparse
import gzip
import http.server
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from io import BytesIO
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from focuscrawl import config  # noqa: E402
from focuscrawl.core.content import extract_content, guess_language  # noqa: E402
from focuscrawl.core.extract import extract  # noqa: E402

NEEDED = ("html", "ground-truth.json", "evaluate.py")
HOST = "aeb.bench.test"  # the pages' host, served through the loopback server as a proxy


def benchmark_files(path: Path, into: Path) -> Path:
    """The benchmark's pages, ground truth and evaluation script: ``path`` itself if it is a
    work tree, else extracted from its git directory's HEAD into ``into``."""
    if (path / "html").is_dir() and (path / "ground-truth.json").exists():
        return path
    archive = subprocess.run(["git", f"--git-dir={path}", "archive", "HEAD", *NEEDED],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def load_evaluate(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("aeb_evaluate", path / "evaluate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Pages(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, pages: dict[str, bytes]) -> None:
        self.pages = pages
        super().__init__(("127.0.0.1", 0), Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a crawl that stopped reading
            super().handle_error(request, client_address)


class Handler(http.server.BaseHTTPRequestHandler):
    server: Pages
    # kept-alive connections: with HTTP/1.0 the server closes each one, and a request the
    # crawler sends on a pooled connection as it closes fails (focuscrawl does not re-send it)
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlsplit(self.path)  # a proxy request names the whole URL
        key = url.path.removeprefix("/page/").removesuffix(".html")
        ours = (url.hostname in (None, HOST) and url.path.startswith("/page/")
                and not url.query)  # a page's own links with a query are other pages
        body = self.server.pages.get(key) if ours else None
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def crawl(proxy: str, keys: list[str], work: Path, max_page_bytes: int) -> dict[str, str]:
    """id -> exported text of one crawl of every page."""
    seeds = work / "seeds.txt"
    seeds.write_text("".join(f"http://{HOST}/page/{k}.html\n" for k in keys))
    out = work / f"crawl-{max_page_bytes}.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env |= {"SCRAPY_SETTINGS_MODULE": "settings", "PYTHONPATH": str(ROOT),
            "http_proxy": proxy, "https_proxy": proxy}
    settings = {"FOCUS_MAX_PAGE_BYTES": max_page_bytes, "FOCUS_DELAY": 0,
                "FOCUS_CONCURRENCY_PER_SERVER": 4, "FOCUS_NEARNESS": True,
                "FOCUS_MIN_SCORE": 0, "FOCUS_BLOCK_PRIVATE": False}
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", "keywords=news",
           "-a", f"seeds={seeds}", "-a", "strategy=breadth-first", "-a", "content=text",
           "-a", f"allowed_domains={HOST}", "-a", f"max_pages={len(keys)}", "-O", str(out)]
    for name, value in settings.items():
        cmd += ["-s", f"{name}={value}"]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(f"crawl failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    texts: dict[str, str] = {}
    for line in out.read_text("utf-8").splitlines():
        item = json.loads(line)
        texts[item["url"].rsplit("/", 1)[1].removesuffix(".html")] = item.get("text") or ""
    print(f"crawl, FOCUS_MAX_PAGE_BYTES={max_page_bytes}: {len(texts)} pages exported in "
          f"{time.monotonic() - started:.1f} s", file=sys.stderr)
    (work / "crawl.log").write_text(proc.stderr)
    if not texts:
        raise RuntimeError(f"the crawl exported nothing:\n{proc.stderr[-3000:]}")
    return texts


def direct(pages: dict[str, bytes], limit: int) -> tuple[dict[str, str], float, int]:
    """id -> text of extract_content on each page's first ``limit`` bytes (0: all), decoded as
    the crawl decodes them, with the spider's fallback (the visible text); the CPU ms a page
    it took; and the pages it failed on."""
    texts: dict[str, str] = {}
    failed = 0
    started = time.process_time()
    for key, body in pages.items():
        html = (body[:limit] if limit else body).decode("utf-8", "replace")
        url = f"http://{HOST}/page/{key}.html"
        page = extract_content(html, url, "text", fallback=extract(html, url).main_text,
                               extractor=config.default("FOCUS_CONTENT_EXTRACTOR"))
        texts[key] = page.text
        failed += bool(page.failed)
    return texts, 1000 * (time.process_time() - started) / len(pages), failed


def trafilatura_direct(pages: dict[str, bytes], limit: int) -> dict[str, str]:
    """The benchmark's own trafilatura runner: ``extract(html, include_comments=False)``."""
    import trafilatura

    return {k: trafilatura.extract((b[:limit] if limit else b).decode("utf-8", "replace"),
                                   include_comments=False) or ""
            for k, b in pages.items()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", type=Path, help="the article-extraction-benchmark repository")
    p.add_argument("--bootstrap", type=int, default=1000,
                   help="bootstrap samples of evaluate() (its confidence intervals)")
    p.add_argument("--keep", type=Path, default=None,
                   help="keep the crawls' JSON lines and the texts in this directory")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="extraction-bench-"))
    try:
        files = benchmark_files(args.path.resolve(), tmp / "benchmark")
        evaluate = load_evaluate(files)
        truth = json.loads((files / "ground-truth.json").read_text("utf-8"))
        pages = {path.name.split(".")[0]: gzip.decompress(path.read_bytes())
                 for path in sorted((files / "html").glob("*.html.gz"))}
        assert set(pages) == set(truth), "pages and ground truth differ"
        server = Pages(pages)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        proxy = f"http://127.0.0.1:{server.server_address[1]}"
        limit = config.default("FOCUS_MAX_PAGE_BYTES")
        guess_language("the language model loads once, before the clock starts")
        called, cpu_ms, failed = direct(pages, 0)
        cut_called, _, _ = direct(pages, limit)
        own = trafilatura_direct(pages, 0)

        def scored(texts: dict[str, str]) -> dict[str, Any]:
            prediction = {k: {"articleBody": texts.get(k, "")} for k in truth}
            return evaluate.evaluate(truth, prediction, args.bootstrap)

        reference = {"direct": scored(called), "cut": scored(cut_called),
                     "trafilatura": scored(own)}
        rows = []
        for max_page_bytes in (limit, 0):
            work = tmp / f"crawl-{max_page_bytes}"
            work.mkdir()
            crawled = crawl(proxy, sorted(pages), work, max_page_bytes)
            rows.append((max_page_bytes, scored(crawled), set(pages) - set(crawled)))
            if args.keep is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(work / f"crawl-{max_page_bytes}.jsonl", args.keep)
                shutil.copy(work / "crawl.log", args.keep / f"crawl-{max_page_bytes}.log")
        server.shutdown()

        def cell(m: dict[str, Any]) -> str:
            return f"{m['f1']:.3f} ± {m['f1_std']:.3f} ({m['precision']:.3f}, {m['recall']:.3f})"

        print(f"\narticle-extraction-benchmark: {len(pages)} pages; F1 ± bootstrap s.d. "
              f"(precision, recall) by its evaluate.py")
        print(f"{'crawl':34s} {'exported text':>30s} {'- direct call':>14s}")
        for max_page_bytes, s, missing in rows:
            label = (f"FOCUS_MAX_PAGE_BYTES={max_page_bytes}"
                     + (" (default)" if max_page_bytes == limit else " (off)"))
            print(f"{label:34s} {cell(s):>30s} {s['f1'] - reference['direct']['f1']:+14.3f}")
            if missing:
                print(f"  {len(missing)} pages not exported by the crawl (scored as empty)")
        print(f"{'direct call, whole files':34s} {cell(reference['direct']):>30s}  "
              f"({cpu_ms:.1f} CPU ms a page, the visible text's extraction included; "
              f"{failed} pages failed)")
        lost = reference["cut"]["f1"] - reference["direct"]["f1"]
        print(f"{'direct call, first ' + str(limit // 1024) + ' KB':34s} "
              f"{cell(reference['cut']):>30s} {lost:+14.3f}")
        print(f"{'trafilatura.extract, whole files':34s} {cell(reference['trafilatura']):>30s}")
        print(f"pages longer than {limit // 1024} KB: "
              f"{sum(len(b) > limit for b in pages.values())} of {len(pages)}, median page "
              f"{statistics.median(len(b) for b in pages.values()) / 1024:.0f} KB")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

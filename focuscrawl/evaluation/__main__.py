"""``python -m focuscrawl.evaluation record|compare``: build a repository, compare strategies.

    # a repository: crawl a site breadth-first into a WARC (skipped if the WARC exists)
    python -m focuscrawl.evaluation record --seeds http://docs.demo.test/index.html \\
        --proxy http://127.0.0.1:8800 --out repo.warc.gz

    # replay strategies over it for every topic and seed; tables, CSV, JSON and PNG plots
    python -m focuscrawl.evaluation compare --replay repo.warc.gz --topics topics.json \\
        --strategies breadth-first cho-distance best-first best-n-first:n=256 \\
        --seeds 0 1 2 --max-pages 1000 --jobs 2 --out results/
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .compare import compare, load_repository, load_topics, record, report


def _settings(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if not eq:
            raise SystemExit(f"-s expects NAME=VALUE, got {pair!r}")
        out[name.strip()] = value
    return out


def _seeds(value: str) -> list[str]:
    if os.path.isfile(value):
        with open(value, encoding="utf-8") as f:
            return [ln.split("#", 1)[0].strip() for ln in f if ln.split("#", 1)[0].strip()]
    return [u.strip() for u in value.split(",") if u.strip()]


def docweb_canonical(docweb_dir: str):
    """docweb's ``Site.canonical``: maps a crawled URL to its corpus URL."""
    sys.path.insert(0, os.path.abspath(docweb_dir))
    serve = importlib.import_module("serve")  # docweb's server module, from its own folder
    return serve.load_site().canonical


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m focuscrawl.evaluation", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("record", help="crawl a site breadth-first into a WARC repository")
    r.add_argument("--seeds", required=True, help="comma-separated URLs or a file of URLs")
    r.add_argument("--out", required=True, help="the WARC to write (.warc.gz)")
    r.add_argument("--proxy", help="http(s) proxy for the crawl, e.g. http://127.0.0.1:8080")
    r.add_argument("--delay", type=float, default=0.01,
                   help="seconds between requests to one server (default 0.01)")
    r.add_argument("--max-pages", type=int, default=1_000_000)
    r.add_argument("--allowed-domains", default="", help="comma-separated domains to stay in")
    r.add_argument("--keywords", default="repository",
                   help="the recording crawl's topic (only its WARC scores depend on it)")
    r.add_argument("--force", action="store_true", help="record again even if --out exists")
    r.add_argument("-s", dest="settings", action="append", default=[], metavar="NAME=VALUE")

    c = sub.add_parser("compare", help="replay strategies over a repository and judge them")
    c.add_argument("--replay", required=True, help="the repository WARC the crawls replay")
    c.add_argument("--repository",
                   help="what the judge sees: a WARC or JSON lines such as docweb's "
                        "corpus.jsonl.gz (default: the --replay WARC); a corpus is cut down to "
                        "the pages the WARC holds")
    c.add_argument("--topics", required=True,
                   help="JSON list of {id, keywords, description, seeds, targets} or docweb's "
                        "topics.json")
    c.add_argument("--task", nargs="+", help="docweb tasks: examples, neighbors (default both)")
    c.add_argument("--strategies", nargs="+", required=True,
                   help="specs such as breadth-first cho best-n-first:n=256,max_buffer=256")
    c.add_argument("--seeds", nargs="+", type=int, default=[0], help="random seeds (default 0)")
    c.add_argument("--max-pages", type=int, default=1000)
    c.add_argument("--jobs", type=int, default=2, help="crawls run at the same time")
    c.add_argument("--out", required=True, help="directory for crawls, tables and plots")
    c.add_argument("--docweb", help="docweb's folder: its Site.canonical maps crawled URLs")
    c.add_argument("--no-plots", action="store_true")
    c.add_argument("--fresh", action="store_true",
                   help="crawl everything again instead of reusing crawls already in --out")
    c.add_argument("-s", dest="settings", action="append", default=[], metavar="NAME=VALUE")

    args = p.parse_args(argv)
    if args.command == "record":
        record(_seeds(args.seeds), args.out, proxy=args.proxy, delay=args.delay,
               max_pages=args.max_pages, keywords=args.keywords,
               allowed_domains=[d for d in args.allowed_domains.split(",") if d.strip()],
               settings=_settings(args.settings), force=args.force)
        return 0
    canonical = docweb_canonical(args.docweb) if args.docweb else None
    source = args.repository or args.replay
    same = os.path.abspath(source) == os.path.abspath(args.replay)
    repo = load_repository(source, canonical=canonical, restrict_to=None if same else args.replay)
    print(f"repository: {len(repo)} pages from {source}", file=sys.stderr)
    tasks = load_topics(args.topics, args.task)
    result = compare(repo, tasks, args.strategies, replay=args.replay, out_dir=Path(args.out),
                     seeds=args.seeds, max_pages=args.max_pages, parallel=args.jobs,
                     settings=_settings(args.settings), plots=not args.no_plots,
                     fresh=args.fresh)
    print(report(result))
    for name, path in result.files.items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

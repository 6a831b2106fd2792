"""The demo web: a thousand real-text pages on seven ``*.demo.test`` hosts, offline.

The pages are made by :mod:`focuscrawl.demo.generate` from text Python itself ships (module and
function docstrings, the language-reference topics of ``pydoc_data``, IDLE's release notes).
They are built on first use (:func:`ensure_site`, a few seconds) into a cache directory, not
shipped: the same Python and generator always build the same bytes.  Serve them with
``python -m focuscrawl.demo serve`` and reach them through ``http_proxy``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

#: FOCUSCRAWL_DEMO_DIR overrides where the demo web is built (:func:`site_dir`)
DIR_VARIABLE = "FOCUSCRAWL_DEMO_DIR"

HOSTS = {
    "docs": "docs.demo.test",          # library reference: one page per stdlib module
    "tutorial": "tutorial.demo.test",  # lessons and the language reference topics
    "wiki": "wiki.demo.test",          # hub pages and class articles; robots.txt hides /edit/
    "blog": "blog.demo.test",          # posts about one function or class each, tag pages
    "news": "news.demo.test",          # IDLE release notes and weekly link digests
    # the rest of the web, as a crawl meets it: off every demo topic, linked from the pages above
    "cookbook": "cookbook.demo.test",  # a big off-topic site: Tk and turtle graphics recipes
    "links": "links.demo.test",        # a link aggregator: hub pages, mostly off-topic links
}

SEEDS = [f"http://{HOSTS['docs']}/index.html"]

# Topics with clear clusters of relevant pages on several hosts.  ``pattern`` is what the
# demo's own test counts as "mentions the topic" (a case-insensitive regex on visible text).
TOPICS: list[dict[str, str]] = [
    {"id": "regex", "query": "regular expressions",
     "keywords": "regular expression pattern match",
     "pattern": r"regular expressions?|\bregex(?:es|p)?\b"},
    {"id": "unicode", "query": "unicode encoding",
     "keywords": "unicode encoding utf-8 codec",
     "pattern": r"\bunicode\b|\butf-?8\b|\bcodecs?\b"},
    {"id": "sockets", "query": "sockets networking",
     "keywords": "socket network tcp connection",
     "pattern": r"\bsockets?\b|\bnetwork(?:ing)?\b"},
    {"id": "timezones", "query": "dates and time zones",
     "keywords": "time zone datetime utc tzinfo",
     "pattern": r"\btime ?zones?\b|\btzinfo\b|\butc\b"},
    {"id": "threads", "query": "threads concurrency",
     "keywords": "thread concurrency lock queue",
     "pattern": r"\bthreads?\b|\bthreading\b|\bconcurren(?:t|cy)\b"},
]


def site_dir() -> Path:
    """Where the demo web is (or will be) built: ``$FOCUSCRAWL_DEMO_DIR``, else the user's
    cache, in a directory named after the Python release and the generator's source, whose
    text the pages are made of (another Python or generator builds its own)."""
    if os.environ.get(DIR_VARIABLE):
        return Path(os.environ[DIR_VARIABLE]).resolve()
    source = (Path(__file__).resolve().parent / "generate.py").read_bytes()
    key = "py{}.{}.{}-{}".format(*sys.version_info[:3], hashlib.sha256(source).hexdigest()[:12])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "focuscrawl" / f"demo-{key}"


def ensure_site() -> Path:
    """The demo web's directory, built on first use.  Safe when several processes start at
    once (test workers): one builds under a lock into a temporary directory and renames it
    into place; the others wait for the lock and find it built."""
    site = site_dir()
    if (site / "demo.json").is_file():  # written last: the site is whole
        return site
    site.parent.mkdir(parents=True, exist_ok=True)
    with open(site.parent / f".{site.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (site / "demo.json").is_file():
            building = site.parent / f".{site.name}.{os.getpid()}.tmp"
            shutil.rmtree(building, ignore_errors=True)
            print(f"focuscrawl: building the demo web in {site} (first use)", file=sys.stderr)
            # a fresh interpreter: the pages list modules' members, which whatever this
            # process imported (a test runner, Scrapy) may have changed
            subprocess.run([sys.executable, "-m", "focuscrawl.demo.generate", "--out",
                            str(building)], check=True, stdout=subprocess.DEVNULL,
                           env={**os.environ, "PYTHONHASHSEED": "0"})
            shutil.rmtree(site, ignore_errors=True)  # a partial copy of an older layout
            os.rename(building, site)
    return site


def metadata() -> dict[str, Any]:
    """The generator's summary of the site (hosts, page counts, topic pages)."""
    return json.loads((ensure_site() / "demo.json").read_text("utf-8"))


def seeds() -> list[str]:
    return list(SEEDS)

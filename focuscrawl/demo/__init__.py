"""The bundled demo web: a thousand real-text pages on seven ``*.demo.test`` hosts.

The pages are made by :mod:`focuscrawl.demo.generate` from text Python itself ships (module and
function docstrings, the language-reference topics of ``pydoc_data``, IDLE's release notes) and
committed under ``site/`` so every machine crawls the same web, offline.  Serve it with
``python -m focuscrawl.demo serve`` and reach it through ``http_proxy``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SITE_DIR = Path(__file__).resolve().parent / "site"
META_FILE = SITE_DIR / "demo.json"  # written by the generator: hosts, seeds, topic clusters

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


def metadata() -> dict[str, Any]:
    """The generator's summary of the committed site (hosts, page counts, topic pages)."""
    return json.loads(META_FILE.read_text("utf-8"))


def seeds() -> list[str]:
    return list(SEEDS)

"""Each content mode through `scrapy crawl topic` on a tiny loopback web: the exported fields."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_twisted

from focuscrawl.demo.webserver import Page, ServerProcess
from tests.support.project import crawl, project_settings

ROOT = Path(__file__).resolve().parents[2]
STORY = ("The lighthouse keeper logged every ship that passed the reef in a leather-bound book, "
         "and the harbour museum has now put the whole logbook online for readers.")
MORE = ("Historians say the entries show how the shipping lanes moved after the new breakwater "
        "was built, and how often the fog signal had to be sounded in winter.")


def article() -> str:
    return f"""<html lang="en"><head><title>The keeper's logbook</title>
<meta name="description" content="A lighthouse logbook, online.">
<meta name="author" content="Grace Darling">
<meta property="article:published_time" content="2023-09-01T09:00:00Z">
<meta property="article:modified_time" content="2023-10-15T12:30:00Z">
<link rel="canonical" href="http://news.test/logbook">
</head><body><nav><a href="/index.html">Home</a> <a href="/weather.html">Weather</a></nav>
<article><h1>The keeper's logbook</h1><p>{STORY}</p><h2>What it shows</h2><p>{MORE}</p>
<ul><li>Ships by year</li><li>Fog signals by month</li></ul>
<p>See <a href="/index.html">all our stories</a>.</p></article>
<footer>Copyright the Lighthouse Gazette, all rights reserved.</footer></body></html>"""


PAGES = {
    "news.test": {
        "/index.html": Page("<html><head><title>Stories</title></head><body><nav>"
                            "<a href='/logbook.html'>The keeper's logbook</a></nav></body></html>"),
        "/logbook.html": Page(article()),
        "/blob.html": Page(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8),
    },
}
METADATA = ("language", "language_confidence", "published", "modified", "author",
            "description", "canonical")


@pytest.fixture(scope="module")
def server():
    with ServerProcess(pages=PAGES) as srv:
        yield srv


@pytest.mark.parametrize("mode", ["text", "markdown", "html"])
@pytest_twisted.ensureDeferred
async def test_each_mode_exports_the_main_content_and_metadata(server, proxy_to, mode):
    proxy_to(server)
    result = await crawl(project_settings(FOCUS_DELAY=0), keywords="lighthouse logbook",
                         seeds="http://news.test/index.html", content=mode)
    pages = {item["url"]: item for item in result.items}
    assert set(pages) == {"http://news.test/index.html", "http://news.test/logbook.html"}
    page = pages["http://news.test/logbook.html"]
    assert {mode, *METADATA} <= set(page)
    assert not {"text", "markdown", "html"} - {mode} & set(page)  # only the mode's field
    assert STORY in page[mode] and MORE in page[mode]
    assert "Weather" not in page[mode] and "all rights reserved" not in page[mode]
    assert page["language"] == "en" and 0.5 < page["language_confidence"] <= 1
    assert page["published"] == "2023-09-01" and page["modified"] == "2023-10-15"
    assert page["author"] == "Grace Darling"
    assert page["description"] == "A lighthouse logbook, online."
    assert page["canonical"] == "http://news.test/logbook"
    if mode == "markdown":
        assert "## What it shows" in page[mode] and "- Ships by year" in page[mode]
        assert "[all our stories](http://news.test/index.html)" in page[mode]
    if mode == "html":
        assert "<h2>What it shows</h2>" in page[mode] and "<li>Ships by year</li>" in page[mode]
    # text_length counts the main text, not the markup nor the navigation
    assert len(STORY) + len(MORE) < page["text_length"] < len(page[mode]) + 1
    index = pages["http://news.test/index.html"]
    # a page of links has little or no main content: an answer, no failure
    assert index["text_length"] <= len("The keeper's logbook")
    assert result.stats["focus/content/extracted"] == 2
    assert result.stats.get("focus/content/failed", 0) == 0
    assert result.stats["focus/content/language/en"] == 1


@pytest_twisted.ensureDeferred
async def test_none_exports_todays_fields_only_and_min_score_skips_extraction(server, proxy_to):
    proxy_to(server)
    result = await crawl(project_settings(FOCUS_DELAY=0), keywords="lighthouse logbook",
                         seeds="http://news.test/index.html", content="none")
    assert len(result.items) == 2
    for item in result.items:
        assert not {"text", "markdown", "html", *METADATA} & set(item)
    assert "focus/content/extracted" not in result.stats
    # FOCUS_MIN_SCORE: the index (below it) is crawled, scored and dropped, never extracted
    result = await crawl(project_settings(FOCUS_DELAY=0, FOCUS_MIN_SCORE=0.2),
                         keywords="lighthouse", seeds="http://news.test/index.html")
    assert [i["url"] for i in result.items] == ["http://news.test/logbook.html"]
    assert result.stats["focus/content/extracted"] == 1
    assert result.stats["focus/items_below_min_score"] == 1


@pytest_twisted.ensureDeferred
async def test_a_binary_body_sent_as_html_is_counted_not_fatal(server, proxy_to):
    proxy_to(server)
    result = await crawl(project_settings(FOCUS_DELAY=0, FOCUS_DROP_BINARY=False),
                         keywords="lighthouse", seeds="http://news.test/blob.html")
    assert [i["text"] for i in result.items] == [""]
    assert result.stats["focus/content/failed/binary"] == 1
    assert result.stats["finish_reason"] == "finished"


def test_a_bad_content_argument_or_setting_exits_1_with_one_line(tmp_path):
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "settings", "PYTHONPATH": str(ROOT)}
    for extra in (["-a", "content=pdf"], ["-s", "FOCUS_CONTENT=pdf"],
                  ["-s", "FOCUS_CONTENT_EXTRACTOR=magic"]):
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "topic", "-a", "keywords=x",
             "-a", "seeds=http://127.0.0.1:9/", *extra, "-O", str(tmp_path / "o.jsonl")],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1, proc.stderr[-2000:]
        errors = [line for line in proc.stderr.splitlines() if "ERROR: focuscrawl:" in line]
        assert len(errors) == 1 and ("content" in errors[0] or "EXTRACTOR" in errors[0])
    assert not (tmp_path / "o.jsonl").exists() or not (tmp_path / "o.jsonl").read_text()
    json.dumps(PAGES["news.test"]["/index.html"].to_json())

"""The HTML report drawn by a real Chromium (the report itself: tests/unit/test_report.py)."""

from __future__ import annotations

import json

from focuscrawl.evaluation.report import main
from tests.support.report import crawl_rows, write_crawl


def test_html_report_renders_in_chromium(tmp_path):
    """A real browser draws every picture at a real size (the file opened from disk)."""
    import subprocess
    import sys

    from scrapy.settings import Settings

    from focuscrawl.seam.render import chromium_path

    rows = crawl_rows([0.3, 0.0, 0.1, 0.2] * 5, "h")
    for i, row in enumerate(rows):
        row["language"] = "fr" if i % 4 == 0 else "en"  # a crawl with content (-a content)
    crawl = write_crawl(tmp_path / "crawl.jsonl", rows)
    out = tmp_path / "report.html"
    assert main([crawl, "--html", str(out)]) == 0
    script = f"""
import json
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path={chromium_path(Settings())!r})
    page = browser.new_page()
    asked = []  # anything the page tries to load besides itself
    page.on("request", lambda r: asked.append(r.url) if r.url != {out.as_uri()!r} else None)
    page.goto({out.as_uri()!r})
    sizes = page.eval_on_selector_all(
        "section svg", "els => els.map(e => [e.closest('section').id, "
        "e.getBoundingClientRect().width, e.getBoundingClientRect().height])")
    facts = page.inner_text("dl")
    print(json.dumps({{"sizes": sizes, "asked": asked, "facts": facts}}))
    browser.close()
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout)
    assert seen["asked"] == []
    sizes = seen["sizes"]
    assert [s[0] for s in sizes] == ["harvest", "hosts", "scores", "best"]
    assert all(w > 100 and h > 50 for _, w, h in sizes), sizes
    assert "en 75% · fr 25%" in seen["facts"]  # the language mix, as a reader sees it

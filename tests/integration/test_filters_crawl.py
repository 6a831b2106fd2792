"""A crawl stops fetching an irrelevant directory (the filters themselves:
tests/unit/test_filters.py)."""

from __future__ import annotations

import pytest_twisted

from focuscrawl.demo.webserver import Page, ServerProcess
from tests.support.project import crawl, project_settings

HOST = "dirs.test"


def dirs_site() -> dict[str, dict[str, Page]]:
    junk = "".join(f'<a href="/junk/{i}.html">junk {i}</a>' for i in range(30))
    good = "".join(f'<a href="/good/{i}.html">regex {i}</a>' for i in range(6))
    pages = {"/": Page(f"<html><title>regex hub</title><body>regex {junk} {good}</body></html>")}
    for i in range(30):
        pages[f"/junk/{i}.html"] = Page(
            f"<html><title>cooking {i}</title><body>soup bread salt "
            f'<a href="/junk/{(i + 1) % 30}.html">next</a></body></html>')
    for i in range(6):
        pages[f"/good/{i}.html"] = Page(
            f"<html><title>regex {i}</title><body>regex pattern regex</body></html>")
    return {HOST: pages}


@pytest_twisted.ensureDeferred
async def test_crawl_stops_fetching_an_irrelevant_directory(proxy_to) -> None:
    with ServerProcess(pages=dirs_site()) as server:
        proxy_to(server)
        settings = project_settings(
            FOCUS_STRATEGY="breadth-first",  # junk is not put last by the crawl order itself
            FOCUS_DELAY=0, FOCUS_IRRELEVANT_DIRS=True, FOCUS_IRRELEVANT_DIR_PAGES=5,
            FOCUS_MAX_PAGES=100)
        result = await crawl(settings, keywords="regex", seeds=server.url(HOST, "/"))
        paths = [r["path"] for r in server.read_log()]
    junk = [p for p in paths if p.startswith("/junk/")]
    # rejected once 6 junk pages were scored; at most the one in flight follows them
    assert 6 <= len(junk) <= 7
    assert all(f"/good/{i}.html" in paths for i in range(6))
    stats = result.stats
    assert stats["focus/dirs/rejected"] == 1
    dropped = stats.get("focus/filtered/irrelevant_dir_queued", 0)
    assert dropped >= 20 and dropped + len(junk) == 30
    assert stats["focus/not_fetched/irrelevant_dir"] == 30 - len(junk)
    assert stats["focus/not_fetched/irrelevant_dir_pct"] > 0


# -- end to end: irrelevant directories stop being fetched -------------------------------------

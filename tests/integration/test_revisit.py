"""A continuous crawl (revisit=true) of the changing web: what it exports against the web's
truth, conditional requests, gone pages, the page budget and politeness."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest_twisted

from focuscrawl.demo.webserver import ServerProcess
from focuscrawl.seam import sitemaps
from focuscrawl.seam.services import FocusServices
from focuscrawl.seam.watch.dashboard.extension import Dashboard
from focuscrawl.seam.watch.dashboard.metrics import exposition
from tests.support.project import crawl, project_settings
from tests.support.revisits import (
    CHANGING,
    SEED,
    TOPIC,
    changed_between_lines,
    epoch,
    expected_changes,
    fetch_times,
    linkers,
    site,
)

DELAY = 0.05
MAX_PAGES = 20  # of the web's 24: the budget bounds the distinct pages kept


@pytest_twisted.ensureDeferred
async def test_a_continuous_crawl_exports_the_changes_the_web_made(proxy_to, monkeypatch
                                                                   ) -> None:
    monkeypatch.setattr(sitemaps, "SITEMAP_EVERY", 1.0)  # the web's hour is a second
    with ServerProcess(pages=site(), changing={**CHANGING, "sitemaps": True}) as srv:
        proxy_to(srv)
        settings = project_settings(FOCUS_DELAY=DELAY, FOCUS_START_LOG=10_000,
                                    CLOSESPIDER_TIMEOUT=8, FOCUS_REVISIT_PRIOR=5.0,
                                    FOCUS_DASHBOARD="127.0.0.1:0")
        result = await crawl(settings, keywords=TOPIC, seeds=SEED,
                             strategy="breadth-first", max_pages=str(MAX_PAGES), revisit="true")
        truth = srv.changes()
        rows = srv.read_log()
    stats = result.stats
    assert stats["finish_reason"] == "closespider_timeout"  # it went on until stopped
    lines: dict[str, list[dict]] = defaultdict(list)
    for item in result.items:
        lines[item["url"]].append(item)
    fetches = fetch_times(rows)
    # the page budget bounds the distinct pages kept, not the fetches
    assert len(lines) == MAX_PAGES
    assert stats["downloader/response_status_count/304"] > 0  # conditional requests
    for url, items in lines.items():
        versions = [i["version"] for i in items if not i["gone"]]
        assert versions == list(range(1, len(versions) + 1)), url  # each change once, in order
        assert [i["changed"] for i in items if not i["gone"]] == [False] + [True] * (
            len(versions) - 1)
        assert len({i["first_seen"] for i in items}) == 1
        for before, after in zip(items, items[1:], strict=False):
            # a line says changed only if the web changed between the two fetches
            assert after["gone"] or changed_between_lines(fetches, truth, before, after), url
    # every change the fetches could see was exported, and nothing else (noise included)
    found = expected_changes(fetches, truth)
    exported = Counter({u: sum(i["changed"] for i in items) for u, items in lines.items()})
    assert +exported == +found
    noisy = [u for u in lines if truth["pages"][u]["changes"] == [] and len(fetches[u]) > 2]
    assert noisy and all(sum(not i["gone"] for i in lines[u]) == 1 for u in noisy)
    # a page gone (410) is exported once, after it went: exactly the pages fetched after they
    # went (the server's log and truth say which; a crawl starved of CPU may reach none)
    for url, items in lines.items():
        gone = [i for i in items if i["gone"] and i["status"] == 410]
        went = truth["pages"][url]["gone"]
        assert len(gone) == (1 if went is not None and fetches[url][-1] > went else 0), url
        for item in gone:
            assert item["version"] == items[-2]["version"]
    # so is a page every kept page that linked to it stopped linking to (it is still served):
    # only once each of them was fetched again after the web took its link away, and every
    # such page whose linkers were all fetched twice since (the first fetch then parsed)
    linked_from = linkers()
    orphans = {}
    for url, items in lines.items():
        gone = [i for i in items if i["gone"] and i["status"] != 410]
        assert len(gone) <= 1 and all(i["status"] == 200 and i is items[-1] for i in gone), url
        if gone:
            orphans[url] = gone[0]
    assert orphans  # the web took links away, and the crawl saw it
    for url, item in orphans.items():
        unlinked = truth["pages"][url]["unlinked"]
        assert unlinked is not None, url
        declared = epoch(item["fetched_at"])
        for linker in linked_from[url] & set(lines):
            assert any(unlinked < t <= declared + 0.001 for t in fetches[linker]), (url, linker)
    for url in lines:
        unlinked = truth["pages"][url]["unlinked"]
        kept_linkers = linked_from[url] & set(lines)
        if (unlinked is None or truth["pages"][url]["gone"] is not None or url == SEED
                or not kept_linkers
                or any(truth["pages"][p]["gone"] is not None for p in kept_linkers)):
            continue
        if all(sum(t > unlinked for t in fetches[p]) >= 2 for p in kept_linkers):
            assert url in orphans, url
    # per-server politeness holds for revisits and discovery alike
    servers = FocusServices.of(result.crawler).policy.servers
    for host in ("a.test", "b.test"):
        starts = list(servers[host].starts)
        assert min(b - a for a, b in zip(starts, starts[1:], strict=False)) >= DELAY - 0.001
        assert max(r["inflight_host"] for r in rows if r["host"] == host) == 1
    assert stats["focus/revisit/fetches"] > stats["focus/revisit/pages"]
    # the sitemaps robots.txt names were read, and their lastmod made changed pages due
    assert stats["focus/revisit/sitemap_fetches"] >= 1
    assert stats["focus/revisit/sitemap_hints"] >= 1
    assert 0.0 < stats["focus/revisit/freshness"] <= 1.0
    # the dashboard and /metrics show them
    dashboard = result.crawler.get_extension(Dashboard)
    shown = dashboard.status.final["revisit"]
    assert shown["changes"] == sum(exported.values()) == stats["focus/revisit/changed"]
    assert shown["gone"] == sum(i["gone"] for i in result.items)
    assert shown["per_minute"] > 0 and 0.0 < shown["freshness"] <= 1.0
    metrics = exposition(dashboard.registry).decode()
    assert f'focuscrawl_revisits_total{{outcome="changes"}} {shown["changes"]}.0' in metrics
    assert "focuscrawl_estimated_freshness" in metrics

"""Example pages (``-a examples=...``, ``-a negatives=...``) through the real engine against a
local multi-host server: fetched first, once, outside MAX_PAGES, and the page classifier's
``relevance`` on every item."""

from __future__ import annotations

import pytest
import pytest_twisted

from focuscrawl.demo.webserver import Page, ServerProcess
from tests.support.project import crawl, project_settings

TOPIC = ("orchid greenhouse humidity potting bark epiphyte roots bloom watering misting "
         "repotting pseudobulb")
OFF = "football league referee goal striker penalty stadium transfer season midfield"


def html(title: str, body: str, links: tuple[str, ...] = ()) -> Page:
    anchors = " ".join(f'<a href="{href}">link {i}</a>' for i, href in enumerate(links))
    return Page(f"<html><head><title>{title}</title></head>"
                f"<body><p>{body}</p>{anchors}</body></html>")


def words(vocab: str, shift: int) -> str:
    terms = vocab.split()
    return " ".join(terms[(i * 3 + shift) % len(terms)] for i in range(40))


ON = ["http://a.test/t1.html", "http://a.test/t2.html", "http://b.test/t3.html",
      "http://b.test/t4.html"]
OFF_PAGES = ["http://a.test/o1.html", "http://b.test/o2.html", "http://b.test/o3.html"]
PAGES = {
    "a.test": {
        "/index.html": html("Index", "orchid care and other things",
                            tuple(ON + OFF_PAGES)),
        "/t1.html": html("Orchid care", "orchid " + words(TOPIC, 1)),
        "/t2.html": html("Potting", words(TOPIC, 2)),
        "/o1.html": html("Match report", words(OFF, 1)),
    },
    "b.test": {
        "/t3.html": html("Bark", words(TOPIC, 3)),
        "/t4.html": html("Roots", words(TOPIC, 4)),
        "/o2.html": html("League", words(OFF, 2)),
        "/o3.html": html("Transfers", words(OFF, 3)),
    },
    "c.test": {  # the examples: linked from nowhere
        "/e1.html": html("Greenhouse orchids", "orchid " + words(TOPIC, 5)),
        "/e2.html": html("Misting", words(TOPIC, 6)),
    },
    "d.test": {  # the negatives
        "/n1.html": html("Penalties", words(OFF, 4)),
        "/n2.html": html("Stadiums", words(OFF, 5)),
    },
    "f.test": {  # robots.txt unreachable: an example is refused, not held
        "/robots.txt": Page("", status=503),
        "/e3.html": html("Orchids", words(TOPIC, 7)),
    },
}
EXAMPLES = ["http://c.test/e1.html", "http://c.test/e2.html", "http://c.test/missing.html"]
NEGATIVES = ["http://d.test/n1.html", "http://d.test/n2.html"]


@pytest.fixture(scope="module")
def server():
    with ServerProcess(pages=PAGES) as srv:
        yield srv


@pytest.mark.parametrize("strategy", ["learned", "best-first"])
@pytest_twisted.ensureDeferred
async def test_examples_fetched_first_once_outside_max_pages(server, proxy_to, strategy):
    proxy_to(server)
    start = len(server.read_log())
    seeds = "http://a.test/index.html,http://a.test/t1.html"  # t1 is an example too
    result = await crawl(project_settings(FOCUS_DELAY=0), keywords="orchid", seeds=seeds,
                         examples=" ".join(EXAMPLES + ["http://a.test/t1.html"]),
                         negatives=",".join(NEGATIVES), max_pages="6", strategy=strategy)
    rows = [r for r in server.read_log()[start:] if r["path"] != "/robots.txt"]
    fetched = [f"http://{r['host']}{r['path']}" for r in rows]
    examples = set(EXAMPLES + NEGATIVES)
    # every example answered before the first seed was asked for
    assert set(fetched[:len(examples)]) == examples, fetched
    assert fetched.count("http://a.test/t1.html") == 1  # an example that is a seed: once
    stats = result.stats
    assert stats["focus/examples/fetched"] == 5  # four, and the seed t1 when crawled
    assert stats["focus/examples/failed"] == 1  # the 404
    items = {i["url"]: i for i in result.items}
    assert len(items) == 6 and stats["focus/pages_fetched"] == 6  # examples outside MAX_PAGES
    assert not examples & set(items)  # and no items
    assert all(isinstance(i["relevance"], float) for i in items.values())
    on = [i["relevance"] for u, i in items.items() if u in ON]
    off = [i["relevance"] for u, i in items.items() if u in OFF_PAGES]
    assert on and off and min(on) > max(off), items


@pytest.mark.parametrize(("seeds", "verdict"), [
    ("http://a.test/t1.html,http://c.test/e1.html,http://b.test/o2.html", 1),
    ("http://a.test/o1.html,http://b.test/o3.html,http://a.test/t1.html", 0)])
@pytest_twisted.ensureDeferred
async def test_with_examples_auto_the_learned_order_decides_from_the_seeds(
        server, proxy_to, seeds, verdict):
    """-a examples=auto: the seeds are examples if half of them or more match the keywords
    (two of three say "orchid" here, one of three there); the crawl reports the verdict, and
    the page classifier takes the seeds' pages as its examples if they are."""
    proxy_to(server)
    result = await crawl(project_settings(FOCUS_DELAY=0, FOCUS_RELEVANT_SCORE=0.05),
                         keywords="orchid", seeds=seeds, examples="auto", max_pages="3")
    matching = [i for i in result.items if i["score"] >= 0.05]
    assert len(result.items) == 3 and len(matching) == 1 + verdict
    assert result.stats["focus/seeds_are_examples"] == verdict
    assert result.stats.get("focus/examples/fetched", 0) == 3 * verdict


@pytest_twisted.ensureDeferred
async def test_without_examples_the_classifier_grows_from_the_keywords(server, proxy_to):
    proxy_to(server)
    result = await crawl(project_settings(FOCUS_DELAY=0), keywords="orchid",
                         seeds="http://a.test/index.html", max_pages="8",
                         strategy="best-first")
    assert "focus/examples/fetched" not in result.stats
    items = {i["url"]: i for i in result.items}
    assert len(items) == 8
    # no model until an on-topic and an off-topic page came; then a probability per page
    later = [i for i in items.values() if i["relevance"] is not None]
    assert later and items["http://a.test/index.html"]["relevance"] is None


@pytest_twisted.ensureDeferred
async def test_an_example_whose_robots_txt_fails_is_refused_and_the_crawl_goes_on(
        server, proxy_to):
    proxy_to(server)
    start = len(server.read_log())
    result = await crawl(project_settings(FOCUS_DELAY=0), keywords="orchid",
                         seeds="http://a.test/index.html", max_pages="3",
                         examples="http://f.test/e3.html,http://c.test/e1.html")
    stats = result.stats
    assert stats["focus/examples/fetched"] == 1 and stats["focus/examples/failed"] == 1
    assert stats["focus/robots/unreachable"] == 1
    assert len(result.items) == 3
    paths = [(r["host"], r["path"]) for r in server.read_log()[start:]]
    assert ("f.test", "/e3.html") not in paths


@pytest.mark.parametrize("args, message", [
    ({"examples": "not-a-url"}, "malformed example URL"),
    ({"examples": "/no/such/examples.txt"}, "examples file not found"),
    ({"negatives": "ftp://x.test/a"}, "malformed negative URL"),
])
@pytest_twisted.ensureDeferred
async def test_bad_example_arguments_stop_the_crawl(args, message):
    result = await crawl(project_settings(), keywords="orchid", seeds="http://a.test/",
                         **args)
    assert result.stats["finish_reason"] == "bad_arguments"
    assert message in result.stats["focus/argument_error"]
    assert "downloader/request_count" not in result.stats

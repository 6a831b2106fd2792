"""The changing demo web (focuscrawl.demo.changing) on a fake clock: the truth it tells, the
pages it serves, ETag / Last-Modified / 304 / 410."""

from __future__ import annotations

from email.utils import formatdate

from focuscrawl.core.extract import extract
from focuscrawl.demo.changing import ChangeConfig, ChangingWeb
from focuscrawl.demo.webserver import Response

PAGE = (b"<!DOCTYPE html><html><head><title>T</title></head><body>"
        b"<header><nav><a href='/'>Home</a></nav></header>"
        b"<main><h1>Title</h1><p>Body text of the page.</p></main>"
        b"<footer><p>About</p></footer></body></html>")


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def serve(web: ChangingWeb, url_path: str = "/p.html", headers: dict | None = None) -> Response:
    return web.serve("a.test", url_path, Response(200, PAGE), headers or {})


def urls(n: int) -> list[str]:
    return [f"http://a.test/p{i}.html" for i in range(n)]


def test_rates_and_changes_are_the_seeds_not_the_callers():
    one = ChangingWeb(ChangeConfig(seed=5), start=0.0, clock=Clock())
    two = ChangingWeb(ChangeConfig(seed=5), start=0.0, clock=Clock())
    for url in reversed(urls(50)):  # asked in another order, at other times
        two.page(url).at(1e6)
    for url in urls(50):
        assert one.page(url).rate == two.page(url).rate
        assert one.page(url).changed_before(5e5) == two.page(url).changed_before(5e5)
    rates = [one.page(u).rate for u in urls(400)]
    assert 0.2 < sum(r == 0 for r in rates) / 400 < 0.4  # some pages never change
    assert max(rates) > 10 * min(r for r in rates if r > 0)  # some often, some rarely
    other = ChangingWeb(ChangeConfig(seed=6), start=0.0, clock=Clock())
    assert [other.page(u).rate for u in urls(50)] != rates[:50]


def changing_page(web: ChangingWeb, noisy: bool | None = None) -> str:
    """The path of a page that changes (and whose chrome changes too, or not)."""
    for i in range(1000):
        clock = web.page(f"http://a.test/p{i}.html")
        if clock.rate > 0 and clock.gone_at == float("inf") and (
                noisy is None or (clock.noise_rate > 0) == noisy):
            return f"/p{i}.html"
    raise AssertionError("no such page")


def test_a_change_is_to_the_main_content_and_noise_is_not():
    clock = Clock()
    web = ChangingWeb(ChangeConfig(seed=1, speed=1.0, noise=1.0, noise_interval=60.0),
                      start=clock.now, clock=clock)
    path = changing_page(web)
    url = f"http://a.test{path}"
    truth = web.page(url)
    first = serve(web, path)
    before = extract(first.body.decode(), url)
    # to a moment after a chrome change but before the next content change
    truth.at(1e7)
    t_noise = next(t for t in truth.noise if t < truth.changes[0])
    clock.now = web.real_time(t_noise + 1e-6)
    noisy = serve(web, path)
    assert noisy.body != first.body and noisy.headers["ETag"] != first.headers["ETag"]
    assert extract(noisy.body.decode(), url).main_text == before.main_text
    clock.now = web.real_time(truth.changes[0] + 1e-6)
    changed = serve(web, path)
    after = extract(changed.body.decode(), url)
    assert after.main_text != before.main_text
    assert "Revision 1:" in after.main_text


def test_etag_last_modified_and_304():
    clock = Clock(1_000_000.0)
    web = ChangingWeb(ChangeConfig(seed=2, speed=1.0, noise=0.0), start=clock.now, clock=clock)
    path = changing_page(web, noisy=False)
    truth = web.page(f"http://a.test{path}")
    truth.at(1e7)
    clock.now = web.real_time(truth.changes[0] + 0.5)
    first = serve(web, path)
    etag = first.headers["ETag"]
    assert first.headers["Last-Modified"] == formatdate(web.real_time(truth.changes[0]),
                                                        usegmt=True)
    assert serve(web, path, {"If-None-Match": etag}).status == 304
    assert serve(web, path, {"If-None-Match": '"other", ' + etag}).status == 304
    assert serve(web, path, {"If-Modified-Since": first.headers["Last-Modified"]}).status == 304
    # If-None-Match decides when both are sent
    assert serve(web, path, {"If-None-Match": '"old"',
                             "If-Modified-Since": first.headers["Last-Modified"]}).status == 200
    clock.now = web.real_time(truth.changes[1] + 0.5)
    again = serve(web, path, {"If-None-Match": etag})
    assert again.status == 200 and again.headers["ETag"] != etag
    assert serve(web, path, {"If-Modified-Since": "not a date"}).status == 200


def test_a_gone_page_answers_410_and_other_responses_pass():
    clock = Clock()
    web = ChangingWeb(ChangeConfig(seed=3, speed=1.0, gone=1.0, gone_within=100.0),
                      start=clock.now, clock=clock)
    assert serve(web).status == 200
    clock.now += 101.0
    assert serve(web).status == 410
    redirect = web.serve("a.test", "/r", Response(301, b"", headers={"Location": "/x"}), {})
    assert redirect.status == 301 and "ETag" not in redirect.headers
    text = web.serve("a.test", "/robots.txt", Response(200, b"User-agent: *",
                                                       "text/plain; charset=utf-8"), {})
    assert text.body == b"User-agent: *"


def test_the_report_is_the_truth_up_to_now_on_the_wall_clock():
    clock = Clock(500.0)
    web = ChangingWeb(ChangeConfig(seed=4, speed=100.0, noise=0.0), start=clock.now, clock=clock)
    path = changing_page(web)
    serve(web, path)
    clock.now += 3600.0
    report = web.report()
    page = report["pages"][f"http://a.test{path}"]
    truth = web.page(f"http://a.test{path}")
    assert page["rate"] == truth.rate * 100.0
    assert page["changes"] == [500.0 + t / 100.0 for t in truth.changes if t <= 360000.0]
    assert all(t <= clock.now for t in page["changes"])
    assert report["start"] == 500.0 and report["config"]["seed"] == 4


def test_the_sitemap_tells_each_live_pages_last_change():
    from scrapy.utils.sitemap import Sitemap

    from focuscrawl.seam.sitemaps import lastmod_epoch

    clock = Clock()
    web = ChangingWeb(ChangeConfig(seed=4, speed=1.0, sitemaps=True, gone=0.0), start=clock.now,
                      clock=clock)
    path = changing_page(web)
    truth = web.page(f"http://a.test{path}")
    truth.at(1e7)
    clock.now = web.real_time(truth.changes[1] + 0.25)
    entries = list(Sitemap(web.sitemap("a.test", [path, "/never.html"])))
    assert [e["loc"] for e in entries] == [f"http://a.test{path}", "http://a.test/never.html"]
    assert abs(lastmod_epoch(entries[0]["lastmod"]) - web.real_time(truth.changes[1])) < 1e-5


def test_lastmod_dates_as_sites_write_them():
    from focuscrawl.seam.sitemaps import lastmod_epoch

    assert lastmod_epoch("1970-01-02") == 86400.0
    assert lastmod_epoch("1970-01-01T01:00:00Z") == 3600.0
    assert lastmod_epoch("1970-01-01T02:00:00.5+01:00") == 3600.5
    assert lastmod_epoch("yesterday") is None


def test_a_page_unlinked_loses_every_link_to_it_and_is_still_served():
    clock = Clock()
    web = ChangingWeb(ChangeConfig(seed=2, speed=1.0, never=1.0, noise=0.0, gone=0.0,
                                   unlinked=1.0, gone_within=100.0),
                      start=clock.now, clock=clock)
    at = web.page("http://a.test/").unlinked_at  # the page PAGE's "Home" link goes to
    first = serve(web)
    assert b"<a href='/'>Home</a>" in first.body
    clock.now += at + 1.0
    later = serve(web, headers={"If-None-Match": first.headers["ETag"]})
    assert later.status == 200 and later.headers["ETag"] != first.headers["ETag"]
    assert b"<a href" not in later.body and b"<nav>Home</nav>" in later.body  # its text stays
    page = extract(later.body.decode(), "http://a.test/p.html", with_context=False)
    assert page.main_text == extract(first.body.decode(), "http://a.test/p.html",
                                     with_context=False).main_text
    assert later.headers["Last-Modified"] == formatdate(1000.0 + at, usegmt=True)
    assert serve(web, "/").status == 200  # nothing links to it; it is still there
    assert web.report()["pages"]["http://a.test/"]["unlinked"] == 1000.0 + at

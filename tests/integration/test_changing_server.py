"""The demo web server in changing mode, over HTTP: conditional requests and the truth."""

from __future__ import annotations

from focuscrawl.demo.webserver import Page, ServerProcess

PAGES = {"a.test": {f"/p{i}.html": Page(f"<html><body><main><p>page {i}</p></main></body></html>")
                    for i in range(20)}}


def test_the_server_serves_the_changing_web_and_reports_its_truth():
    config = {"seed": 9, "speed": 1.0, "never": 0.0, "noise": 0.0, "gone": 0.0}
    with ServerProcess(pages=PAGES, changing=config) as srv:
        status, headers, body = srv.get("a.test", "/p3.html")
        assert status == 200 and b"page 3" in body
        assert headers["etag"].startswith('"') and "GMT" in headers["last-modified"]
        status, again, body = srv.get("a.test", "/p3.html",
                                      headers={"If-None-Match": headers["etag"]})
        assert (status, body, again["etag"]) == (304, b"", headers["etag"])
        assert srv.get("a.test", "/robots.txt")[0] == 200
        assert srv.get("a.test", "/nothing.html")[0] == 404
        report = srv.changes()
    assert list(report["pages"]) == ["http://a.test/p3.html"]
    assert report["pages"]["http://a.test/p3.html"]["rate"] > 0
    assert report["config"]["seed"] == 9


def test_a_server_without_changes_has_no_report():
    with ServerProcess(pages=PAGES) as srv:
        assert "etag" not in srv.get("a.test", "/p3.html")[1]
        assert srv.get("127.0.0.1", "/_changes.json")[0] == 404

"""The evaluation driver's parts without a crawl: strategy specs, the docweb topics, the WARC
index, an XHTML page's links (the recorded site and its replayed crawls:
tests/integration/test_compare_crawls.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.evaluation.compare import StrategySpec, docweb_topics


def test_strategy_specs() -> None:
    s = StrategySpec.parse("best-n-first:n=256,max_buffer=256,FOCUS_IDF=True")
    assert s.label == "best-n-first:n=256,max_buffer=256,FOCUS_IDF=True"
    assert s.spider_args() == {"strategy": "best-n-first", "n": "256", "max_buffer": "256"}
    assert s.settings() == {"FOCUS_IDF": "True"} and s.randomized
    assert not StrategySpec.parse("best-n-first:n=1").randomized
    assert not StrategySpec.parse("cho-distance").randomized
    for bad in ("depth-first", "cho:x=1", "cho:reorder"):
        with pytest.raises(ValueError):
            StrategySpec.parse(bad)


def test_docweb_topics_give_both_tasks() -> None:
    doc = {
        "urls": ["https://a/1", "https://a/2", "https://a/3", "https://a/4", "https://a/x/5"],
        "robots": {"rules": {"a": "User-agent: *\nDisallow: /x/\n"}, "disallowed_pages": 1},
        "topics": [{
            "id": "t", "keywords": "k w", "description": "d", "relevant": {"threshold": 0.15},
            "ranking": [[0, 0.9], [1, 0.5], [4, 0.4], [2, 0.1]],
            "seeds": {"from_examples": ["https://a/1"],
                      "from_neighbors": [{"url": "https://a/4", "distance": 3, "score": 0}]},
        }],
    }
    tasks = docweb_topics(doc, ["examples", "neighbors"])
    ex, nb = tasks["examples"][0], tasks["neighbors"][0]
    assert ex.seeds == ["https://a/1"] and nb.seeds == ["https://a/4"]
    # relevant (>= 0.15), robots-allowed, not an example: the same targets in both tasks
    assert ex.targets == nb.targets == ["https://a/2"]
    assert ex.judge_scores == {"https://a/1": 0.9, "https://a/2": 0.5, "https://a/x/5": 0.4,
                               "https://a/3": 0.1}


def _write_warc(path: Path, pages: dict[str, bytes], mode: str = "wb") -> None:
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, mode) as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, body in pages.items():
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                    protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                url, "response", payload=BytesIO(body), length=len(body), http_headers=http))


def test_warc_index_is_saved_and_reused_until_the_warc_changes(tmp_path, monkeypatch) -> None:
    """Replayed comparisons open the same WARC in every crawl: its index is scanned once."""
    from focuscrawl.evaluation.warcindex import INDEX_SUFFIX, WarcIndex

    warc = tmp_path / "r.warc.gz"
    _write_warc(warc, {"http://a.test/": b"<p>one</p>", "http://a.test/2": b"<p>two</p>"})
    first = WarcIndex(warc)
    assert Path(f"{warc}{INDEX_SUFFIX}").exists()

    def no_scan(self) -> None:
        raise AssertionError("scanned again")

    with monkeypatch.context() as m:
        m.setattr(WarcIndex, "_scan", no_scan)
        again = WarcIndex(warc)
        assert again.responses == first.responses and again.order == first.order
        assert again.body(again.get("http://a.test/2")) == b"<p>two</p>"
    _write_warc(warc, {"http://a.test/3": b"<p>three</p>"}, mode="ab")  # the WARC grew
    grown = WarcIndex(warc)
    assert len(grown) == 3 and grown.body(grown.get("http://a.test/3")) == b"<p>three</p>"
    # a damaged tail is indexed up to it, but such an index is never saved
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(warc.read_bytes()[:-20])
    assert WarcIndex(cut).truncated and not Path(f"{cut}{INDEX_SUFFIX}").exists()


def test_xhtml_page_with_xml_declaration_keeps_its_links() -> None:
    """The recording crawl must see XHTML pages (some manuals are XHTML): lxml refuses a
    decoded string that starts with an XML declaration naming an encoding."""
    from focuscrawl.core.extract import extract

    html = ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<!DOCTYPE html PUBLIC '
            '"-//W3C//DTD XHTML 1.0 Transitional//EN" "x.dtd"><html xmlns="http://www.w3.org/'
            '1999/xhtml"><head><title>Docs</title></head><body><p>Snapshots and indexes</p>'
            '<a href="preface.html">Preface</a></body></html>')
    page = extract(html, "https://docs.example.org/manual/15/index.html")
    assert page.title == "Docs" and page.text == "Snapshots and indexes Preface"
    assert [link.url for link in page.links] == ["https://docs.example.org/manual/15/preface.html"]

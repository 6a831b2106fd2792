import io
import json

from focuscrawl.evaluation.report import main, summarise
from tests.support.report import crawl_rows, write_crawl


def test_summary_counts_harvest_and_skips_torn_lines(tmp_path, capsys):
    rows = [
        {"url": "http://a.test/1", "score": 0.5, "hot": True, "title": "One", "order": 1},
        {"url": "http://b.test/2", "score": 0.1, "hot": False, "title": "Two", "order": 2},
        {"url": "http://a.test/3", "score": 0.3, "hot": False, "title": "Three", "order": 3},
    ]
    text = "\n".join(json.dumps(r) for r in rows) + '\n{"url": "http://a.test/4", "sco'
    s = summarise(io.StringIO(text), relevant=0.2, top=2)
    assert (s.pages, s.relevant, s.hot, s.bad_lines) == (3, 2, 1, 1)
    assert s.harvest_rate == 2 / 3
    assert s.hosts == {"a.test", "b.test"}
    assert [r["order"] for r in s.top] == [1, 3]
    path = tmp_path / "pages.jsonl"
    path.write_text(text)
    assert main([str(path), "--relevant", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "3 pages from 2 hosts; harvest rate 66.7%" in out
    assert main([str(tmp_path / "missing.jsonl")]) == 1


# -------------------------------------------------------------------- the HTML report
RESOURCE_TAGS = ("script", "link", "img", "image", "iframe", "object", "embed", "source",
                 "video", "audio")


def test_html_report_has_four_pictures_and_both_curves_and_needs_no_network(tmp_path, capsys):
    from lxml import html as lxml_html

    focused = write_crawl(tmp_path / "focused.jsonl",
                          crawl_rows([0.5, 0.3, 0.0, 0.25, 0.05, 0.4, 0.2, 0.01], "on"))
    bfs = write_crawl(tmp_path / "bfs.jsonl", crawl_rows([0.5, 0.0, 0.0, 0.01, 0.3, 0.0], "on"))
    out = tmp_path / "report.html"
    assert main([focused, "--relevant", "0.2", "--html", str(out), "--label", "focused",
                 "--compare", bfs, "--compare-label", "breadth-first"]) == 0
    printed = capsys.readouterr().out
    assert "harvest rate 62.5%" in printed  # the text report stays
    # within the shorter crawl's 6 pages; p0 is the one page relevant in both
    assert ("focused: 4 relevant pages in 6; breadth-first: 2 in 6; 1 found by both "
            "(score >= 0.2)") in printed
    assert f"HTML report: {out}" in printed

    doc = lxml_html.fromstring(out.read_bytes())
    sections = {s.get("id"): s for s in doc.iter("section")}
    assert list(sections) == ["harvest", "hosts", "scores", "best"]
    for ident, section in sections.items():
        svgs = section.xpath(".//*[local-name()='svg']")
        assert len(svgs) == 1, ident
        assert svgs[0].xpath(".//*[local-name()='path']"), ident  # something is drawn
    harvest_text = " ".join(sections["harvest"].xpath(".//*[local-name()='text']//text()"))
    assert "focused" in harvest_text and "breadth-first" in harvest_text
    hosts_text = " ".join(sections["hosts"].xpath(".//*[local-name()='text']//text()"))
    assert "on0.test" in hosts_text and "3/3" in hosts_text  # on0: scores 0.5, 0.25, 0.2
    # the best pages: a table of links, the best first, titles escaped
    links = sections["best"].xpath(".//table//a")
    assert [a.get("href") for a in links[:2]] == ["http://on0.test/p0.html",
                                                  "http://on2.test/p5.html"]
    assert links[0].text_content() == "Page 0 $x$ <b>"
    # opens offline: nothing is loaded from anywhere, and no script at all
    assert not doc.xpath("//script")
    for el in doc.iter():
        if not isinstance(el.tag, str):
            continue
        tag = el.tag.rsplit("}", 1)[-1]
        for attr, value in el.attrib.items():
            if attr.rsplit("}", 1)[-1] in ("src", "href", "srcset", "data") and tag != "a":
                assert value.startswith("#"), (tag, attr, value)  # in-document references
        if tag in RESOURCE_TAGS:
            assert tag == "image" and not el.get("src"), tag
    for style in doc.iter("style"):
        assert "url(" not in style.text and "@import" not in style.text




def test_the_language_mix_of_a_crawl_with_content(tmp_path, capsys):
    from lxml import html as lxml_html

    rows = crawl_rows([0.5, 0.3, 0.0, 0.25], "on")
    for row, language in zip(rows, ["en", "en", "de", None], strict=True):
        row["language"] = language
    path = write_crawl(tmp_path / "pages.jsonl", rows)
    out = tmp_path / "report.html"
    assert main([path, "--html", str(out)]) == 0
    assert "languages: en 50% · de 25% · unknown 25%" in capsys.readouterr().out
    doc = lxml_html.fromstring(out.read_bytes())
    facts = dict(zip(doc.xpath("//dl/dt/text()"), doc.xpath("//dl/dd"), strict=True))
    assert facts["languages"].text_content() == "en 50% · de 25% · unknown 25%"
    # a crawl without content (-a content=none) says nothing of languages
    plain = write_crawl(tmp_path / "plain.jsonl", crawl_rows([0.5, 0.3], "on"))
    assert main([plain]) == 0
    assert "languages" not in capsys.readouterr().out


def test_the_best_pages_opening_lines_are_printed(tmp_path, capsys):
    rows = crawl_rows([0.2, 0.6, 0.1], "on")
    rows[1]["text"] = "Regular expressions\n\nA pattern " + "matches text " * 20 + "\n" + \
        "\n".join(f"line {i}" for i in range(10))
    assert main([write_crawl(tmp_path / "pages.jsonl", rows)]) == 0
    out = capsys.readouterr().out.splitlines()
    at = out.index("the best page's opening lines (http://on1.test/p1.html):")
    assert out[at + 1:at + 6] == ["  Regular expressions", "  A pattern " + (
        "matches text " * 20)[:89] + "…", "  line 0", "  line 1", "  line 2"]

"""focuscrawl.core.content: a page's main content in each mode, its metadata, and bad input."""

from __future__ import annotations

import json

import pytest

from focuscrawl.core.content import (
    MODES,
    PageContent,
    extract_content,
    field_names,
    guess_language,
    parse_extractor,
    parse_mode,
)

URL = "http://news.test/2024/articles/tide.html"
PARAGRAPHS = [
    "The tide tables for the northern harbour were revised this spring after the survey "
    "ship measured the channel again and found the sandbanks had moved further east.",
    "Harbour pilots said the new tables matched what they had seen on the water for two "
    "winters, and that the old figures had been wrong by almost half an hour at neap tides.",
    "The survey also mapped the wreck of a nineteenth-century schooner that lies across "
    "the approach, which the harbour authority will now mark with a lit buoy.",
]


def article(*, head: str = "", lang: str = "en", body_extra: str = "") -> str:
    paragraphs = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    return f"""<!DOCTYPE html><html lang="{lang}"><head><title>Tide tables revised</title>
<meta name="description" content="New tide tables for the northern harbour.">
<meta name="author" content="Ada Lovelace">
<meta property="article:published_time" content="2024-03-05T08:00:00Z">
{head}</head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/sport">Sport</a></li>
<li><a href="/weather">Weather</a></li></ul></nav>
<article><h1>Tide tables revised</h1>{paragraphs}
<h2>What changes</h2>
<ul><li>High water up to 25 minutes later</li><li>A new buoy on the wreck</li></ul>
<table><tr><th>Tide</th><th>Old</th><th>New</th></tr>
<tr><td>Spring</td><td>06:10</td><td>06:20</td></tr>
<tr><td>Neap</td><td>09:40</td><td>10:05</td></tr></table>
<p>Read the <a href="/tables/north.pdf">full tables</a> or run
<code>tides --harbour north</code> in the harbour office's terminal.</p>
<pre><code>tides --harbour north --year 2024
tides --harbour south --year 2024</code></pre>
{body_extra}</article>
<footer><p>Copyright the Harbour Gazette. All rights reserved. Contact us.</p></footer>
</body></html>"""


@pytest.mark.parametrize("mode,extractor", [
    ("text", "resiliparse"), ("text", "trafilatura"), ("markdown", "resiliparse"),
    ("html", "resiliparse")])
def test_each_mode_puts_the_main_content_in_its_own_field(mode: str, extractor: str) -> None:
    page = extract_content(article(), URL, mode, extractor=extractor)
    assert not page.failed
    fields = page.fields()
    assert set(fields) == {*field_names(mode), "text_length"}
    assert fields[mode] == page.content
    assert [m for m in MODES if m in fields] == [mode]
    # the plain text is the article, without navigation or footer, in every mode
    for paragraph in PARAGRAPHS:
        assert paragraph in page.text
    assert "Sport" not in page.text and "All rights reserved" not in page.text
    assert "](" not in page.text and "<" not in page.text  # no markup in the plain text
    assert fields["text_length"] == len(page.text) == page.text_length


def test_text_mode_content_is_the_plain_text() -> None:
    page = extract_content(article(), URL, "text")
    assert page.content == page.text
    assert "# " not in page.content and "](" not in page.content


def test_markdown_keeps_headings_lists_links_tables_and_code() -> None:
    md = extract_content(article(), URL, "markdown").content
    assert "## What changes" in md
    assert "- High water up to 25 minutes later" in md
    assert "[full tables](http://news.test/tables/north.pdf)" in md
    assert "| Spring | 06:10 | 06:20 |" in md
    assert "`tides --harbour north`" in md
    assert "```\ntides --harbour north --year 2024\ntides --harbour south" in md


def test_html_keeps_the_structure_of_the_main_content() -> None:
    html = extract_content(article(), URL, "html").content
    assert html.startswith("<html>") and "<body>" in html
    for tag in ("<h2>", "<ul>", "<li>", "<table>", "<td>", "<pre>",
                '<a href="http://news.test/tables/north.pdf">'):
        assert tag in html
    assert "Sport" not in html and "All rights reserved" not in html


BOTH = pytest.mark.parametrize("mode,extractor", [
    ("text", "resiliparse"), ("text", "trafilatura"), ("markdown", "trafilatura")])


@BOTH
def test_metadata_the_page_states(mode: str, extractor: str) -> None:
    head = """<link rel="canonical" href="/articles/tide-tables">
<meta property="article:modified_time" content="2024-04-01T10:00:00+02:00">"""
    page = extract_content(article(head=head), URL, mode, extractor=extractor)
    assert page.author == "Ada Lovelace"
    assert page.description == "New tide tables for the northern harbour."
    assert page.published == "2024-03-05"
    assert page.modified == "2024-04-01"
    assert page.canonical == "http://news.test/articles/tide-tables"  # resolved
    assert page.language == "en" and page.language_confidence is not None
    assert 0.5 < page.language_confidence <= 1.0
    json.dumps(page.fields())  # every field is a JSON value


@BOTH
def test_json_ld_is_read_and_no_date_is_guessed(mode: str, extractor: str) -> None:
    ld = {"@context": "https://schema.org", "@graph": [{"@type": "WebSite", "name": "G"}, {
        "@type": "NewsArticle", "datePublished": "2024-03-01", "dateModified":
        "2024-05-20T07:00:00Z", "author": [{"@type": "Person", "name": "Grace Hopper"},
                                           {"@type": "Person", "name": "Ada Lovelace"}]}]}
    head = f'<script type="application/ld+json">{json.dumps(ld)}</script>'
    page = extract_content(article(head=head), URL, mode, extractor=extractor)
    assert page.modified == "2024-05-20" and page.published == "2024-03-01"
    assert page.author == "Grace Hopper; Ada Lovelace"
    # a date in the text is not a statement that the page was modified then
    said = "<p>Updated on 2024-06-30 after readers wrote in about the buoy's light.</p>"
    page = extract_content(article(body_extra=said), URL, mode, extractor=extractor)
    assert page.modified is None
    assert page.canonical == URL  # none stated: the page's own URL
    # broken JSON-LD is skipped
    broken = '<script type="application/ld+json">{"dateModified": </script>'
    assert extract_content(article(head=broken), URL, mode, extractor=extractor).modified is None


@BOTH
def test_microdata_dates_and_a_url_for_an_author(mode: str, extractor: str) -> None:
    extra = ('<p>Posted <time itemprop="dateModified" datetime="2024-07-02">2 July</time> '
             'by the harbour office, which keeps the tables up to date every season.</p>')
    head = '<meta property="article:author" content="https://news.test/staff/ada">'
    page = extract_content(article(head=head, body_extra=extra).replace(
        '<meta name="author" content="Ada Lovelace">', ""), URL, mode, extractor=extractor)
    assert page.modified == "2024-07-02"
    assert page.author is None  # a URL is no name


def test_the_language_is_guessed_from_the_main_text() -> None:
    french = article(lang="fr").replace(PARAGRAPHS[0], (
        "Les tables des marées du port du nord ont été révisées ce printemps, après que le "
        "navire hydrographique a mesuré de nouveau le chenal et constaté que les bancs de "
        "sable s'étaient déplacés vers l'est. Les pilotes du port disent que les nouvelles "
        "tables correspondent à ce qu'ils voient sur l'eau depuis deux hivers."))
    for p in PARAGRAPHS[1:]:
        french = french.replace(p, "")
    page = extract_content(french, URL, "text")
    assert page.language == "fr"
    assert guess_language("") == (None, None)
    assert guess_language("12345 67 -- 89") == (None, None)
    code, probability = guess_language("Der Hafen wurde im Frühjahr neu vermessen.")
    assert code == "de" and probability is not None and 0 < probability <= 1


def test_mode_none_extracts_nothing() -> None:
    page = extract_content(article(), URL, "none")
    assert page == PageContent("none") and page.fields() == {}
    assert field_names("none") == ()


def test_an_extractor_is_validated_with_one_line() -> None:
    assert parse_extractor("Trafilatura") == "trafilatura"
    with pytest.raises(ValueError, match="one of resiliparse, trafilatura"):
        parse_extractor("readability")


def test_a_mode_is_validated_with_one_line() -> None:
    assert parse_mode(" Markdown ") == "markdown"
    for bad in ("pdf", "", None, "text,html"):
        with pytest.raises(ValueError, match="content must be one of text, markdown, html, "
                                             "none") as e:
            parse_mode(bad)
        assert "\n" not in str(e.value)


# -- bad input ----------------------------------------------------------------------------------
FALLBACK = "the visible  text\nof the page"


@pytest.mark.parametrize("mode", ["text", "markdown", "html"])
@pytest.mark.parametrize("html,reason,text", [
    ("", "empty", ""),
    ("   \n\t ", "empty", ""),
    ("\x00\x01\x02PNG\x00" * 400, "binary", ""),  # a binary body sent as text/html
    ("\ufffd\ufffd\x07\ufffd" * 500, "binary", ""),  # bytes no charset decodes
])
def test_bad_input_gets_the_fallback_and_a_reason(mode: str, html: str, reason: str,
                                                   text: str) -> None:
    page = extract_content(html, URL, mode, fallback=FALLBACK)
    assert page.failed == reason
    assert page.text == text
    fields = page.fields()
    assert fields["text_length"] == len(text)
    if mode == "html" and text:
        assert fields["html"] == f"<html><body><p>{text}</p></body></html>"
    else:
        assert fields[mode] == text


@pytest.mark.parametrize("mode", ["text", "markdown"])
def test_garbage_gives_text_or_a_reason_never_an_error(mode: str) -> None:
    page = extract_content("<<<>>>&&&;;" * 50, URL, mode, fallback=FALLBACK)
    # an HTML5 parser reads it as text (resiliparse); lxml gives up (trafilatura)
    assert page.failed in ("", "unparsable")
    assert page.text == ("the visible text of the page" if page.failed else page.text)


@BOTH
def test_a_page_without_main_content_has_no_text_and_keeps_its_metadata(
        mode: str, extractor: str) -> None:
    index = """<html><head><meta name="description" content="All our tide tables.">
<link rel="canonical" href="http://news.test/tables/"></head><body><div><img src="a.png">
</div></body></html>"""
    page = extract_content(index, URL, mode, fallback=FALLBACK, extractor=extractor)
    assert not page.failed and page.text == "" and page.fields()[mode] == ""
    assert page.description == "All our tide tables."
    assert page.canonical == "http://news.test/tables/"
    assert page.language is None


def test_malformed_markup_is_extracted_as_far_as_it_goes() -> None:
    broken = article().replace("</p>", "").replace("</article>", "<div><span><b>")[:-200]
    page = extract_content(broken, URL, "markdown", fallback=FALLBACK)
    assert not page.failed
    assert PARAGRAPHS[1] in page.text


def test_a_wrong_charset_gives_text_never_an_error() -> None:
    # UTF-8 bytes read as Latin-1, as a server that declares the wrong charset gets them
    mojibake = article().encode("utf-8").decode("latin-1").replace(
        PARAGRAPHS[2], "Les marées ont changé à l'entrée du port: l'été sera différent.")
    page = extract_content(mojibake.encode("utf-8").decode("latin-1"), URL, "text",
                           fallback=FALLBACK)
    assert not page.failed and PARAGRAPHS[0] in page.text and "Ã" in page.text
    # and an XML declaration naming an encoding, which lxml refuses on a str
    xhtml = '<?xml version="1.0" encoding="ISO-8859-1"?>\n' + article()
    assert PARAGRAPHS[0] in extract_content(xhtml, URL, "text").text


def test_an_enormous_page_is_not_extracted() -> None:
    enormous = article(body_extra="<p>more words here</p>" * 200_000)
    page = extract_content(enormous, URL, "text", fallback=FALLBACK, max_chars=1_000_000)
    assert page.failed == "too_large" and page.text == "the visible text of the page"
    assert page.language == "en"  # of the fallback text


def test_an_extraction_past_its_cpu_time_is_abandoned_and_the_next_one_works() -> None:
    # a table of 40,000 rows takes the extractor seconds; 0.05 s of CPU is far from enough
    rows = "".join(f"<tr><td>cell {i}</td><td>{i * 7}</td></tr>" for i in range(40_000))
    slow = article(body_extra=f"<table>{rows}</table>")
    page = extract_content(slow, URL, "markdown", fallback=FALLBACK, timeout=0.05)
    assert page.failed == "timeout" and page.text == "the visible text of the page"
    after = extract_content(article(), URL, "markdown", timeout=0.05 * 100)
    assert not after.failed and PARAGRAPHS[0] in after.text


def test_a_page_nested_past_what_the_extractor_can_walk_gets_its_visible_text() -> None:
    # 100,000 nested <div>s held the reactor for minutes in one C call, which no timer stops
    deep = article(body_extra="<div>" * 100_000 + "deep words" + "</div>" * 100_000)
    page = extract_content(deep, URL, "text", fallback=FALLBACK)
    assert page.failed == "too_deep" and page.text == "the visible text of the page"
    # an ordinary page with as many tags, not deep, is extracted
    wide = article(body_extra="".join(f"<div><p>item {i}</p></div>" for i in range(3_000)))
    page = extract_content(wide, URL, "text", fallback=FALLBACK)
    assert not page.failed and PARAGRAPHS[0] in page.text

"""HTML -> title, visible text and links with anchor text.

No Scrapy import: it takes the decoded HTML and the page's URL.  Uses lxml (a Scrapy dependency)
directly because it is fast and tolerant of broken markup; any parse failure yields an empty page
rather than an exception, so a hostile page cannot crash the crawl.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urljoin

import lxml.etree
import lxml.html

# Elements whose text a reader never sees.
_INVISIBLE = {"script", "style", "noscript", "template", "head", "svg", "iframe", "object"}
_SPACE_RE = re.compile(r"\s+")
_REFRESH_RE = re.compile(r"^\s*\d*\s*[;,]?\s*url\s*=\s*['\"]?([^'\"]+)", re.IGNORECASE)
# lxml refuses a str that starts with an XML declaration naming an encoding (XHTML pages, e.g.
# PostgreSQL's DocBook manual): the text is decoded already, so the declaration is dropped.
_XML_DECL_RE = re.compile(r"^\s*<\?xml[^>]*\?>")
MAX_LINKS = 5000  # a page with more links is a link farm; the rest are ignored


@dataclass(frozen=True, slots=True)
class Outlink:
    url: str  # absolute, not yet canonicalised
    anchor: str
    nofollow: bool = False


@dataclass(slots=True)
class ExtractedPage:
    title: str = ""
    text: str = ""
    links: list[Outlink] = field(default_factory=list)
    base: str = ""


def _clean(text: str) -> str:
    return _SPACE_RE.sub(" ", text).strip()


def _visible_text(root: lxml.html.HtmlElement) -> str:
    parts: list[str] = []

    def walk(el: lxml.etree._Element) -> None:
        # Comments and processing instructions have a non-str tag: their own text is hidden.
        if isinstance(el.tag, str) and el.tag.lower() not in _INVISIBLE:
            if el.text:
                parts.append(el.text)
            for child in el:
                walk(child)
        if el.tail:
            parts.append(el.tail)

    body = root.find(".//body")
    start = body if body is not None else root
    # An iterative walk would avoid recursion limits on absurdly nested pages; lxml caps depth
    # at 256 by default (huge_tree off), so recursion stays bounded.
    try:
        walk(start)
    except RecursionError:
        return _clean(start.text_content())
    if start.tail:  # walk() added the body's tail, which lies outside the body
        parts.pop()
    return _clean(" ".join(parts))


def extract(html: str, url: str) -> ExtractedPage:
    """Parse ``html`` fetched from ``url``; never raises on bad markup."""
    page = ExtractedPage(base=url)
    if not html or not html.strip():
        return page
    try:
        root = lxml.html.document_fromstring(_XML_DECL_RE.sub("", html, count=1))
    except (lxml.etree.ParserError, ValueError, TypeError):
        return page
    base = url
    base_el = root.find(".//base[@href]")
    if base_el is not None:
        try:
            base = urljoin(url, base_el.get("href", "").strip())
        except ValueError:  # e.g. an invalid IPv6 literal: links resolve against the page
            base = url
    page.base = base
    title_el = root.find(".//title")
    if title_el is not None:
        page.title = _clean(title_el.text_content())
    page.text = _visible_text(root)
    seen: set[tuple[str, str]] = set()
    for el in root.iter("a", "area"):
        href = (el.get("href") or "").strip()
        if not href:
            continue
        anchor = _clean(el.text_content()) if el.tag == "a" else _clean(el.get("alt") or "")
        if not anchor:
            anchor = _clean(el.get("title") or "")
        try:
            absolute = urljoin(base, href)
        except ValueError:  # e.g. an invalid IPv6 literal
            continue
        key = (absolute, anchor)
        if key in seen:
            continue
        seen.add(key)
        rel = (el.get("rel") or "").lower().split()
        page.links.append(Outlink(absolute, anchor, "nofollow" in rel))
        if len(page.links) >= MAX_LINKS:
            break
    for meta in root.iter("meta"):
        if (meta.get("http-equiv") or "").lower() == "refresh":
            m = _REFRESH_RE.match(meta.get("content") or "")
            if m:
                try:
                    page.links.append(Outlink(urljoin(base, m.group(1).strip()), page.title))
                except ValueError:
                    pass
    return page

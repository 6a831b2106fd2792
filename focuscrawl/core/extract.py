"""HTML -> title, visible text and links with anchor text.

No Scrapy import: it takes the decoded HTML and the page's URL.  Uses lxml (a Scrapy dependency)
directly because it is fast and tolerant of broken markup; any parse failure yields an empty page
rather than an exception, so a hostile page cannot crash the crawl.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
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


CONTEXT_CHARS = 120  # text kept on each side of a link: the "nearby text" of link evidence


@dataclass(frozen=True, slots=True)
class Outlink:
    url: str  # absolute, not yet canonicalised
    anchor: str
    nofollow: bool = False
    context: str = ""  # visible text around the link (up to CONTEXT_CHARS each side)
    chrome: bool = False  # in the page's navigation, header, footer or a sidebar


@dataclass(slots=True)
class ExtractedPage:
    title: str = ""
    text: str = ""
    main_text: str = ""  # the text without navigation, header, footer and sidebars
    links: list[Outlink] = field(default_factory=list)
    base: str = ""


def _clean(text: str) -> str:
    return _SPACE_RE.sub(" ", text).strip()


# Page chrome: navigation, headers, footers, sidebars.  Their text is the same on every page of a
# site, so it says little about the page; a reader's "main text" leaves them out.  Generic
# markup only (HTML5 elements, ARIA roles, common class and id words), no site's own names.
_CHROME_TAGS = {"nav", "header", "footer", "aside"}
_CHROME_ROLES = {"navigation", "banner", "contentinfo", "search", "complementary", "menu"}
_CHROME_WORDS = {"nav", "navbar", "navigation", "menu", "sidebar", "footer", "header",
                 "breadcrumb", "breadcrumbs", "banner", "related", "toc", "topbar", "searchbox"}
_WORD_SPLIT_RE = re.compile(r"[-_\s]+")


def _is_chrome(el: lxml.etree._Element, tag: str) -> bool:
    if tag in _CHROME_TAGS:
        return True
    role = el.get("role")
    if role and role.lower() in _CHROME_ROLES:
        return True
    for attr in ("class", "id"):
        value = el.get(attr)
        if value:
            for word in _WORD_SPLIT_RE.split(value.lower()):
                if word in _CHROME_WORDS or word.endswith("sidebar") or word.startswith("navbar"):
                    return True
    return False


def _visible_text(root: lxml.html.HtmlElement) -> tuple[str, str, dict[Any, tuple[str, bool]]]:
    """The page's visible text, its main text (without chrome), and each visible link's
    context: the text around it and whether it sits in the page's chrome.

    The context of a link is what a reader sees next to it: up to CONTEXT_CHARS of text before
    and after the anchor (sibling entries of a list, the sentence a link sits in).
    """
    parts: list[str] = []
    chrome: list[bool] = []  # per part: inside navigation, header, footer or sidebar
    spans: list[tuple[Any, int, int, bool]] = []  # (link element, first part, end part, chrome)

    def walk(el: lxml.etree._Element, in_chrome: bool) -> None:
        # Comments and processing instructions have a non-str tag: their own text is hidden.
        tag = el.tag.lower() if isinstance(el.tag, str) else None
        if tag is not None and tag not in _INVISIBLE:
            inner = in_chrome or _is_chrome(el, tag)
            first = len(parts)
            if el.text:
                parts.append(el.text)
                chrome.append(inner)
            for child in el:
                walk(child, inner)
            if tag == "a":
                spans.append((el, first, len(parts), inner))
        if el.tail:
            parts.append(el.tail)
            chrome.append(in_chrome)

    body = root.find(".//body")
    start = body if body is not None else root
    # An iterative walk would avoid recursion limits on absurdly nested pages; lxml caps depth
    # at 256 by default (huge_tree off), so recursion stays bounded.
    try:
        walk(start, False)
    except RecursionError:
        text = _clean(start.text_content())
        return text, text, {}
    if start.tail:  # walk() added the body's tail, which lies outside the body
        parts.pop()
        chrome.pop()
    contexts: dict[Any, tuple[str, bool]] = {}
    for el, first, end, in_chrome in spans:
        contexts[el] = (_context(parts, first, end), in_chrome)
    text = _clean(" ".join(parts))
    main = _clean(" ".join(p for p, c in zip(parts, chrome, strict=True) if not c))
    return text, main or text, contexts


def _context(parts: list[str], first: int, end: int) -> str:
    """CONTEXT_CHARS of text before parts[first] and after parts[end - 1], whole words."""
    before: list[str] = []
    size = 0
    i = first - 1
    while i >= 0 and size < CONTEXT_CHARS:
        before.append(parts[i])
        size += len(parts[i])
        i -= 1
    after: list[str] = []
    size = 0
    j = end
    while j < len(parts) and size < CONTEXT_CHARS:
        after.append(parts[j])
        size += len(parts[j])
        j += 1
    left = _clean(" ".join(reversed(before)))[-CONTEXT_CHARS:]
    right = _clean(" ".join(after))[:CONTEXT_CHARS]
    if len(left) == CONTEXT_CHARS and " " in left:
        left = left.split(" ", 1)[1]
    if len(right) == CONTEXT_CHARS and " " in right:
        right = right.rsplit(" ", 1)[0]
    return f"{left} {right}".strip()


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
    page.text, page.main_text, contexts = _visible_text(root)
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
        context, in_chrome = contexts.get(el, ("", False))
        page.links.append(Outlink(absolute, anchor, "nofollow" in rel, context, in_chrome))
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

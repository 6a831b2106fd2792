"""HTML -> title, visible text and links with anchor text.

No Scrapy import: it takes the decoded HTML and the page's URL.  Uses lxml (a Scrapy dependency)
directly because it is fast and tolerant of broken markup; any parse failure yields an empty page
rather than an exception, so a hostile page cannot crash the crawl.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from typing import Any
from urllib.parse import urljoin, urlsplit

import lxml.etree

from .urls import URL_CACHE_SIZE

# Elements whose text a reader never sees.
_INVISIBLE = {"script", "style", "noscript", "template", "head", "svg", "iframe", "object"}
_REFRESH_RE = re.compile(r"^\s*\d*\s*[;,]?\s*url\s*=\s*['\"]?([^'\"]+)", re.IGNORECASE)
# lxml refuses a str that starts with an XML declaration naming an encoding (XHTML pages, e.g.
# DocBook manuals): the text is decoded already, so the declaration is dropped.
_XML_DECL_RE = re.compile(r"^\s*<\?xml[^>]*\?>")
# lxml.etree's HTML parser, not lxml.html's: the same tree, but lxml.html picks each element's
# Python class with a Python callback every time an element is touched (4% of a replayed
# crawl's CPU time); only its text_content() was used, the same XPath as _text_of below
_PARSER = lxml.etree.HTMLParser()
_text_of = lxml.etree.XPath("string()", smart_strings=False)
MAX_LINKS = 5000  # a page with more links is a link farm; the rest are ignored


CONTEXT_CHARS = 120  # text kept on each side of a link: the "nearby text" of link evidence


class LinkContext:
    """The visible text around a link, made into a string when first read (``str()``).

    Most links of a page lead to URLs the crawl has seen, and only a new link's context is
    read (by the learned order's features): a page of 1,400 links no longer joins and cleans
    1,400 contexts for the few new ones.  It holds the page's text parts until read; pickled
    or compared, it is its string.
    """

    __slots__ = ("_parts", "_ends", "_first", "_end", "_text")

    def __init__(self, parts: list[str], ends: list[int], first: int, end: int) -> None:
        self._parts: list[str] | None = parts
        self._ends = ends
        self._first = first
        self._end = end
        self._text: str | None = None

    def __str__(self) -> str:
        text = self._text
        if text is None:
            assert self._parts is not None
            text = self._text = _context(self._parts, self._ends, self._first, self._end)
            self._parts = self._ends = None  # type: ignore[assignment]
        return text

    def __repr__(self) -> str:
        return repr(str(self))

    def __eq__(self, other: object) -> bool:
        return str(self) == (str(other) if isinstance(other, (str, LinkContext)) else other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        return str, (str(self),)


@dataclass(frozen=True, slots=True)
class Outlink:
    url: str  # absolute, not yet canonicalised
    anchor: str
    nofollow: bool = False
    # visible text around the link (up to CONTEXT_CHARS each side): a LinkContext (read it
    # with str()) when extract() was asked for contexts, else ""
    context: str | LinkContext = ""
    chrome: bool = False  # in the page's navigation, header, footer or a sidebar


@dataclass(slots=True)
class ExtractedPage:
    title: str = ""
    text: str = ""
    main_text: str = ""  # the text without navigation, header, footer and sidebars
    links: list[Outlink] = field(default_factory=list)
    base: str = ""
    # the visible text in runs of parts all in the chrome or all out of it, in page order:
    # " ".join of them all is ``text`` and of the runs out of the chrome ``main_text`` (before
    # whitespace is collapsed), so a caller that needs the words of both tokenizes each run
    # once (a word never spans two runs: they are joined by a space)
    runs: list[tuple[str, bool]] = field(default_factory=list)


def _clean(text: str) -> str:
    """Whitespace runs to one space, ends stripped.  ``str.split()`` splits on what the regex
    ``\\s+`` matched (Unicode whitespace) and is much cheaper than ``re.sub``: the regex was 3%
    of a replayed crawl's CPU time."""
    return " ".join(text.split())


# Page chrome: navigation, headers, footers, sidebars.  Their text is the same on every page of a
# site, so it says little about the page; a reader's "main text" leaves them out.  Generic
# markup only (HTML5 elements, ARIA roles, common class and id words), no site's own names.
_CHROME_TAGS = {"nav", "header", "footer", "aside"}
_CHROME_ROLES = {"navigation", "banner", "contentinfo", "search", "complementary", "menu"}
_CHROME_WORDS = {"nav", "navbar", "navigation", "menu", "sidebar", "footer", "header",
                 "breadcrumb", "breadcrumbs", "banner", "related", "toc", "topbar", "searchbox"}
_WORD_SPLIT_RE = re.compile(r"[-_\s]+")
_RUN_RE = re.compile(rb"\x00+|\x01+")  # runs of parts out of / in the chrome


def _is_chrome(el: lxml.etree._Element, tag: str) -> bool:
    if tag in _CHROME_TAGS:
        return True
    role = el.get("role")
    if role and role.lower() in _CHROME_ROLES:
        return True
    value = el.get("class")
    if value and _names_chrome(value):
        return True
    value = el.get("id")
    return bool(value) and _names_chrome(value)


@lru_cache(maxsize=1 << 12)
def _names_chrome(value: str) -> bool:
    """A class or id attribute naming page chrome.  Cached: a site's class names recur on
    every element and page (the split was a third of the page walk)."""
    for word in _WORD_SPLIT_RE.split(value.lower()):
        if word in _CHROME_WORDS or word.endswith("sidebar") or word.startswith("navbar"):
            return True
    return False


def _visible_text(root: lxml.etree._Element, with_context: bool = True,
                  ) -> tuple[str, str, dict[Any, tuple[str | LinkContext, bool]],
                             list[tuple[str, bool]]]:
    """The page's visible text, its main text (without chrome), each visible link's
    context: the text around it (only ``with_context``: else "") and whether it sits in the
    page's chrome, and the text's runs in and out of the chrome (``ExtractedPage.runs``).

    The context of a link is what a reader sees next to it: up to CONTEXT_CHARS of text before
    and after the anchor (sibling entries of a list, the sentence a link sits in).
    """
    parts: list[str] = []
    chrome: list[bool] = []  # per part: inside navigation, header, footer or sidebar
    spans: list[tuple[Any, int, int, bool]] = []  # (link element, first part, end part, chrome)
    append, mark = parts.append, chrome.append

    def walk(el: lxml.etree._Element, in_chrome: bool) -> None:
        # Comments and processing instructions have a non-str tag: their own text is hidden.
        tag = el.tag
        if isinstance(tag, str):
            tag = tag.lower()
            if tag not in _INVISIBLE:
                inner = in_chrome or _is_chrome(el, tag)
                first = len(parts)
                text = el.text
                if text:
                    append(text)
                    mark(inner)
                for child in el:
                    walk(child, inner)
                if tag == "a":
                    spans.append((el, first, len(parts), inner))
        tail = el.tail
        if tail:
            append(tail)
            mark(in_chrome)

    body = root.find(".//body")
    start = body if body is not None else root
    # An iterative walk would avoid recursion limits on absurdly nested pages; lxml caps depth
    # at 256 by default (huge_tree off), so recursion stays bounded.
    try:
        walk(start, False)
    except RecursionError:
        text = _clean(_text_of(start))
        return text, text, {}, [(text, False)]
    if start.tail:  # walk() added the body's tail, which lies outside the body
        parts.pop()
        chrome.pop()
    contexts: dict[Any, tuple[str | LinkContext, bool]] = {}
    if with_context:
        ends = list(accumulate(map(len, parts), initial=0))  # ends[i]: length of parts[:i]
        for el, first, end, in_chrome in spans:
            contexts[el] = (LinkContext(parts, ends, first, end), in_chrome)
    else:
        for el, _first, _end, in_chrome in spans:
            contexts[el] = ("", in_chrome)
    text = _clean(" ".join(parts))
    flags = bytes(chrome)  # one byte a part: its runs found by a regex, not a loop per part
    runs = [(" ".join(parts[m.start():m.end()]), flags[m.start()] == 1)
            for m in _RUN_RE.finditer(flags)]
    main = _clean(" ".join([run for run, in_chrome in runs if not in_chrome]))
    return text, main or text, contexts, runs


def _context(parts: list[str], ends: list[int], first: int, end: int) -> str:
    """CONTEXT_CHARS of text before parts[first] and after parts[end - 1], whole words.

    Before: the parts back from ``first`` until they hold CONTEXT_CHARS characters (the last
    one taken may overrun), after: the same forward from ``end``; ``ends`` (the running
    lengths of ``parts``) finds both bounds by bisection.
    """
    start = max(bisect_right(ends, ends[first] - CONTEXT_CHARS) - 1, 0)
    stop = min(bisect_left(ends, ends[end] + CONTEXT_CHARS), len(parts))
    left = _clean(" ".join(parts[start:first]))[-CONTEXT_CHARS:]
    right = _clean(" ".join(parts[end:stop]))[:CONTEXT_CHARS]
    if len(left) == CONTEXT_CHARS and " " in left:
        left = left.split(" ", 1)[1]
    if len(right) == CONTEXT_CHARS and " " in right:
        right = right.rsplit(" ", 1)[0]
    return f"{left} {right}".strip()


# urljoin's answers, by what they depend on (see _Joiner); cleared when full (a relative
# link recurs on the pages of its site: URL_CACHE_SIZE says why that size)
_JOINED: dict[tuple[str, str], str] = {}
_JOINED_MAX = URL_CACHE_SIZE
_NOT_IN_CACHED = frozenset("\t\r\n\\")  # urlsplit removes the first three anywhere
# a fragment with any C0 control or space is joined by urljoin itself (urlsplit removes tab,
# CR and LF anywhere, and Python versions differ on stripping the others at the ends)
_NOT_IN_FRAGMENT = frozenset(chr(c) for c in range(33))


class _Joiner:
    """``urljoin(base, href)`` for the links of one page, remembered across pages.

    A site's pages repeat the same relative links (navigation, sibling pages), and urljoin was
    a fifth of the extraction.  The answer is kept under what urljoin reads of the base for
    that kind of href: a path relative to the directory (``x.html``, ``../y/``) depends only on
    the base's scheme, host and directory; an absolute path (``/x``) on its scheme and host; a
    URL with ``http(s)://`` and a host only on the base's scheme.  A fragment (``#f``, a
    quarter of a docweb page's hrefs) is the base up to its own fragment, then the href:
    urljoin keeps the base's path and query and replaces only the fragment, which it does not
    parse, so the part before it is found once per page (by urljoin).  Any other href (``?q``,
    ``//host``, other schemes, control characters) is joined each time.
    """

    def __init__(self, base: str) -> None:
        self.base = base
        try:
            parts = urlsplit(base)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc or (
                parts.path and not parts.path.startswith("/")):
            self.scheme = self.origin = self.directory = ""
            return
        path = parts.path or "/"
        self.scheme = parts.scheme + ":"
        self.origin = f"{parts.scheme}://{parts.netloc}"
        # "" and "/" resolve alike: urljoin keeps the directory "" of an empty path as "/"
        self.directory = self.origin + path[: path.rfind("/") + 1]
        self._before_fragment: str | None = None  # urljoin(base, "#f") less "#f", when known

    def __call__(self, href: str) -> str:
        """urljoin(self.base, href); ValueError as urljoin raises it."""
        if (href[0] == "#" and len(href) > 1 and self.scheme
                and _NOT_IN_FRAGMENT.isdisjoint(href)):
            if self._before_fragment is None:
                probe = urljoin(self.base, "#f")
                self._before_fragment = probe[:-2] if probe.endswith("#f") else ""
            if self._before_fragment:
                return self._before_fragment + href
        key = self._key(href)
        if key is None:
            return urljoin(self.base, href)
        joined = _JOINED.get(key)
        if joined is None:
            joined = urljoin(self.base, href)
            if len(_JOINED) >= _JOINED_MAX:
                _JOINED.clear()
            _JOINED[key] = joined
        return joined

    def _key(self, href: str) -> tuple[str, str] | None:
        if not self.scheme or href[0] <= " " or not _NOT_IN_CACHED.isdisjoint(href):
            return None
        first = href[0]
        if first in "?#":
            return None
        if first == "/":
            return None if href.startswith("//") else (self.origin, href)
        if ":" not in href:
            return (self.directory, href)
        if href.startswith(("http://", "https://")) and href.split("://", 1)[1][:1] not in (
                "", "/", "?", "#"):  # a host: the base's is not read
            return (self.scheme, href)
        return None


def extract(html: str, url: str, *, with_context: bool = True) -> ExtractedPage:
    """Parse ``html`` fetched from ``url``; never raises on bad markup.

    ``with_context=False`` leaves every link's ``context`` empty: only the learned order reads
    it (a :class:`LinkContext`, made into text when read).
    """
    page = ExtractedPage(base=url)
    if not html or not html.strip():
        return page
    try:
        # what lxml.html.document_fromstring does, with the plain parser
        root = lxml.etree.fromstring(_XML_DECL_RE.sub("", html, count=1), _PARSER)
    except (lxml.etree.ParserError, ValueError, TypeError):
        return page
    if root is None:  # lxml.html's "Document is empty"
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
        page.title = _clean(_text_of(title_el))
    page.text, page.main_text, contexts, page.runs = _visible_text(root, with_context)
    join = _Joiner(base)
    seen: set[tuple[str, str]] = set()
    for el in root.iter("a", "area"):
        href = (el.get("href") or "").strip()
        if not href:
            continue
        anchor = _clean(_text_of(el)) if el.tag == "a" else _clean(el.get("alt") or "")
        if not anchor:
            anchor = _clean(el.get("title") or "")
        try:
            absolute = join(href)
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

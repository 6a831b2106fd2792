"""A page's main content and what the page says about itself: HTML + URL -> :class:`PageContent`.

No Scrapy import.  The main content (boilerplate removed) as plain text, Markdown or HTML; the
metadata the page states (focuscrawl.core.pagemeta); the language of the main text, guessed
by py3langid with its probability.  Two extractors, each where it is worth its cost:

* plain text (mode "text"): resiliparse's main-content extraction (C++, Lexbor), or
  trafilatura's with ``extractor="trafilatura"``, which finds the article a little better
  at about fifteen times the CPU time (docs/corpus.md has the figures);
* Markdown and HTML: trafilatura, which keeps headings, lists, links, tables and code; the
  mode's plain text comes from the same extraction.

One parse and one extraction a page, whatever the mode.  Bad input never raises: an empty,
binary, enormous or unparsable page, or one whose extraction runs past its CPU time, gives
``failed`` (the reason) and the caller's ``fallback`` text (binary gives ""), so the crawl
counts it and goes on.  A page with no main content (an index of links) gets "" and its
metadata: that is an answer, not a failure.
"""

from __future__ import annotations

import logging
import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from copy import deepcopy
from dataclasses import dataclass, replace
from html import escape
from typing import Any

from .pagemeta import Stated, lexbor_sources, lxml_sources, stated

#: the content modes: the field each puts the content in is named after it; "none" adds nothing
MODES = ("text", "markdown", "html", "none")
#: the extractors of plain text (Markdown and HTML are always trafilatura's)
EXTRACTORS = ("resiliparse", "trafilatura")
#: the language is guessed on this much of the main text (the opening paragraphs tell it as
#: well as the whole, and the guess's cost grows with the length)
LANGUAGE_CHARS = 600
#: fewer letters than this give no language (a guess on a few words is noise)
MIN_LANGUAGE_LETTERS = 20
#: a page longer than this (characters of HTML) is not extracted: it gets the fallback text
MAX_CHARS = 2_000_000
#: CPU seconds one extraction may take (on the main thread: see :func:`_cpu_limit`)
TIMEOUT = 2.0
#: resiliparse's main-content step walks each element's ancestors in one C call, which no
#: timer interrupts: a page whose elements' depths add up to more than this (a few tenths of
#: a second of that walk) is not extracted (100,000 nested <div>s held the reactor for minutes)
MAX_DEPTH_SUM = 10_000_000
#: a page of fewer tags than this cannot reach MAX_DEPTH_SUM's cost, so its depths go uncounted
_DEPTH_CHECK_TAGS = 4_000

logger = logging.getLogger(__name__)


def parse_mode(value: Any) -> str:
    """A content mode from an argument or a setting, or ValueError with one line."""
    mode = str(value if value is not None else "").strip().lower()
    if mode not in MODES:
        raise ValueError(f"content must be one of {', '.join(MODES)}, not {value!r}")
    return mode


@dataclass(frozen=True, slots=True)
class PageContent:
    """One page's main content in the mode asked, its plain text and its metadata."""

    mode: str  # one of MODES
    text: str = ""  # the main content as plain text (what near-duplicates compare)
    content: str = ""  # the main content in ``mode``: ``text`` itself, Markdown or HTML
    language: str | None = None  # ISO 639-1, guessed from the main text
    language_confidence: float | None = None  # the guess's probability, 0..1
    published: str | None = None  # YYYY-MM-DD
    modified: str | None = None  # YYYY-MM-DD, only when the page states it
    author: str | None = None
    description: str | None = None
    canonical: str | None = None  # the page's canonical URL (link rel=canonical, og:url)
    failed: str = ""  # why the extractor could not handle the page; "" when it could

    @property
    def text_length(self) -> int:
        return len(self.text)

    def fields(self) -> dict[str, Any]:
        """The exported item's fields (none for mode "none"): the content under the mode's
        name, then the metadata."""
        if self.mode == "none":
            return {}
        return {
            self.mode: self.content,
            "text_length": self.text_length,
            "language": self.language,
            "language_confidence": self.language_confidence,
            "published": self.published,
            "modified": self.modified,
            "author": self.author,
            "description": self.description,
            "canonical": self.canonical,
        }


def field_names(mode: str) -> tuple[str, ...]:
    """The item fields a content mode adds (``text_length`` aside, which every page has), the
    content's own first: one fixed schema per crawl (Parquet, CSV)."""
    if mode == "none":
        return ()
    return (mode, "language", "language_confidence", "published", "modified", "author",
            "description", "canonical")


# -- bad input -----------------------------------------------------------------------------------
_CONTROL_RE = re.compile("[\x00-\x08\x0e-\x1f\ufffd]")
# lxml refuses a str that starts with an XML declaration naming an encoding
_XML_DECL_RE = re.compile(r"^\s*<\?xml[^>]*\?>")


def _looks_binary(html: str) -> bool:
    """A body declared HTML that is not text: NULs, or many control or undecodable characters
    in its first 4 KB (a text page has next to none)."""
    head = html[:4096]
    return "\x00" in head or len(_CONTROL_RE.findall(head)) > len(head) // 20


def fallback_content(mode: str, text: str, reason: str) -> PageContent:
    """The caller's fallback text in ``mode``'s field (HTML-escaped for "html"), with its
    language, and why."""
    text = " ".join(text.split())
    content = (f"<html><body><p>{escape(text)}</p></body></html>" if mode == "html" and text
               else text)
    return _with_language(PageContent(mode, text, content, failed=reason))


def _with_language(page: PageContent) -> PageContent:
    """``page`` with the language of its text."""
    language, confidence = guess_language(page.text)
    return replace(page, language=language, language_confidence=confidence)


# -- language ------------------------------------------------------------------------------------
_identifier: Any = None
_identifier_lock = threading.Lock()


def _language_identifier() -> Any:
    """py3langid's model (loaded once, on first use: a crawl without content never pays it),
    restricted to the languages ISO 639-1 names, with "zxx" (no language) kept."""
    global _identifier
    if _identifier is None:
        with _identifier_lock:
            if _identifier is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
                identifier.set_languages([code for code in identifier.labels
                                          if len(code) == 2 or code == "zxx"])
                _identifier = identifier
    return _identifier


def preload_language_model() -> None:
    """Load the language model in a thread of its own, now: its loading (an xz-compressed
    file, decompressed without the GIL) overlaps the crawl's start instead of holding up the
    first page."""
    if _identifier is None:
        threading.Thread(target=_language_identifier, name="py3langid-load",
                         daemon=True).start()


def guess_language(text: str) -> tuple[str | None, float | None]:
    """(ISO 639-1 code, probability) of ``text``'s language; (None, None) for a text of fewer
    than MIN_LANGUAGE_LETTERS letters (a guess on a few words is noise)."""
    sample = text[:LANGUAGE_CHARS]
    if sum(c.isalpha() for c in sample[:MIN_LANGUAGE_LETTERS * 4]) < MIN_LANGUAGE_LETTERS:
        return None, None
    code, probability = _language_identifier().classify(sample)
    if code == "zxx":
        return None, None
    return code, round(float(probability), 4)


# -- extraction ----------------------------------------------------------------------------------
class _Expired(BaseException):
    """Raised by the CPU timer inside the extraction: a BaseException, so that the
    extractor's own ``except Exception`` handlers let it through."""


@contextmanager
def _cpu_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block with :class:`_Expired` once the process has spent ``seconds`` of
    CPU time in it (``ITIMER_PROF``: a page's cost, however loaded the machine).  A signal
    handler runs on the main thread only, between two bytecodes, so elsewhere (a worker
    thread, or without ``setitimer``) the block runs unbounded, bounded by its input's size.
    The handler raises only while the block runs: a signal that arrives as it ends is
    ignored."""
    if (seconds <= 0 or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    armed = True

    def expire(signum: int, frame: Any) -> None:
        if armed:
            raise _Expired

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def parse_extractor(value: Any) -> str:
    """A plain-text extractor's name, or ValueError with one line."""
    name = str(value if value is not None else "").strip().lower()
    if name not in EXTRACTORS:
        raise ValueError(f"the extractor must be one of {', '.join(EXTRACTORS)}, not {value!r}")
    return name


def extract_content(html: str, url: str, mode: str = "text", *, fallback: str = "",
                    extractor: str = "resiliparse", max_chars: int = MAX_CHARS,
                    timeout: float = TIMEOUT) -> PageContent:
    """The main content of ``html`` (fetched from ``url``) in ``mode``, and its metadata.

    Plain text from ``extractor`` (Markdown and HTML from trafilatura): comments, bylines and
    images' alt texts left out, tables kept.  A page the extractor cannot handle gets
    ``fallback`` (the caller's visible text) and ``failed``, never an exception; so does one
    whose extraction takes more than ``timeout`` CPU seconds (on the main thread).
    """
    mode = parse_mode(mode)
    if mode == "none":
        return PageContent(mode)
    if not html or not html.strip():
        return fallback_content(mode, "", "empty")
    if _looks_binary(html):
        return fallback_content(mode, "", "binary")
    if len(html) > max_chars:
        return fallback_content(mode, fallback, "too_large")
    html = _XML_DECL_RE.sub("", html, count=1)  # lxml refuses a str that names an encoding
    read = _resiliparse if mode == "text" and extractor == "resiliparse" else _trafilatura
    try:
        with _cpu_limit(timeout):
            extracted = read(html, url, mode)
    except _Expired:
        return fallback_content(mode, fallback, "timeout")
    except Exception as e:  # noqa: BLE001 - a page must never stop the crawl
        logger.debug("content extraction failed on %s: %r", url, e)
        return fallback_content(mode, fallback, "error")
    if extracted.failed:
        return fallback_content(mode, fallback, extracted.failed)
    return _with_language(extracted)


def _page(mode: str, metadata: Stated, url: str, text: str = "",
          content: str = "") -> PageContent:
    """The page's content with its metadata (a page with no main content has none: ``text``
    "" is an answer, not a failure)."""
    return PageContent(
        mode, text.strip(), content.strip(), published=metadata.published,
        modified=metadata.modified, author=metadata.author,
        description=metadata.description, canonical=metadata.canonical or url)


def _resiliparse(html: str, url: str, mode: str) -> PageContent:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    tree = HTMLTree.parse(html)
    if html.count("<") > _DEPTH_CHECK_TAGS and tree.body is not None and _too_deep(tree):
        return PageContent(mode, failed="too_deep")
    text = extract_plain_text(tree, main_content=True, comments=False, post_meta=False,
                              alt_texts=False, form_fields=False, noscript=False)
    return _page(mode, stated(lexbor_sources(tree), url), url, text, text)


class _Deep(Exception):
    pass


def _too_deep(tree: Any) -> bool:
    """Whether the elements' depths add up to more than MAX_DEPTH_SUM (the walk stops there)."""
    from resiliparse.parse.html import traverse_dom

    total = 0

    def count(context: Any) -> None:
        nonlocal total
        total += context.depth
        if total > MAX_DEPTH_SUM:
            raise _Deep

    try:
        traverse_dom(tree.body, start_callback=count, elements_only=True)
    except _Deep:
        return True
    return False


def _plain_text(body: Any) -> str:
    """The plain text of an extracted tree that kept its links: trafilatura writes a link as
    Markdown whatever the format, so the links are unwrapped first (on a copy)."""
    from lxml.etree import strip_tags
    from trafilatura.xml import xmltotxt

    body = deepcopy(body)
    strip_tags(body, "ref")
    return str(xmltotxt(body, False))


def _trafilatura(html: str, url: str, mode: str) -> PageContent:
    from trafilatura import bare_extraction, load_html
    from trafilatura.htmlprocessing import build_html_output
    from trafilatura.settings import Document

    tree = load_html(html)
    if tree is None:
        return PageContent(mode, failed="unparsable")
    metadata = stated(lxml_sources(tree), url)
    formatted = mode != "text"
    # its own cascade only (fast: no readability/jusText comparison, measured as good); it
    # prunes a copy of the tree
    document = bare_extraction(
        tree, url=url, fast=True, include_comments=False, include_tables=True,
        include_formatting=formatted, include_links=formatted,
        output_format="html" if mode == "html" else "python")
    if not isinstance(document, Document) or document.body is None:
        return _page(mode, metadata, url)
    if mode == "html":
        text = _plain_text(document.body)  # before build_html_output rewrites the tree
        content = build_html_output(document)
    elif mode == "markdown":
        content = document.text or ""  # rendered with formatting: Markdown
        text = _plain_text(document.body)
    else:
        text = content = document.text or ""
    return _page(mode, metadata, url, text, content)

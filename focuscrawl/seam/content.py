"""The crawl's content extraction: which pages get it, with what bounds, and what it counts.

The topic spider asks :meth:`ContentExtraction.wanted` with the page's score (known before) and
calls :meth:`ContentExtraction.extract` once for a page that will be exported: with
``FOCUS_MIN_SCORE`` a page below it, which the pipeline drops, is never extracted (nor a
near-copy ``FOCUS_NEAR_DUPLICATES=drop`` leaves out: the spider asks).  The content
is extracted from the whole page: the fetch rules download it whole (:func:`download_bound`)
and cut the response the crawl sees at ``FOCUS_MAX_PAGE_BYTES``, keeping the whole body for
this alone (``meta[WHOLE_BODY]``, dropped once used).  The extraction runs in the reactor's
thread: off it, in a thread, it was slower (the GIL), see docs/benchmarks.md.  The stats:
``focus/content/extracted``, ``focus/content/failed`` (and ``.../failed/<reason>``: empty,
binary, too_large, timeout, too_deep, unparsable, error), ``focus/content/no_text`` (no main content
found: "") and ``focus/content/language/<code>`` (``unknown``: none found), the language mix
the dashboard shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from focuscrawl import config
from focuscrawl.core.content import (
    PageContent,
    extract_content,
    fallback_content,
    parse_extractor,
    parse_mode,
    preload_language_model,
)
from focuscrawl.seam.arguments import ArgumentError, arguments_of
from focuscrawl.seam.meta import WHOLE_BODY

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

EXTRACTED = "focus/content/extracted"
FAILED = "focus/content/failed"
NO_TEXT = "focus/content/no_text"
LANGUAGE = "focus/content/language/"  # + ISO 639-1 code, or "unknown"


class ContentExtraction:
    """One crawl's content mode, extractor and bounds, and its counters."""

    def __init__(self, mode: str, *, extractor: str, min_score: float, max_chars: int,
                 timeout: float, crawler: Crawler | None = None) -> None:
        self.mode = parse_mode(mode)
        self.extractor = parse_extractor(extractor)
        self.min_score = min_score
        self.max_chars = max_chars
        self.timeout = timeout
        self.crawler = crawler  # its stats, once the crawl has started
        if self.mode != "none":
            preload_language_model()

    @classmethod
    def from_settings(cls, s: Any, mode: str | None = None, *,
                      crawler: Crawler | None = None) -> ContentExtraction:
        """``mode`` from the spider's argument (validated already), else ``FOCUS_CONTENT``;
        ArgumentError (one line) for a setting of no mode or extractor."""
        name = "FOCUS_CONTENT_EXTRACTOR"
        try:
            if mode is None:
                name = "FOCUS_CONTENT"
                mode = parse_mode(config.get(s, name))
            name = "FOCUS_CONTENT_EXTRACTOR"
            extractor = parse_extractor(config.get(s, name))
        except ValueError as e:
            raise ArgumentError(f"{name}: {e}") from None
        return cls(mode, extractor=extractor, min_score=config.get(s, "FOCUS_MIN_SCORE"),
                   max_chars=config.get(s, "FOCUS_CONTENT_MAX_CHARS"),
                   timeout=config.get(s, "FOCUS_CONTENT_TIMEOUT"), crawler=crawler)

    def wanted(self, score: float) -> bool:
        """Whether a page of this score gets its content: one that will be exported."""
        return self.mode != "none" and score >= self.min_score

    def extract(self, response: Response, html: str, url: str, fallback: str) -> PageContent:
        """The page's content (``fallback``, its visible text, when extraction fails), from
        the whole page when the fetch rules cut ``html``, the crawl's copy."""
        if WHOLE_BODY in response.meta:
            whole = response.meta.pop(WHOLE_BODY)  # its bytes go once used: memory stays flat
            if whole is None:  # longer than FOCUS_CONTENT_MAX_CHARS bytes: not extracted
                content = fallback_content(self.mode, fallback, "too_large")
                self.count(content)
                return content
            try:
                html = response.replace(body=whole).text
            except (UnicodeDecodeError, LookupError):
                pass  # the crawl's copy, which decoded, stands in
        content = extract_content(html, url, self.mode, fallback=fallback,
                                  extractor=self.extractor, max_chars=self.max_chars,
                                  timeout=self.timeout)
        self.count(content)
        return content

    def count(self, content: PageContent) -> None:
        if self.crawler is None:
            return
        stats = self.crawler.stats
        stats.inc_value(EXTRACTED)
        if content.failed:
            stats.inc_value(FAILED)
            stats.inc_value(f"{FAILED}/{content.failed}")
        elif not content.text:
            stats.inc_value(NO_TEXT)
        stats.inc_value(LANGUAGE + (content.language or "unknown"))


def download_bound(settings: Any, spider: Any) -> int:
    """How many bytes of a page the crawl downloads for its content: ``FOCUS_CONTENT_MAX_CHARS``
    (a character is a byte at least, so a page of no more bytes is not too large to extract),
    never past DOWNLOAD_MAXSIZE (Scrapy drops a longer download); 0 when the spider exports no
    content (``content=none``, or a spider of another project: it publishes no arguments)."""
    published = arguments_of(spider)
    if published is None or published.parsed is None:
        return 0
    mode = published.parsed.content
    if mode is None:
        try:
            mode = parse_mode(config.get(settings, "FOCUS_CONTENT"))
        except ValueError:
            return 0  # the spider refused the setting: nothing is fetched
    if mode == "none":
        return 0
    bound = int(config.get(settings, "FOCUS_CONTENT_MAX_CHARS"))
    # the spider's attribute overrides the setting for Scrapy's download handler (-a)
    maxsize = int(getattr(spider, "download_maxsize", None)
                  or config.get(settings, "DOWNLOAD_MAXSIZE"))
    return min(bound, maxsize) if maxsize > 0 else bound


def content_status(stats: dict[str, Any]) -> dict[str, Any]:
    """The dashboard's part: pages extracted, failed, and the language mix (most first)."""
    languages = {k[len(LANGUAGE):]: int(v) for k, v in stats.items()
                 if k.startswith(LANGUAGE) and isinstance(v, (int, float))}
    return {"extracted": int(stats.get(EXTRACTED, 0) or 0),
            "failed": int(stats.get(FAILED, 0) or 0),
            "languages": dict(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0])))}

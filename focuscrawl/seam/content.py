"""The crawl's content extraction: which pages get it, with what bounds, and what it counts.

The topic spider asks :meth:`ContentExtraction.wanted` with the page's score (known before) and
calls :meth:`ContentExtraction.extract` once for a page that will be exported: with
``FOCUS_MIN_SCORE`` a page below it, which the pipeline drops, is never extracted.  The
extraction runs in the reactor's thread: off it, in a thread, it was slower (the GIL), see
docs/benchmarks.md.  The stats: ``focus/content/extracted``, ``focus/content/failed`` (and
``.../failed/<reason>``: empty, binary, too_large, timeout, unparsable, error),
``focus/content/no_text`` (no main content found: "") and ``focus/content/language/<code>``
(``unknown``: none found), the language mix the dashboard shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from focuscrawl import config
from focuscrawl.core.content import (
    PageContent,
    extract_content,
    parse_extractor,
    parse_mode,
    preload_language_model,
)
from focuscrawl.seam.arguments import ArgumentError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

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

    def extract(self, html: str, url: str, fallback: str) -> PageContent:
        """The page's content (``fallback``, its visible text, when extraction fails)."""
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


def content_status(stats: dict[str, Any]) -> dict[str, Any]:
    """The dashboard's part: pages extracted, failed, and the language mix (most first)."""
    languages = {k[len(LANGUAGE):]: int(v) for k, v in stats.items()
                 if k.startswith(LANGUAGE) and isinstance(v, (int, float))}
    return {"extracted": int(stats.get(EXTRACTED, 0) or 0),
            "failed": int(stats.get(FAILED, 0) or 0),
            "languages": dict(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0])))}

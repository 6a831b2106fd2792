"""The item exported for every fetched page (one JSON line each)."""

from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass
from functools import cache
from typing import Any

from focuscrawl.core.content import field_names


@dataclass
class PageItem:
    url: str  # after redirects
    status: int
    title: str
    score: float  # cosine similarity with the topic
    hot: bool  # Cho's hotness: keyword in the title, or FOCUS_HOT_BODY_COUNT times in the body
    depth: int  # links from the nearest seed
    parent: str | None  # the page whose link led here
    anchor: str  # that link's anchor text
    fetched_at: str  # ISO 8601, UTC
    content_type: str
    text_length: int  # characters of the main text (content "none": of the visible text)
    outlinks: int  # links extracted
    order: int | None  # crawl order: 1 for the first page fetched
    priority: float  # the frontier's estimate when the URL was chosen
    truncated: bool = False  # body cut at the fetch size limit, scored on what was kept
    # the page classifier's probability that the page is on the topic (None before it has
    # an on-topic and an off-topic page to learn from)
    relevance: float | None = None
    # the URL of a page exported earlier whose main text this page's is a near-copy of
    # (FOCUS_NEAR_DUPLICATES), else None
    duplicate_of: str | None = None


@dataclass
class ExplainedPageItem(PageItem):
    """A page with why its URL was chosen (FOCUS_EXPLAIN): only then has an item this field,
    so the JSON lines of a crawl not explained are as they always were."""

    why: dict[str, float] | None = None  # the parts of the priority (Frontier.explain)


@dataclass
class KeptPageItem(PageItem):
    """A page of a continuous crawl (FOCUS_REVISIT): exported when first fetched (version 1),
    then again each time a revisit finds its main content changed (``changed`` true), and once
    when it is gone (404, 410, or no kept page links to it any more: ``gone`` true)."""

    version: int = 1  # 1 when first fetched, one more at each change found
    first_seen: str = ""  # ISO 8601, UTC: when the crawl first fetched it
    last_changed: str = ""  # when a fetch last found its main content changed (or first_seen)
    changed: bool = False  # this line is a change of a page exported before
    gone: bool = False  # it answered 404 or 410, or no kept page links to it (once)


@dataclass
class ExplainedKeptPageItem(KeptPageItem):
    """A kept page with why its URL was chosen (FOCUS_EXPLAIN)."""

    why: dict[str, float] | None = None


#: the types of the fields a content mode adds (the content's own field is a str)
_CONTENT_TYPES: dict[str, Any] = {"language_confidence": float | None}
_BASES: dict[tuple[bool, bool], type[PageItem]] = {
    (False, False): PageItem, (True, False): ExplainedPageItem,
    (False, True): KeptPageItem, (True, True): ExplainedKeptPageItem}


@cache
def page_item_class(content: str = "none", explained: bool = False,
                    kept: bool = False) -> type[PageItem]:
    """The item class of a crawl's pages: :class:`PageItem`, or its explained (``why``) or
    kept (a continuous crawl's versions) kind, plus, for a content mode other than "none",
    the content's metadata and the content itself (last: the longest field) in the field
    named after the mode.  One class per crawl and kind, so that every line of a crawl has
    the same fields (a table's columns)."""
    base = _BASES[explained, kept]
    names = field_names(content)
    if not names:
        return base
    mode, metadata = names[0], names[1:]
    fields: list[tuple[str, Any, Any]] = [
        (name, _CONTENT_TYPES.get(name, str | None), field(default=None)) for name in metadata]
    fields.append((mode, str, field(default="")))
    item_class: type[PageItem] = make_dataclass(f"{mode.capitalize()}{base.__name__}", fields,
                                                bases=(base,))
    item_class.__module__ = __name__
    return item_class

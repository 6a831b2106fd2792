"""The vocabulary every frontier speaks (no Scrapy): a link as the spider reports it, what an
order declares it does, which servers may be contacted now."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: a server's name -> whether a URL of it may be handed out now (None: any server)
Ready = Callable[[str], bool] | None


@dataclass(slots=True)
class Link:
    """What the spider knows about a discovered URL when it reports it."""

    url: str
    host: str = ""
    anchor: str = ""
    parent: str | None = None
    parent_score: float = 0.0
    parent_hot: bool = False
    depth: int = 0
    keyword: bool = False  # the anchor text or the URL contains a topic keyword (Cho)
    force: bool = False  # queue again even if seen (a retry)
    payload: Any = None  # opaque data the caller wants back with the entry
    # text around the link in its parent (the learned order's evidence): a str, or an object
    # whose str() is the text, made when first read (extract.LinkContext)
    context: Any = ""
    chrome: bool = False  # the link sits in its parent's navigation, header, footer or sidebar


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What an order does beyond the common interface, declared by its class: a caller asks
    ``frontier.capabilities`` (or ``orders.capabilities(name)``), not ``getattr``."""

    learns: bool = False  # learns from page digests and link context (text): send them
    uses_graph: bool = False  # keeps a link graph: every link counts, none may be dropped
    batches: bool = False  # chooses batches (``open_batch``): a journal records each choice
    explores: bool = False  # has an exploration bonus (``explore``) a resumed crawl may keep

"""The journal's operations, named once (``focuscrawl.seam.persistence.jobdir``).

Each is stored as its value (a short string), so a JOBDIR written before this enum existed
replays unchanged.
"""

from __future__ import annotations

from enum import Enum

from focuscrawl.core.frontier import Link


class Op(str, Enum):
    #: a link reported (its :func:`link_fields`)
    ADD = "add"
    #: a link the spider dropped unbuilt that the learned order counted as one more in-link
    INLINK = "inlink"
    #: Best-N-First chose its next batch
    BATCH = "batch"
    #: a URL handed out, with its lease
    TAKE = "take"
    #: a page's score, hotness and digest
    SCORED = "scored"
    #: a URL that gave no page (and whether the order learns from it)
    FAILED = "failed"
    #: the learned order scored its new links (journals before this kept it only when a pop
    #: chose nothing; a replay does it again before a hand-out either way)
    FLUSH = "flush"
    #: a frontier over FOCUS_FRONTIER_MEMORY spilled or took back a batch (likewise)
    BALANCE = "balance"
    #: a response counted against MAX_PAGES, with its crawl order
    FINISHED = "finished"
    #: everything the page produced is queued and its item written
    DONE = "done"
    #: a kept page's whole state after a fetch (FOCUS_REVISIT: focuscrawl.seam.revisit)
    REVISIT = "revisit"


def link_fields(link: Link) -> tuple:
    """What the journal keeps of a reported link: ``Link(*fields)`` rebuilds it."""
    return (link.url, link.host, link.anchor, link.parent, link.parent_score, link.parent_hot,
            link.depth, link.keyword, link.force, link.payload, str(link.context), link.chrome)

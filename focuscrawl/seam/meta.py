"""The request meta keys focuscrawl's scheduler, middlewares and spider share, each named once.

A module of its own, importing nothing: the schedulers, the middlewares and the spider all use
it, and middlewares never import a scheduler (``tests/unit/test_layers.py``).
"""

#: what the page that linked here says about the link, a dict: ``anchor``, ``parent``,
#: ``parent_score``, ``parent_hot``, ``keyword``, ``context``, ``chrome``, ``depth``; the
#: scheduler adds ``priority`` when it hands the request out
LINK = "focus"
#: the lease of a request a focuscrawl scheduler handed out (its budget and JOBDIR journal)
LEASE = "focus_lease"
#: the server (``focuscrawl.seam.servers.ServerKeys``) the scheduler reserved the request's slot on
SERVER = "focus_server"
#: an outlink's origin: the lease of the page that yielded it (``focuscrawl.seam.lifecycle``)
FROM = "focus_from"
#: the crawl order a fetched page was given (exported with its item)
ORDER = "focus_order"
#: when the politeness middleware started the request (monotonic), and that it saw it end
STARTED = "focus_started"
FINISHED = "focus_finished"
#: distributed: the request's slot in Redis, and a lease this worker lost meanwhile
TOKEN = "focus_token"
LEASE_LOST = "focus_lease_lost"
#: a robots.txt request of the robots.txt middleware
ROBOTS = "focus_robots"
#: a request sent back to wait for its host's robots.txt (the server answered 5xx/429): it was
#: never tried, so the scheduler learns nothing from its end
ROBOTS_WAIT = "focus_robots_wait"
#: the fetch rules cut the body at FOCUS_MAX_PAGE_BYTES
TRUNCATED = "focus_truncated"
#: a cut page's whole body, kept by the fetch rules for the content extraction alone (None:
#: longer than the content's bound)
WHOLE_BODY = "focus_whole_body"
#: an example page fetched outside the scheduler (focuscrawl.seam.examples): never held for
#: its robots.txt (no scheduler would take it back), refused while that is unreachable
EXAMPLE = "focus_example"
#: a sitemap a continuous crawl reads for its lastmod hints (focuscrawl.seam.sitemaps): not
#: HTML, and longer than a page may be
SITEMAP = "focus_sitemap"
#: a page's score and hotness, set by the callback for the WARC recorder
SCORE = "focus_score"
HOT = "focus_hot"

#: keys of the request a copy (redirect, retry) was made from that must not travel with it
TRANSIENT = (LEASE, STARTED, FINISHED, TOKEN, FROM, LEASE_LOST, ROBOTS_WAIT)


def lease_of(response: object) -> int | None:
    """The lease of the request ``response`` answers (None: not handed out by a focuscrawl
    scheduler)."""
    request = getattr(response, "request", None)
    return None if request is None else request.meta.get(LEASE)

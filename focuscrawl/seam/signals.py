"""focuscrawl's own Scrapy signals."""

#: Sent by the spider once a page is scored: ``url``, ``score``, ``hot``, ``digest``,
#: ``title``, ``spider``.
#: The scheduler learns page scores from it (and from the ``meta`` of outlinks).
page_scored = object()

#: Sent once by the scheduler when a learned order left to decide (``-a examples=auto``) has
#: decided whether the seeds are examples: ``examples`` (bool).  The page classifier then learns
#: the seeds' pages as examples of the topic, as with ``-a examples=true``.
seeds_judged = object()

#: Sent by the politeness middleware when a request handed out by the scheduler ends:
#: ``request``, ``status`` (None when no response came back), ``html`` (whether the response
#: is one the spider parses as a page, ``records.is_html``), ``spider``; from the distributed
#: one also ``slot`` (``distributed.hosts.SlotEnd``: the Redis scheduler frees it in the same
#: call).  The scheduler frees the request's share of the MAX_PAGES budget and counts the page.
request_finished = object()

#: The stat a component sets (to its one-line message) when the crawl cannot start; the crawl
#: then ends at once and ``scrapy crawl`` exits non-zero (``focuscrawl.seam.outcome``).
START_ERROR_STAT = "focus/start_error"

#: Sent once when a write of the crawl's files fails for lack of space (``path``, ``error``):
#: the scheduler stops journaling (``focuscrawl.seam.output.diskfull``).
disk_full = object()

#: The stat set (to the file's path) when the disk filled; the spider closes with the reason
#: ``disk_full`` and ``scrapy crawl`` exits non-zero.
DISK_FULL_STAT = "focus/disk_full"

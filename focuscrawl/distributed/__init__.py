"""Distributed mode: one focused crawl shared by many worker processes through Redis.

``settings.distributed`` switches it on.  Plain Python (redis-py, no Scrapy):
:mod:`.frontier` (the Redis frontier, its leases and the MAX_PAGES budget), :mod:`.hosts`
(cluster-wide server slots and delays), :mod:`.robotscache` (robots.txt fetched once per
cluster), :mod:`.scripts` (the Lua scripts, assembled from ``lua/*.lua``; the key layout is
at the top of ``lua/prelude.lua``).
Scrapy adapters: :mod:`.scheduler`, :mod:`.politeness`, :mod:`.robots`, :mod:`.connection`.
"""

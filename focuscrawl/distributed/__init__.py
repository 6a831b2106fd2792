"""Distributed mode: one focused crawl shared by many worker processes through Redis.

``settings.distributed`` switches it on.  Plain Python (redis-py, no Scrapy):
:mod:`.frontier` (the Redis frontier, its leases and the MAX_PAGES budget), :mod:`.hosts`
(cluster-wide server slots and delays), :mod:`.robotscache` (robots.txt fetched once per
cluster), :mod:`.scripts` (the Lua scripts and the key layout).
Scrapy adapters: :mod:`.scheduler`, :mod:`.politeness`, :mod:`.robots`, :mod:`.connection`.
"""

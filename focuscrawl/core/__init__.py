"""The framework-free core: relevance, link extraction, URLs, URL hygiene, crawl orders and the
learned order's parts.  Plain Python and numpy; no Scrapy or Twisted import
(tests/unit/test_layers.py), so the algorithms are tested and reused without a crawler, as
Cho's virtual crawler runs them."""

-- CRAWL_DELAY. ARGV: P, host, crawl_delay_ms.  robots.txt's Crawl-delay for the whole cluster.

set_crawl_delay(ARGV[2], tonumber(ARGV[3]))
return 1

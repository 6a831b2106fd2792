-- CRAWLED. ARGV: P, url, score, hot.  A fetched page's score: counted once; a hot page makes the
-- URLs within the distance limit hot (Cho, Figure 5).

crawled(ARGV[2], ARGV[3], ARGV[4] == '1')
return 1

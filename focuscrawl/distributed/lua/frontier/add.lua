-- ADD. ARGV: P, url, host, anchor, parent ('' for none), parent_score, parent_hot, depth, keyword,
-- force, payload ('' for a plain outlink).  Returns 1 if the URL is queued or moved up.

return add_link(ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7] == '1', ARGV[8], ARGV[9],
                ARGV[10] == '1', ARGV[11])

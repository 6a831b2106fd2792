-- REVISIT_REPORT: a kept page's state after a fetch, and when it falls due next.  KEYS (one
-- shard's hash tag): pages (url -> state JSON), due, leases.  ARGV: url, state, the next due
-- time ('' for none: a page gone, or one the policy never revisits).  The lease, if any, ends.

local pages, due, leases = KEYS[1], KEYS[2], KEYS[3]
local url, state, next_due = ARGV[1], ARGV[2], ARGV[3]
redis.call('HSET', pages, url, state)
redis.call('ZREM', leases, url)
if next_due == '' then
  redis.call('ZREM', due, url)
else
  redis.call('ZADD', due, next_due, url)
end
return 1

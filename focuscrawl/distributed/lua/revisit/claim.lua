-- REVISIT_CLAIM: take a page due for a revisit, if it still is.  KEYS (one shard's hash tag):
-- due (url -> due time), leases (url -> when the lease lapses).  ARGV: url, the due time the
-- worker saw, when its lease lapses.  Atomic: of two workers that saw the same page due, the
-- first takes it and the second is answered 0, so no page is revisited twice for one due time.

local due, leases = KEYS[1], KEYS[2]
local url, seen, lapse = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local now = redis.call('ZSCORE', due, url)
if not now or tonumber(now) ~= seen then
  return 0
end
redis.call('ZREM', due, url)
redis.call('ZADD', leases, lapse, url)
return 1

-- REVISIT_REAP: revisits whose lease lapsed (the worker died, or never had an answer) are due
-- again at once.  KEYS (one shard's hash tag): leases, due.  ARGV: now.  Returns how many.

local leases, due, now = KEYS[1], KEYS[2], ARGV[1]
local lapsed = redis.call('ZRANGEBYSCORE', leases, '-inf', now)
for _, url in ipairs(lapsed) do
  redis.call('ZREM', leases, url)
  redis.call('ZADD', due, now, url)
end
return #lapsed

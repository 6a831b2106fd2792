-- REVISIT_RESCHEDULE: new due times from a new allocation, for the pages not leased (a leased
-- page's next due time comes with its report).  KEYS (one shard's hash tag): due, leases.
-- ARGV: url, due, url, due, ...  Returns how many pages were (re)scheduled.

local due, leases = KEYS[1], KEYS[2]
local n = 0
for i = 1, #ARGV, 2 do
  if not redis.call('ZSCORE', leases, ARGV[i]) then
    redis.call('ZADD', due, ARGV[i + 1], ARGV[i])
    n = n + 1
  end
end
return n

-- HEARTBEAT. ARGV: P, worker, ttl_ms.  Returns {had an alive key, 1 if (re-)registered just now}.

local existed = redis.call('EXISTS', P .. 'w:' .. ARGV[2])
redis.call('SET', P .. 'w:' .. ARGV[2], ARGV[3], 'PX', ARGV[3])
local new = redis.call('ZADD', P .. 'workers', now(), ARGV[2])
return {existed, new}

-- ROBOTS_RENEW. ARGV: P, worker, robots key, lease_ms.  Extend this worker's lease; 0 if it is not
-- its own.

local lk = P .. 'rl:' .. ARGV[3]
if redis.call('GET', lk) ~= ARGV[2] then return 0 end
redis.call('PEXPIRE', lk, ARGV[4])
return 1

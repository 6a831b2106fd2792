-- ROBOTS_STORE. ARGV: P, worker, robots key, kind, status, body, ttl_ms, failed, keep_ms.  Store
-- the fetched robots.txt for the cluster and give the lease back; with kind '' nothing is stored
-- (the fetch was aborted).  failed '1': the server answered 5xx/429, one more such fetch in a row
-- for the whole cluster (rf:<robots key>, kept keep_ms past this fetch, stored in the entry as f:
-- FOCUS_ROBOTSTXT_HOLDS counts the cluster's fetches, not one worker's); any other outcome starts
-- the count again.  Returns the count.

local wid, rk = ARGV[2], ARGV[3]
local f = 0
if ARGV[4] ~= '' then
  local fk = P .. 'rf:' .. rk
  if ARGV[8] == '1' then
    f = redis.call('INCR', fk)
    redis.call('PEXPIRE', fk, ARGV[9])
  else
    redis.call('DEL', fk)
  end
  local ek = P .. 'rb:' .. rk
  redis.call('DEL', ek)
  redis.call('HSET', ek, 'k', ARGV[4], 's', ARGV[5], 'b', ARGV[6], 'f', f)
  redis.call('PEXPIRE', ek, ARGV[7])
end
local lk = P .. 'rl:' .. rk
if redis.call('GET', lk) == wid then redis.call('DEL', lk) end
return f

-- HOST_HOLD. ARGV: P, host, ms.  Hold the server for ms (its robots.txt answered 5xx/429): POP
-- hands out none of its URLs meanwhile, cluster-wide.  0 if the server's hold was ended early
-- before (POP's end_holds: holding it again would hold the same URLs at once), 1 if held now, 2 if
-- it was held already (the hold extended).

local host = ARGV[2]
if redis.call('SISMEMBER', P .. 'released', host) == 1 then return 0 end
local prev = hnum(host, 'hold', 0)
redis.call('HSET', P .. 'h:' .. host, 'hold', math.max(prev, now() + tonumber(ARGV[3])))
redis.call('SADD', P .. 'held', host)
if prev > now() then return 2 end
return 1

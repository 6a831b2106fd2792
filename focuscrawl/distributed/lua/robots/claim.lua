-- ROBOTS_CLAIM. ARGV: P, worker, robots key, lease_ms.  robots.txt once per cluster: the stored
-- entry {'entry', kind, status, body, ms left}; else {'fetch'} if this worker may fetch it (it now
-- holds the lease for lease_ms) or {'wait'} while another worker's lease lives (or this worker was
-- declared dead: it fetches nothing until it re-registers).

local wid, rk = ARGV[2], ARGV[3]
local ek = P .. 'rb:' .. rk
local v = redis.call('HMGET', ek, 'k', 's', 'b', 'f')
if v[1] then
  return {'entry', v[1], v[2] or '0', v[3] or '', redis.call('PTTL', ek), v[4] or '0'}
end
if not touch(wid) then return {'wait'} end
local lk = P .. 'rl:' .. rk
local holder = redis.call('GET', lk)
if holder and holder ~= wid then return {'wait'} end
redis.call('SET', lk, wid, 'PX', ARGV[4])
incr('robots_fetches')
return {'fetch'}

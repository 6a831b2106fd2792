-- HOST_START. ARGV: P, worker, host, token, crawl_delay_ms (what this worker's robots.txt said, or
-- 0), lease ('' for a request the frontier did not lease).  Start a request on a server if it may
-- start now, cluster-wide: returns 0 (started: the slot is active, the next start waits for the
-- delay), -1 (no free slot, or this worker was declared dead: its slots no longer count, bar a
-- started request's until the hold has passed, so it must not start anything), -2 (the lease is no
-- longer this worker's: it was reaped while the worker was frozen, another worker has the URL) or
-- ms to wait.  A token this worker already started (the reply was lost with the connection, and it
-- asks again): 0, and nothing changes.

local wid, host, token = ARGV[2], ARGV[3], ARGV[4]
-- fencing: a worker declared dead (its alive key expired) starts nothing until it re-registers
if not touch(wid) then return -1 end
-- and once re-registered, nothing it leased before: those leases were requeued
if ARGV[6] and ARGV[6] ~= '' and redis.call('HGET', P .. 'l:' .. ARGV[6], 'w') ~= wid then
  return -2
end
local cd = tonumber(ARGV[5])
if cd > hnum(host, 'cd', 0) then set_crawl_delay(host, cd) end
local sk = P .. 'hs:' .. host
local mine = redis.call('HGET', sk, token)
-- started already: asked again because the reply was lost (Redis killed after running this,
-- before answering); its own active slot would otherwise keep the request waiting forever
if mine and string.sub(mine, 1, #wid + 2) == wid .. '|a' then return 0 end
local p, a = slots(host)
if a >= conc_of(host) then return -1 end
local nxt = hnum(host, 'next', 0)
if now() < nxt then return nxt - now() end
redis.call('HSET', sk, token, wid .. '|a|' .. now())
local hk = P .. 'h:' .. host
redis.call('HSET', hk, 'next', now() + current_delay(host), 'ls', now())
redis.call('HINCRBY', hk, 'started', 1)
local keep = tonumber(CFG.start_log or '0')
if keep > 0 then
  redis.call('RPUSH', P .. 'starts:' .. host, now() .. ' ' .. wid .. ' ' .. token)
  redis.call('LTRIM', P .. 'starts:' .. host, -keep, -1)
end
if not mine then redis.call('HINCRBY', hk, 'unleased', 1) end
return 0

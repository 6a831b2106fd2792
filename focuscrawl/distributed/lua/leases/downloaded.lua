-- DOWNLOADED. ARGV: P, worker, lease, counted[, host, token, elapsed_ms, timed_out, started].  The
-- download ended: the reservation becomes a fetched page (counted towards MAX_PAGES, returns its
-- number) or, for a redirect or an error, frees its share of the budget (returns 0).  -1 for a
-- lease this worker no longer holds.  With HOST_FINISH's arguments, the request's server slot is
-- freed first (one round trip for a download's end, not two).  Told again (the reply was lost with
-- the connection, and the worker's RedisLink sends it again): the same answer, nothing counted
-- twice.

touch(ARGV[2])
if #ARGV >= 9 then finish_slot(ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]) end
local lk = P .. 'l:' .. ARGV[3]
local v = redis.call('HMGET', lk, 'w', 'st', 'n')
if (not v[1]) or v[1] ~= ARGV[2] then return -1 end
if v[2] ~= 'r' then return tonumber(v[3] or '0') end
incr('reserved', -1)
if ARGV[4] == '1' then
  local n = incr('fetched')
  redis.call('HSET', lk, 'st', 'f', 'cnt', '1', 'n', n)
  return n
end
redis.call('HSET', lk, 'st', 'f')
return 0

-- SPEND. ARGV: P (global prefix), worker, lease, back.  With a lease: one granted page was
-- downloaded and counted by its shard; returns its number across the crawl (told again for the
-- same lease, as a write replayed after a lost reply: the same number, nothing counted twice).
-- With lease '': the worker gives ``back`` unused pages of its grant back ('all': the whole
-- grant, a worker leaving); returns 0.

local wid = ARGV[2]
local gk = P .. 'grants'
if ARGV[3] ~= '' then
  touch(wid)
  local last = redis.call('HGET', P .. 'last', wid)
  if last then
    local l, n = string.match(last, '^(%d+):(%d+)$')
    if l == ARGV[3] then return tonumber(n) end
  end
  if tonumber(redis.call('HGET', gk, wid) or '0') > 0 then redis.call('HINCRBY', gk, wid, -1) end
  local n = incr('spent')
  redis.call('HSET', P .. 'last', wid, ARGV[3] .. ':' .. n)
  return n
end
if ARGV[4] == 'all' then
  redis.call('HDEL', gk, wid)
  redis.call('HDEL', P .. 'last', wid)
  return 0
end
if redis.call('HINCRBY', gk, wid, -tonumber(ARGV[4])) <= 0 then redis.call('HDEL', gk, wid) end
return 0

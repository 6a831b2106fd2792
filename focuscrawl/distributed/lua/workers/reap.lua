-- REAP. ARGV: P.  Workers whose alive key expired: their leases go back to the frontier (a fetched
-- but unsettled page is un-counted and fetched again: its outlinks may not have been queued).

local dead = 0
for _, w in ipairs(redis.call('ZRANGE', P .. 'workers', 0, -1)) do
  if redis.call('EXISTS', P .. 'w:' .. w) == 0 then
    for _, lease in ipairs(redis.call('SMEMBERS', P .. 'wl:' .. w)) do requeue_lease(lease) end
    redis.call('DEL', P .. 'wl:' .. w)
    redis.call('ZREM', P .. 'workers', w)
    incr('reaped')
    dead = dead + 1
  end
end
return dead

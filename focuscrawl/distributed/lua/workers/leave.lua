-- LEAVE. ARGV: P, worker.  A clean exit: requeue whatever the worker still holds, unregister it.

local w = ARGV[2]
for _, lease in ipairs(redis.call('SMEMBERS', P .. 'wl:' .. w)) do requeue_lease(lease) end
redis.call('DEL', P .. 'wl:' .. w, P .. 'w:' .. w)
redis.call('ZREM', P .. 'workers', w)
return 1

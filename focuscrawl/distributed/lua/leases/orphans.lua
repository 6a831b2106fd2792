-- ORPHANS. ARGV: P, worker, lease... (every lease the worker knows).  A lease Redis gives this
-- worker that it does not know -- a POP that Redis ran and persisted but whose reply was lost when
-- the connection broke -- goes back to the frontier; else it would hold its URL and its server's
-- slot for as long as the (live) worker runs.

local known = {}
for i = 3, #ARGV do known[ARGV[i]] = true end
local n = 0
for _, lease in ipairs(redis.call('SMEMBERS', P .. 'wl:' .. ARGV[2])) do
  if not known[lease] then n = n + requeue_lease(lease) end
end
return n

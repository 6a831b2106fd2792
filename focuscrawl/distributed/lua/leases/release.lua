-- RELEASE. ARGV: P, worker, lease...  Put never-fetched URLs back in the frontier (a worker
-- stopping).

local n = 0
for i = 3, #ARGV do
  if redis.call('HGET', P .. 'l:' .. ARGV[i], 'w') == ARGV[2] then
    n = n + requeue_lease(ARGV[i])
  end
end
return n

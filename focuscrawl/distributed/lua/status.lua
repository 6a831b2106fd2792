-- STATUS. ARGV: P.  Counters, the batch length and the live workers, as a flat list.

local out = redis.call('HGETALL', C)
out[#out + 1] = 'batch_len'
out[#out + 1] = redis.call('LLEN', P .. 'batch')
local live = 0
for _, w in ipairs(redis.call('ZRANGE', P .. 'workers', 0, -1)) do
  if alive(w) then live = live + 1 end
end
out[#out + 1] = 'workers'
out[#out + 1] = live
return out

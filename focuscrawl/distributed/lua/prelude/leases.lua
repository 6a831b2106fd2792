-- Prelude, part 6 (after prelude/hosts.lua): leases, a URL handed out until its worker is
-- done with it (requeued or dropped).

-- leases: a URL handed out stays in l:<lease> until its worker is done with it
local function requeue_lease(lease)
  local lk = P .. 'l:' .. lease
  local v = redis.call('HMGET', lk, 'u', 'w', 'st', 'cnt', 'h', 's', 'sc', 'kw', 'd', 'p', 'a',
                       'pl')
  if not v[1] then return 0 end
  local url, w, st, counted, host = v[1], v[2], v[3], v[4], v[5]
  if st == 'r' then incr('reserved', -1) end
  if counted == '1' then incr('fetched', -1) end
  incr('inflight', -1)
  free_pending(host, 'L' .. lease)
  redis.call('SREM', P .. 'wl:' .. w, lease)
  redis.call('DEL', lk)
  local f = ufp(url)
  if redis.call('EXISTS', rkey(f)) == 1 then return 0 end
  if BLOOM_M == 0 then seen_flip(url, 1, false) end
  local r = {f = f, u = url, s = tonumber(v[6]), h = host, sc = tonumber(v[7]), sct = v[7],
             kw = v[8], d = v[9], p = v[10], a = v[11], q = '', pl = v[12] or ''}
  incr('entries')
  incr('requeued')
  q_push(r, queue_for(url, r.kw))
  return 1
end
local function drop_lease(lease, w)
  local lk = P .. 'l:' .. lease
  local v = redis.call('HMGET', lk, 'w', 'st', 'h')
  if not v[1] or v[1] ~= w then return 0 end
  if v[2] == 'r' then incr('reserved', -1) end
  incr('inflight', -1)
  redis.call('HDEL', P .. 'hs:' .. v[3], 'L' .. lease)
  redis.call('SREM', P .. 'wl:' .. w, lease)
  redis.call('DEL', lk)
  return 1
end

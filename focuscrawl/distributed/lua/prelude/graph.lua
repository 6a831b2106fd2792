-- Prelude, part 3 (after prelude/seen.lua): Cho's link graph (g:*), for the distance and
-- backlinks orderings.

-- the link graph (Cho): node ids, insertion-ordered out-edges, hot pages, bounded distances
local function node(url)
  local id = redis.call('HGET', P .. 'g:id', url)
  if id then return id end
  id = tostring(incr('nodes'))
  redis.call('HSET', P .. 'g:id', url, id)
  redis.call('HSET', P .. 'g:url', id, url)
  return id
end
local function dist_of(id)
  local d = redis.call('HGET', P .. 'g:dist', id)
  if d then return tonumber(d) end
  return INF
end
local function distance(url)
  local id = redis.call('HGET', P .. 'g:id', url)
  if not id then return INF end
  return dist_of(id)
end
local function backlinks(url)
  local id = redis.call('HGET', P .. 'g:id', url)
  if not id then return 0 end
  return tonumber(redis.call('HGET', P .. 'g:in', id) or '0')
end
-- breadth-first relaxation from start, at most LIMIT links deep; changed ids appended
local function propagate(start, d, changed)
  if d >= LIMIT or dist_of(start) <= d then return end
  redis.call('HSET', P .. 'g:dist', start, d)
  changed[#changed + 1] = start
  local todo, head = {start}, 1
  while head <= #todo do
    local v = todo[head]
    head = head + 1
    local nd = dist_of(v) + 1
    if nd < LIMIT then
      for _, w in ipairs(redis.call('ZRANGE', P .. 'g:o:' .. v, 0, -1)) do
        if dist_of(w) > nd then
          redis.call('HSET', P .. 'g:dist', w, nd)
          changed[#changed + 1] = w
          todo[#todo + 1] = w
        end
      end
    end
  end
end
local function add_edge(src, dst, changed)
  local s, d = node(src), node(dst)
  if s == d then return end
  if redis.call('ZSCORE', P .. 'g:o:' .. s, d) then return end
  redis.call('ZADD', P .. 'g:o:' .. s, incr('edges'), d)
  redis.call('HINCRBY', P .. 'g:in', d, 1)
  local ds = redis.call('HGET', P .. 'g:dist', s)
  if ds then
    local cur = redis.call('HGET', P .. 'g:dist', d)
    local lim = LIMIT
    if cur then lim = tonumber(cur) end
    if tonumber(ds) + 1 < lim then propagate(d, tonumber(ds) + 1, changed) end
  end
end
local function set_hot(url, changed)
  local i = node(url)
  if redis.call('SADD', P .. 'g:hot', i) == 0 then return end
  propagate(i, 0, changed)
end

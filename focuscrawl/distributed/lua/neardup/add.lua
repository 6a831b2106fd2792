-- NEARDUP_ADD: is this page a near-copy of one already indexed?  If not, index it.  One call a
-- page, atomic: of two workers adding near-copies at once, the second is answered with the
-- first.  KEYS (one Redis Cluster hash tag, so one slot): meta (layout, n), checks (id -> check
-- values), urls (id -> URL), buckets (band key -> ids, comma-separated, at most max_bucket).
-- ARGV: layout, need, url, check values (uint16 LE), max_bucket, then one 8-byte key a band.
-- Returns {1} indexed, {2, url} a near-copy of url, {3} the page at this URL already indexed.

local meta, checks, urls, buckets = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local layout, need, url, mine = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local max_bucket = tonumber(ARGV[5])
local known = redis.call('HGET', meta, 'layout')
if not known then
  redis.call('HSET', meta, 'layout', layout)
elseif known ~= layout then
  return redis.error_reply('FOCUSCRAWL_NEARDUP_LAYOUT this crawl indexes pages as ' .. known ..
                           ', this worker as ' .. layout)
end

-- the candidates: every page sharing a band key, each once, in the order they were indexed
local held, ids, seen = {}, {}, {}
for i = 6, #ARGV do
  local v = redis.call('HGET', buckets, ARGV[i])
  held[i] = v
  if v then
    for id in string.gmatch(v, '%d+') do
      local n = tonumber(id)
      if not seen[n] then
        seen[n] = true
        ids[#ids + 1] = n
      end
    end
  end
end
table.sort(ids)

local best, best_agree = nil, -1
for _, id in ipairs(ids) do
  local theirs = redis.call('HGET', checks, id)
  local agree = 0
  for k = 1, #mine, 2 do
    if string.sub(mine, k, k + 1) == string.sub(theirs, k, k + 1) then agree = agree + 1 end
  end
  if agree > best_agree then best, best_agree = id, agree end
end
if best ~= nil and best_agree >= need then
  local found = redis.call('HGET', urls, best)
  if found == url then return {3} end
  return {2, found}
end

local id = redis.call('HINCRBY', meta, 'n', 1)
redis.call('HSET', checks, id, mine)
redis.call('HSET', urls, id, url)
for i = 6, #ARGV do
  local v = held[i]
  if not v then
    redis.call('HSET', buckets, ARGV[i], id)
  else
    local _, commas = string.gsub(v, ',', ',')
    if commas + 1 < max_bucket then redis.call('HSET', buckets, ARGV[i], v .. ',' .. id) end
  end
end
return {1}

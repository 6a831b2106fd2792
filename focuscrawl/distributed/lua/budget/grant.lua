-- GRANT. ARGV: P (the crawl's global prefix on a Redis Cluster), worker, want.  MAX_PAGES across
-- the shards: hand the worker up to ``want`` pages of budget (c.spent counts pages downloaded,
-- grants the budget each live worker holds unspent); a dead worker's grant comes back first.
-- Returns {granted (0: the budget is spent or held by others), pages still ungranted after}.

local wid = ARGV[2]
if not touch(wid) then return {0, 0} end
local gk = P .. 'grants'
local used = cnt('spent')
local raw = redis.call('HGETALL', gk)
for i = 1, #raw, 2 do
  if alive(raw[i]) then
    used = used + tonumber(raw[i + 1])
  else
    redis.call('HDEL', gk, raw[i])
  end
end
local give = tonumber(ARGV[3])
if MAXPAGES > 0 then give = math.max(0, math.min(give, MAXPAGES - used)) end
if give > 0 then redis.call('HINCRBY', gk, wid, give) end
return {give, MAXPAGES - used - give}

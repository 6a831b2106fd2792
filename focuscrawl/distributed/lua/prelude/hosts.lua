-- Prelude, part 5 (after prelude/queues.lua): workers' alive keys and the servers' slots,
-- delays and holds (politeness).

-- workers: an alive key holds its own TTL; any script a worker runs renews it (never revives)
local function touch(w)
  local ttl = redis.call('GET', P .. 'w:' .. w)
  if not ttl then return false end
  local ms = tonumber(ttl)
  if ms and ms >= 1 then redis.call('PEXPIRE', P .. 'w:' .. w, ms) end
  return true
end

-- servers: slots (pending at hand-out, active once started) of live workers, delays
local ALIVE = {}
local function alive(w)
  local a = ALIVE[w]
  if a == nil then
    a = redis.call('EXISTS', P .. 'w:' .. w) == 1
    ALIVE[w] = a
  end
  return a
end
-- a slot is "worker|p" (pending) or "worker|a|<start ms>" (active); a dead worker's pending
-- slot stops counting at once, its active one once its request has had CFG.hold_ms since its
-- start (the download timeout): the server may still be answering a request whose worker died
-- or froze after sending it (or froze between starting it and sending it)
local function slot_state(v)
  local w, st, ms = string.match(v, '^(.*)|(%a)|?(%d*)$')
  return w, st, tonumber(ms) or 0
end
local function slots(host)
  local key = P .. 'hs:' .. host
  local raw = redis.call('HGETALL', key)
  local pending, active = 0, 0
  local hold = tonumber(CFG.hold_ms or '0')
  for i = 1, #raw, 2 do
    local w, st, ms = slot_state(raw[i + 1])
    if alive(w) then
      if st == 'a' then active = active + 1 else pending = pending + 1 end
    elseif st == 'a' and now() < ms + hold then
      active = active + 1
    else
      redis.call('HDEL', key, raw[i])
    end
  end
  return pending, active
end
-- free a lease's slot unless it is active: a started request keeps its server's slot until
-- its worker finishes it or, once that worker is dead, until the hold has passed (slots())
local function free_pending(host, token)
  local key = P .. 'hs:' .. host
  local v = redis.call('HGET', key, token)
  if v and select(2, slot_state(v)) ~= 'a' then redis.call('HDEL', key, token) end
end
local function hnum(host, field, default)
  local v = redis.call('HGET', P .. 'h:' .. host, field)
  if v then return tonumber(v) end
  return default
end
local function conc_of(host) return hnum(host, 'conc', tonumber(CFG.conc or '1')) end
local function current_delay(host)
  return math.max(tonumber(CFG.delay_ms or '0'), hnum(host, 'cd', 0), hnum(host, 'sd', 0))
end
-- 0: no free slot; 1: a free slot, but the delay has not passed; 2: free and due
local READY = {}
-- whether a server is held (HOST_HOLD: its robots.txt answered 5xx/429); a hold that has
-- passed is forgotten, so a crawl with none in force reads one key a script, not one a server
local HOLDS = nil
local function held(host)
  if HOLDS == nil then HOLDS = redis.call('EXISTS', P .. 'held') == 1 end
  if not HOLDS then return false end
  local until_ms = hnum(host, 'hold', nil)
  if not until_ms then return false end
  if until_ms > now() then return true end
  redis.call('HDEL', P .. 'h:' .. host, 'hold')
  redis.call('SREM', P .. 'held', host)
  return false
end
local function ready(host)
  local r = READY[host]
  if r ~= nil then return r end
  local p, a = slots(host)
  if p + a >= conc_of(host) or held(host) then
    r = 0  -- no free slot, or held
  elseif now() >= hnum(host, 'next', 0) then
    r = 2
  else
    r = 1
  end
  READY[host] = r
  return r
end
local function set_crawl_delay(host, ms)
  local cd = math.min(tonumber(CFG.max_delay_ms or '30000'), math.max(0, ms))
  local hk = P .. 'h:' .. host
  redis.call('HSET', hk, 'cd', cd)
  local ls = hnum(host, 'ls', nil)
  if ls then redis.call('HSET', hk, 'next', math.max(hnum(host, 'next', 0), ls + cd)) end
end

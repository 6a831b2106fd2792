-- POP. ARGV: P, worker, late ('1': only a due server), seeding ('1': the worker's spider may still
-- yield seeds).  The best URL among servers with a free slot, due ones first, within the MAX_PAGES
-- budget; reserves its server slot, marks it seen and leases it to the worker. Returns {lease,
-- url, host, score, depth, parent, anchor, payload}, {'budget'}, {'wait', ms} (late and the best
-- free server is not due yet) or nil.

local wid = ARGV[2]
local late = ARGV[3] == '1'
if not touch(wid) then return nil end
if ARGV[4] == '1' then
  redis.call('SADD', P .. 'seeding', wid)
else
  redis.call('SREM', P .. 'seeding', wid)
end
-- held servers (HOST_HOLD) are waited for only while the crawl has something else to do: with
-- nothing leased anywhere and no live worker's seeds still to come, their holds end and those
-- servers are not held again (their URLs go out and are refused while robots.txt is still
-- unreachable)
local function end_holds()
  if HOLDS == nil then HOLDS = redis.call('EXISTS', P .. 'held') == 1 end
  if not HOLDS or cnt('inflight') > 0 then return false end  -- none held: nothing to look at
  for _, w in ipairs(redis.call('SMEMBERS', P .. 'seeding')) do
    if alive(w) then return false end
    redis.call('SREM', P .. 'seeding', w)  -- a dead worker's seeds are not coming
  end
  local n = 0
  for _, host in ipairs(redis.call('SMEMBERS', P .. 'held')) do
    if held(host) then
      redis.call('HDEL', P .. 'h:' .. host, 'hold')
      redis.call('SADD', P .. 'released', host)
      n = n + 1
    end
    READY[host] = nil
  end
  redis.call('DEL', P .. 'held')
  HOLDS = false
  if n == 0 then return false end
  incr('holds_ended', n)
  return true
end
local function wait_for(host) return {'wait', math.max(1, hnum(host, 'next', 0) - now())} end
if MAXPAGES > 0 and cnt('fetched') + cnt('reserved') >= MAXPAGES then return {'budget'} end
if cnt('entries') == 0 then return nil end
local f = nil  -- the fingerprint of the URL handed out
if BATCH then
  local bk = P .. 'batch'
  local function open_batch()
    local taken = {}
    while #taken < N do
      local top = redis.call('ZRANGE', P .. 'i:main', 0, 0)
      if #top == 0 then break end
      local host = string.sub(top[1], 13)
      local m = redis.call('ZRANGE', qkey('main', host), 0, 0)[1]
      local r = rec_fp(string.sub(m, 13))
      q_remove(r)
      r.q = 'b'
      rec_save(r)
      taken[#taken + 1] = r.f
    end
    -- Fisher-Yates with a seeded Park-Miller generator: the batch order is reproducible
    local state = cnt('rng')
    for i = #taken, 2, -1 do
      state = (state * 48271) % 2147483647
      local j = 1 + (state % i)
      taken[i], taken[j] = taken[j], taken[i]
    end
    redis.call('HSET', C, 'rng', state)
    for _, u in ipairs(taken) do redis.call('RPUSH', bk, u) end
    incr('batches')
  end
  -- the first member (from index start) whose server is due; else one with a free slot
  local function scan(start)
    local fallback, soonest = nil, nil
    for _, u in ipairs(redis.call('LRANGE', bk, start, -1)) do
      local host = rec_fp(u).h
      local r = ready(host)
      if r == 2 then
        return u, nil, nil
      end
      if r == 1 then
        fallback = fallback or u
        if not soonest or hnum(host, 'next', 0) < hnum(soonest, 'next', 0) then soonest = host end
      end
    end
    return nil, fallback, soonest
  end
  -- some queued URL (outside the batch) sits on a server that is due now
  local function idle_server_waiting()
    local start = 0
    while true do
      local chunk = redis.call('ZRANGE', P .. 'i:main', start, start + 99)
      if #chunk == 0 then return false end
      for _, m in ipairs(chunk) do
        if ready(string.sub(m, 13)) == 2 then return true end
      end
      start = start + 100
    end
  end
  if redis.call('LLEN', bk) == 0 and cnt('queued') > 0 then open_batch() end
  local fallback, soonest
  f, fallback, soonest = scan(0)
  if not f and WORK_CONSERVING and cnt('queued') > 0 and idle_server_waiting() then
    -- every URL left in the batch waits on a busy server while another idles: the next
    -- batch is chosen now, for it (its URLs come after the current batch's)
    local start = redis.call('LLEN', bk)
    open_batch()
    local f2, s2
    f, f2, s2 = scan(start)
    fallback, soonest = fallback or f2, soonest or s2
  end
  if not f and soonest and late then return wait_for(soonest) end
  f = f or fallback
  if not f and end_holds() then return {'wait', 1} end
  if not f then return nil end
  redis.call('LREM', bk, 1, f)
else
  local chosen, fb = nil, nil
  for _, q in ipairs(QUEUES) do
    local idx, start = P .. 'i:' .. q, 0
    while not chosen do
      local chunk = redis.call('ZRANGE', idx, start, start + 99)
      if #chunk == 0 then break end
      for _, m in ipairs(chunk) do
        local host = string.sub(m, 13)
        local r = ready(host)
        if r == 2 then
          chosen = {q, host}
          break
        end
        if r == 1 and (not fb or (late and hnum(host, 'next', 0) < hnum(fb[2], 'next', 0))) then
          fb = {q, host}
        end
      end
      start = start + 100
    end
    if chosen then break end
  end
  if not chosen and fb and late then return wait_for(fb[2]) end
  chosen = chosen or fb
  if not chosen and end_holds() then return {'wait', 1} end
  if not chosen then return nil end
  local m = redis.call('ZRANGE', qkey(chosen[1], chosen[2]), 0, 0)[1]
  f = string.sub(m, 13)
  q_remove(rec_fp(f))
end
local r = rec_fp(f)
local url = r.u
local lease = incr('lease_seq')
local lk = P .. 'l:' .. lease
local parent = parent_of(r)
rec_del(r)
redis.call('HSET', lk, 'u', url, 'w', wid, 'st', 'r', 'h', r.h, 's', r.s, 'sc', r.sct, 'kw', r.kw,
           'd', r.d, 'p', parent, 'a', r.a, 'pl', r.pl)
mark_done(url)
incr('entries', -1)
incr('reserved')
incr('inflight')
incr('popped')
redis.call('SADD', P .. 'wl:' .. wid, lease)
redis.call('HSET', P .. 'hs:' .. r.h, 'L' .. lease, wid .. '|p')
return {lease, url, r.h, r.sct, r.d, parent, r.a, r.pl}

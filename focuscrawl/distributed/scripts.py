"""The Lua scripts of the Redis frontier: every cluster-wide decision is one atomic script.

Each script is ``PRELUDE`` + ``CHECK`` + a body (INIT has no ``CHECK``: it writes ``cfg``;
ADD and ADD_MANY share ``ADD_LINK``, ADD's body as a Lua function, so a page's outlinks in one
call are queued exactly as one call each would; HOST_FINISH and DOWNLOADED share
``FINISH_SLOT``, so a leased download's end frees its slot and counts its page in one call).
``ARGV[1]`` is the crawl's key prefix ``P`` (keys are derived from it inside the scripts, so
this needs a single Redis server, not Redis Cluster); the crawl's configuration is read from
``P..'cfg'`` so every worker decides with the same rules, and a script that finds it gone
touches nothing and fails with ``FOCUSCRAWL_LOST`` (the crawl's keys vanished).
Times come from Redis's own clock (``TIME``), so worker clocks never matter.

Key layout under the prefix ``P``:

``cfg``                  HASH   the crawl's strategy and politeness settings (first worker wins)
``c``                    HASH   counters: seq, entries, queued, hot, reserved, inflight, fetched,
                                pages, lease_seq, rng, ... (``fetched`` + ``reserved`` is the
                                MAX_PAGES budget in use)
``r:<url>``              HASH   a queued URL's compact record: s(eq) h(ost) sc(ore) kw d(epth)
                                p(arent) a(nchor) [pl (pickled request dict, unusual requests
                                only)] q(ueue) m(ember)
``q:<queue>:<host>``     ZSET   one server's queue; score = priority (smaller first), member =
                                zero-padded seq + url, so equal priorities stay FIFO
``i:<queue>``            ZSET   servers by their best entry (score, member = that seq + host)
``k:<queue>``            HASH   host -> its current member in ``i:<queue>``
                                queues: ``main``; Cho: ``hot`` and ``url`` (dequeue2 = hot first)
``batch``                LIST   Best-N-First: the current batch, in its seeded random order
``worst``                ZSET   MAX_BUFFER eviction order: score, then newest first
``done``                 SET    URLs handed out (or ``bloom``, a STRING bitmap: a Bloom filter)
``scores``               HASH   crawled page -> its score (a page is learnt from once)
``g:id`` / ``g:url``     HASH   link graph node ids (Cho with distance or backlinks only)
``g:o:<id>``             ZSET   out-edges in insertion order; ``g:in`` HASH in-degrees
``g:hot`` SET, ``g:dist`` HASH  hot pages; distance from a hot page (only if < limit)
``l:<lease>``            HASH   a handed-out URL: its record + u(rl) w(orker) st(ate: r
                                reserved, f fetched) cnt (counted as a page) n (its number)
``wl:<worker>``          SET    a worker's leases; ``w:<worker>`` STRING alive key (its TTL in ms,
                                PX TTL; renewed by heartbeats and by every script the worker runs)
``workers``              ZSET   registered workers -> last heartbeat
``h:<host>``             HASH   next (ms), ls (last start), cd (Crawl-delay ms), slow, sd (slow
                                delay ms), conc (1 once slow), started, hold (ms: held until,
                                its robots.txt answered 5xx/429)
``held`` / ``released``  SET    servers held now / whose hold POP ended early (not held again)
``seeding``              SET    workers whose spider may still yield seeds (as of their last POP)
``hs:<host>``            HASH   the server's slots: token -> worker|p (pending) or
                                worker|a|<start ms> (active); a dead worker's pending slot no
                                longer counts, its active one not once hold_ms (the download
                                timeout) has passed since its start
``starts:<host>``        LIST   with FOCUS_REDIS_START_LOG: the last request starts, "ms worker
                                token" (a politeness audit)
``rb:<robots key>``      HASH   a robots.txt fetched for the whole cluster (key: scheme://host:port):
                                k(ind: response, error, ignored) s(tatus) b(ody, the raw file);
                                expires (PX) after FOCUS_ROBOTSTXT_TTL, or FOCUS_ROBOTSTXT_ERROR_TTL
                                when unreachable (disallow all meanwhile)
``rl:<robots key>``      STRING the worker fetching that robots.txt: a lease (PX worker TTL, renewed
                                while the fetch lasts), so a dead worker's lease expires
"""

from __future__ import annotations

PRELUDE = r"""
local P = ARGV[1]
local C = P .. 'c'
local CFG = {}
do
  local raw = redis.call('HGETALL', P .. 'cfg')
  for i = 1, #raw, 2 do CFG[raw[i]] = raw[i + 1] end
end
local STRATEGY = CFG.strategy or ''
local CHO = CFG.cho == '1'
local DIST = CFG.distance == '1'
local REORDER = CFG.reorder or 'none'
local BF = STRATEGY == 'breadth-first'
local N = tonumber(CFG.n or '1')
local BATCH = (not CHO) and (not BF) and N > 1
local WORK_CONSERVING = CFG.wc == '1'  -- open the next batch for idle servers (issue 15)
local MAXBUF = tonumber(CFG.max_buffer or '0')
local MAXPAGES = tonumber(CFG.max_pages or '0')
local LIMIT = tonumber(CFG.limit or '3')
local GRAPH = CHO and (DIST or REORDER == 'backlinks')
local BOUNDED = MAXBUF > 0 and not BF
local QUEUES = {'main'}
if CHO then QUEUES = {'hot', 'url'} end
local BLOOM_M = tonumber(CFG.bloom_m or '0')
local BLOOM_K = tonumber(CFG.bloom_k or '0')
local INF = 1073741824
local TOP = 999999999999

local function cnt(name) return tonumber(redis.call('HGET', C, name) or '0') end
local function incr(name, by) return redis.call('HINCRBY', C, name, by or 1) end
local function pad(n) return string.format('%012d', n) end

local NOW = nil
local function now()
  if NOW == nil then
    local t = redis.call('TIME')
    NOW = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return NOW
end

-- the seen-set of URLs handed out: an exact SET, or a Bloom filter (SETBIT/GETBIT)
local function bloom_bits(url)
  local h = redis.sha1hex(url)
  local h1 = tonumber(string.sub(h, 1, 8), 16)
  local h2 = tonumber(string.sub(h, 9, 16), 16)
  local bits = {}
  for i = 0, BLOOM_K - 1 do bits[#bits + 1] = (h1 + i * h2) % BLOOM_M end
  return bits
end
local function is_done(url)
  if BLOOM_M > 0 then
    for _, b in ipairs(bloom_bits(url)) do
      if redis.call('GETBIT', P .. 'bloom', b) == 0 then return false end
    end
    return true
  end
  return redis.call('SISMEMBER', P .. 'done', url) == 1
end
local function mark_done(url)
  if BLOOM_M > 0 then
    for _, b in ipairs(bloom_bits(url)) do redis.call('SETBIT', P .. 'bloom', b, 1) end
  else
    redis.call('SADD', P .. 'done', url)
  end
end

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

-- priorities: smaller first; equal priorities keep FIFO through the seq-prefixed members
local function prio(url, score)
  if CHO then
    if REORDER == 'backlinks' then return -backlinks(url) end
    if REORDER == 'score' then return -score end
    return 0
  end
  if BF then return 0 end
  return -score
end
local function queue_for(url, kw)
  if not CHO then return 'main' end
  if kw == '1' then return 'hot' end
  if DIST and distance(url) < LIMIT then return 'hot' end
  return 'url'
end

-- per-server queues and the index of servers by their best entry
local function qkey(q, host) return P .. 'q:' .. q .. ':' .. host end
local function refile(q, host)
  local idx, hk = P .. 'i:' .. q, P .. 'k:' .. q
  local old = redis.call('HGET', hk, host)
  local top = redis.call('ZRANGE', qkey(q, host), 0, 0, 'WITHSCORES')
  if #top == 0 then
    if old then
      redis.call('ZREM', idx, old)
      redis.call('HDEL', hk, host)
    end
    return
  end
  local member = string.sub(top[1], 1, 12) .. host
  if old ~= member then
    if old then redis.call('ZREM', idx, old) end
    redis.call('HSET', hk, host, member)
  end
  redis.call('ZADD', idx, top[2], member)
end
local function rec(url)
  local v = redis.call('HMGET', P .. 'r:' .. url, 's', 'h', 'sc', 'kw', 'q', 'm')
  if not v[1] then return nil end
  return {s = tonumber(v[1]), h = v[2], sc = tonumber(v[3]), kw = v[4], q = v[5], m = v[6]}
end
local function worst_member(seq, url) return pad(TOP - seq) .. url end
local function q_push(url, q, seq, host, score)
  local member = pad(seq) .. url
  redis.call('ZADD', qkey(q, host), prio(url, score), member)
  redis.call('HSET', P .. 'r:' .. url, 'q', q, 'm', member)
  incr('queued')
  if q == 'hot' then incr('hot') end
  refile(q, host)
  if BOUNDED then redis.call('ZADD', P .. 'worst', score, worst_member(seq, url)) end
end
local function q_remove(url, r)
  redis.call('ZREM', qkey(r.q, r.h), r.m)
  incr('queued', -1)
  if r.q == 'hot' then incr('hot', -1) end
  refile(r.q, r.h)
  if BOUNDED then redis.call('ZREM', P .. 'worst', worst_member(r.s, url)) end
end
-- re-key a queued entry (new priority, new queue, or with new_seq: to its new queue's tail)
local function requeue_entry(url, r, new_seq)
  q_remove(url, r)
  local seq = r.s
  if new_seq then
    seq = new_seq
    redis.call('HSET', P .. 'r:' .. url, 's', seq)
  end
  q_push(url, queue_for(url, r.kw), seq, r.h, r.sc)
end
-- Cho's promotion: a queued URL now within LIMIT of a hot page joins the hot queue's tail
local function promote(changed)
  for _, id in ipairs(changed) do
    local url = redis.call('HGET', P .. 'g:url', id)
    local r = rec(url)
    if r and r.q and r.q ~= 'hot' and r.q ~= 'b' and queue_for(url, r.kw) == 'hot' then
      requeue_entry(url, r, incr('seq'))
      incr('promotions')
    end
  end
end
-- Pant et al.: evict the lowest-scored (newest first on ties) while over MAX_BUFFER
local function bound()
  if not BOUNDED then return end
  while cnt('entries') > MAXBUF do
    local v = redis.call('ZRANGE', P .. 'worst', 0, 0)
    if #v == 0 then break end
    local url = string.sub(v[1], 13)
    local r = rec(url)
    redis.call('ZREM', P .. 'worst', v[1])
    if r and r.q and r.q ~= 'b' then
      q_remove(url, r)
      redis.call('DEL', P .. 'r:' .. url)
      incr('entries', -1)
      incr('evicted')
    end
  end
end
local function crawled(url, score_text, hot)
  if redis.call('HSETNX', P .. 'scores', url, score_text) == 0 then return end
  incr('pages')
  if hot then
    incr('pages_hot')
    if GRAPH and DIST then
      local changed = {}
      set_hot(url, changed)
      promote(changed)
    end
  end
end

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

-- leases: a URL handed out stays in l:<lease> until its worker is done with it
local function requeue_lease(lease)
  local lk = P .. 'l:' .. lease
  local v = redis.call('HMGET', lk, 'u', 'w', 'st', 'cnt', 'h')
  if not v[1] then return 0 end
  local url, w, st, counted, host = v[1], v[2], v[3], v[4], v[5]
  if st == 'r' then incr('reserved', -1) end
  if counted == '1' then incr('fetched', -1) end
  incr('inflight', -1)
  free_pending(host, 'L' .. lease)
  redis.call('SREM', P .. 'wl:' .. w, lease)
  if redis.call('EXISTS', P .. 'r:' .. url) == 1 then
    redis.call('DEL', lk)
    return 0
  end
  redis.call('HDEL', lk, 'u', 'w', 'st', 'cnt', 'n')
  redis.call('RENAME', lk, P .. 'r:' .. url)
  if BLOOM_M == 0 then redis.call('SREM', P .. 'done', url) end
  local r = rec(url)
  incr('entries')
  incr('requeued')
  q_push(url, queue_for(url, r.kw), r.s, host, r.sc)
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
"""

#: Every script but INIT starts with this: a crawl whose configuration is gone (Redis came back
#: empty after a restart without persistence, or the keys were deleted) is lost; the scripts
#: touch nothing and the worker stops (``connection.RedisLink``, ``LOST_MARK``).
CHECK = r"""
if next(CFG) == nil then return redis.error_reply('FOCUSCRAWL_LOST no crawl under ' .. P) end
"""

#: ARGV: P, json-free flat list of config fields and values.  Stores the config unless the
#: crawl has one already; returns the crawl's config (flat list) for the worker to compare.
INIT = PRELUDE + r"""
if redis.call('EXISTS', P .. 'cfg') == 0 then
  for i = 2, #ARGV, 2 do redis.call('HSET', P .. 'cfg', ARGV[i], ARGV[i + 1]) end
  local seed = tonumber(redis.call('HGET', P .. 'cfg', 'seed') or '0')
  redis.call('HSET', C, 'rng', (seed % 2147483646) + 1)
end
return redis.call('HGETALL', P .. 'cfg')
"""

#: The body of ADD, shared with ADD_MANY: record one discovered link.  ``phot`` and ``force`` are
#: booleans, the other arguments strings as ADD receives them.  Returns 1 if the URL is queued or
#: moved up, else 0.
ADD_LINK = r"""
local function add_link(url, host, anchor, parent, score_text, phot, depth, kw, force,
                        payload)
  local pscore = tonumber(score_text)
  local rk = P .. 'r:' .. url
  -- observe: learn from the parent (its score, the edge) before queueing
  if parent ~= '' then
    if redis.call('HEXISTS', P .. 'scores', parent) == 0 then crawled(parent, score_text, phot) end
    if GRAPH then
      local changed = {}
      add_edge(parent, url, changed)
      if DIST then promote(changed) end
      if REORDER == 'backlinks' then
        local r = rec(url)
        if r and r.q and r.q ~= 'b' then requeue_entry(url, r, nil) end
      end
    end
  end
  local r = rec(url)
  if r then
    incr('duplicates')
    if BF or r.q == 'b' then return 0 end
    if not CHO then
      if pscore > r.sc then
        redis.call('HSET', rk, 'sc', score_text)
        r.sc = pscore
        requeue_entry(url, r, nil)
        return 1
      end
      return 0
    end
    local better, new_seq = false, nil
    if kw == '1' and r.kw ~= '1' then
      redis.call('HSET', rk, 'kw', '1')
      r.kw = '1'
      if r.q ~= 'hot' then
        new_seq = incr('seq')
        incr('promotions')
        better = true
      end
    end
    if pscore > r.sc then
      redis.call('HSET', rk, 'sc', score_text)
      r.sc = pscore
      better = better or REORDER == 'score'
    end
    if better then
      requeue_entry(url, r, new_seq)
      return 1
    end
    return 0
  end
  if (not force) and is_done(url) then
    incr('duplicates')
    return 0
  end
  if BF and MAXBUF > 0 and cnt('entries') >= MAXBUF then
    incr('dropped_full')
    return 0
  end
  local seq = incr('seq')
  redis.call('HSET', rk, 's', seq, 'h', host, 'sc', score_text, 'kw', kw, 'd', depth,
             'p', parent, 'a', anchor)
  if payload ~= '' then redis.call('HSET', rk, 'pl', payload) end
  incr('entries')
  incr('added')
  q_push(url, queue_for(url, kw), seq, host, pscore)
  bound()
  return redis.call('EXISTS', rk)
end
"""

#: ARGV: P, url, host, anchor, parent ('' for none), parent_score, parent_hot, depth, keyword,
#: force, payload ('' for a plain outlink).  Returns 1 if the URL is queued or moved up.
ADD = PRELUDE + CHECK + ADD_LINK + r"""
return add_link(ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7] == '1', ARGV[8], ARGV[9],
                ARGV[10] == '1', ARGV[11])
"""

#: ARGV: P, then operations, each a tag and its arguments: ``a`` + ADD's ten arguments (a
#: discovered link), ``c`` + CRAWLED's three (a fetched page's score) or ``s`` + worker, lease
#: (SETTLE of one lease).  A page's score and its outlinks in one round trip instead of one per
#: link, and the leases the worker is done with along with them: each operation is exactly
#: ADD's, CRAWLED's or SETTLE's, applied in order.  Returns one integer per operation (ADD's
#: answer; 1 for ``c``; SETTLE's for ``s``).  A malformed list is refused before anything is
#: written.
ADD_MANY = PRELUDE + CHECK + ADD_LINK + r"""
local WIDTH = {a = 11, c = 4, s = 3}
local i = 2
while i <= #ARGV do
  local w = WIDTH[ARGV[i]]
  if not w or i + w - 1 > #ARGV then
    return redis.error_reply('ADD_MANY: bad operation at argument ' .. i)
  end
  i = i + w
end
local out = {}
i = 2
while i <= #ARGV do
  if ARGV[i] == 'a' then
    out[#out + 1] = add_link(ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5],
                             ARGV[i + 6] == '1', ARGV[i + 7], ARGV[i + 8], ARGV[i + 9] == '1',
                             ARGV[i + 10])
    i = i + 11
  elseif ARGV[i] == 'c' then
    crawled(ARGV[i + 1], ARGV[i + 2], ARGV[i + 3] == '1')
    out[#out + 1] = 1
    i = i + 4
  else
    touch(ARGV[i + 1])
    out[#out + 1] = drop_lease(ARGV[i + 2], ARGV[i + 1])
    i = i + 3
  end
end
return out
"""

#: ARGV: P, url, score, hot.  A fetched page's score: counted once; a hot page makes the
#: URLs within the distance limit hot (Cho, Figure 5).
CRAWLED = PRELUDE + CHECK + r"""
crawled(ARGV[2], ARGV[3], ARGV[4] == '1')
return 1
"""

#: ARGV: P, worker, late ('1': only a due server), seeding ('1': the worker's spider may still
#: yield seeds).  The best URL among servers with a free slot, due ones first, within the
#: MAX_PAGES budget; reserves its server slot, marks it seen and leases it to the worker.
#: Returns {lease, url, host, score, depth, parent, anchor, payload}, {'budget'}, {'wait', ms}
#: (late and the best free server is not due yet) or nil.
POP = PRELUDE + CHECK + r"""
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
local url = nil
if BATCH then
  local bk = P .. 'batch'
  local function open_batch()
    local taken = {}
    while #taken < N do
      local top = redis.call('ZRANGE', P .. 'i:main', 0, 0)
      if #top == 0 then break end
      local host = string.sub(top[1], 13)
      local m = redis.call('ZRANGE', qkey('main', host), 0, 0)[1]
      local u = string.sub(m, 13)
      q_remove(u, rec(u))
      redis.call('HSET', P .. 'r:' .. u, 'q', 'b')
      taken[#taken + 1] = u
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
      local host = redis.call('HGET', P .. 'r:' .. u, 'h')
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
  url, fallback, soonest = scan(0)
  if not url and WORK_CONSERVING and cnt('queued') > 0 and idle_server_waiting() then
    -- every URL left in the batch waits on a busy server while another idles: the next
    -- batch is chosen now, for it (its URLs come after the current batch's)
    local start = redis.call('LLEN', bk)
    open_batch()
    local f2, s2
    url, f2, s2 = scan(start)
    fallback, soonest = fallback or f2, soonest or s2
  end
  if not url and soonest and late then return wait_for(soonest) end
  url = url or fallback
  if not url and end_holds() then return {'wait', 1} end
  if not url then return nil end
  redis.call('LREM', bk, 1, url)
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
  url = string.sub(m, 13)
  q_remove(url, rec(url))
end
local lease = incr('lease_seq')
local lk = P .. 'l:' .. lease
redis.call('RENAME', P .. 'r:' .. url, lk)
redis.call('HSET', lk, 'u', url, 'w', wid, 'st', 'r')
mark_done(url)
incr('entries', -1)
incr('reserved')
incr('inflight')
incr('popped')
redis.call('SADD', P .. 'wl:' .. wid, lease)
local v = redis.call('HMGET', lk, 'h', 'sc', 'd', 'p', 'a', 'pl')
redis.call('HSET', P .. 'hs:' .. v[1], 'L' .. lease, wid .. '|p')
return {lease, url, v[1], v[2], v[3], v[4] or '', v[5] or '', v[6] or ''}
"""

#: The body of HOST_FINISH, shared with DOWNLOADED (a leased request's download end frees its
#: slot in the same call): free the slot; a started fetch slower than FOCUS_SLOW_SECONDS (or
#: timed out) marks the server slow.  Returns 1 if the fetch had started, else 0.
FINISH_SLOT = r"""
local function finish_slot(host, token, elapsed_ms, timed_out, started)
  redis.call('HDEL', P .. 'hs:' .. host, token)
  if started ~= '1' then return 0 end
  local elapsed = tonumber(elapsed_ms)
  local hk = P .. 'h:' .. host
  local slow = redis.call('HGET', hk, 'slow') == '1'
  if timed_out == '1' or elapsed > tonumber(CFG.slow_ms or '5000') then
    slow = true
    redis.call('HSET', hk, 'slow', '1', 'conc', '1')
  end
  if slow then
    local sd = math.min(tonumber(CFG.max_delay_ms or '30000'),
                        tonumber(CFG.slow_factor or '2') * elapsed)
    redis.call('HSET', hk, 'sd', sd)
    redis.call('HSET', hk, 'next', math.max(hnum(host, 'next', 0), now() + current_delay(host)))
  end
  return 1
end
"""

#: ARGV: P, worker, host, token, elapsed_ms, timed_out ('1'/'0'), started ('1'/'0').  Free the
#: slot; a started fetch slower than FOCUS_SLOW_SECONDS (or timed out) marks the server slow:
#: one connection, and a wait of slow_factor x response time after each fetch (Heritrix).
HOST_FINISH = PRELUDE + CHECK + FINISH_SLOT + r"""
return finish_slot(ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
"""

#: ARGV: P, worker, lease, counted[, host, token, elapsed_ms, timed_out, started].  The download
#: ended: the reservation becomes a fetched page (counted towards MAX_PAGES, returns its number)
#: or, for a redirect or an error, frees its share of the budget (returns 0).  -1 for a lease
#: this worker no longer holds.  With HOST_FINISH's arguments, the request's server slot is
#: freed first (one round trip for a download's end, not two).  Told again (the reply was lost
#: with the connection, and the worker's RedisLink sends it again): the same answer, nothing
#: counted twice.
DOWNLOADED = PRELUDE + CHECK + FINISH_SLOT + r"""
touch(ARGV[2])
if #ARGV >= 9 then finish_slot(ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]) end
local lk = P .. 'l:' .. ARGV[3]
local v = redis.call('HMGET', lk, 'w', 'st', 'n')
if (not v[1]) or v[1] ~= ARGV[2] then return -1 end
if v[2] ~= 'r' then return tonumber(v[3] or '0') end
incr('reserved', -1)
if ARGV[4] == '1' then
  local n = incr('fetched')
  redis.call('HSET', lk, 'st', 'f', 'cnt', '1', 'n', n)
  return n
end
redis.call('HSET', lk, 'st', 'f')
return 0
"""

#: ARGV: P, worker, lease...  The worker is done with these URLs (outlinks queued): drop them.
SETTLE = PRELUDE + CHECK + r"""
touch(ARGV[2])
local n = 0
for i = 3, #ARGV do n = n + drop_lease(ARGV[i], ARGV[2]) end
return n
"""

#: ARGV: P, worker, lease...  Put never-fetched URLs back in the frontier (a worker stopping).
RELEASE = PRELUDE + CHECK + r"""
local n = 0
for i = 3, #ARGV do
  if redis.call('HGET', P .. 'l:' .. ARGV[i], 'w') == ARGV[2] then
    n = n + requeue_lease(ARGV[i])
  end
end
return n
"""

#: ARGV: P, worker, lease... (every lease the worker knows).  A lease Redis gives this worker
#: that it does not know -- a POP that Redis ran and persisted but whose reply was lost when the
#: connection broke -- goes back to the frontier; else it would hold its URL and its server's
#: slot for as long as the (live) worker runs.
ORPHANS = PRELUDE + CHECK + r"""
local known = {}
for i = 3, #ARGV do known[ARGV[i]] = true end
local n = 0
for _, lease in ipairs(redis.call('SMEMBERS', P .. 'wl:' .. ARGV[2])) do
  if not known[lease] then n = n + requeue_lease(lease) end
end
return n
"""

#: ARGV: P, worker, ttl_ms.  Returns {had an alive key, 1 if (re-)registered just now}.
HEARTBEAT = PRELUDE + CHECK + r"""
local existed = redis.call('EXISTS', P .. 'w:' .. ARGV[2])
redis.call('SET', P .. 'w:' .. ARGV[2], ARGV[3], 'PX', ARGV[3])
local new = redis.call('ZADD', P .. 'workers', now(), ARGV[2])
return {existed, new}
"""

#: ARGV: P.  Workers whose alive key expired: their leases go back to the frontier (a fetched
#: but unsettled page is un-counted and fetched again: its outlinks may not have been queued).
REAP = PRELUDE + CHECK + r"""
local dead = 0
for _, w in ipairs(redis.call('ZRANGE', P .. 'workers', 0, -1)) do
  if redis.call('EXISTS', P .. 'w:' .. w) == 0 then
    for _, lease in ipairs(redis.call('SMEMBERS', P .. 'wl:' .. w)) do requeue_lease(lease) end
    redis.call('DEL', P .. 'wl:' .. w)
    redis.call('ZREM', P .. 'workers', w)
    incr('reaped')
    dead = dead + 1
  end
end
return dead
"""

#: ARGV: P, worker.  A clean exit: requeue whatever the worker still holds, unregister it.
LEAVE = PRELUDE + CHECK + r"""
local w = ARGV[2]
for _, lease in ipairs(redis.call('SMEMBERS', P .. 'wl:' .. w)) do requeue_lease(lease) end
redis.call('DEL', P .. 'wl:' .. w, P .. 'w:' .. w)
redis.call('ZREM', P .. 'workers', w)
return 1
"""

#: ARGV: P, worker, host, token, crawl_delay_ms (what this worker's robots.txt said, or 0),
#: lease ('' for a request the frontier did not lease).  Start a request on a server if it may
#: start now, cluster-wide: returns 0 (started: the slot is active, the next start waits for
#: the delay), -1 (no free slot, or this worker was declared dead: its slots no longer count,
#: bar a started request's until the hold has passed, so it must not start anything), -2 (the
#: lease is no longer this worker's: it was reaped while the worker was frozen, another worker
#: has the URL) or ms to wait.  A token this worker already started (the reply was lost with
#: the connection, and it asks again): 0, and nothing changes.
HOST_START = PRELUDE + CHECK + r"""
local wid, host, token = ARGV[2], ARGV[3], ARGV[4]
-- fencing: a worker declared dead (its alive key expired) starts nothing until it re-registers
if not touch(wid) then return -1 end
-- and once re-registered, nothing it leased before: those leases were requeued
if ARGV[6] and ARGV[6] ~= '' and redis.call('HGET', P .. 'l:' .. ARGV[6], 'w') ~= wid then
  return -2
end
local cd = tonumber(ARGV[5])
if cd > hnum(host, 'cd', 0) then set_crawl_delay(host, cd) end
local sk = P .. 'hs:' .. host
local mine = redis.call('HGET', sk, token)
-- started already: asked again because the reply was lost (Redis killed after running this,
-- before answering); its own active slot would otherwise keep the request waiting forever
if mine and string.sub(mine, 1, #wid + 2) == wid .. '|a' then return 0 end
local p, a = slots(host)
if a >= conc_of(host) then return -1 end
local nxt = hnum(host, 'next', 0)
if now() < nxt then return nxt - now() end
redis.call('HSET', sk, token, wid .. '|a|' .. now())
local hk = P .. 'h:' .. host
redis.call('HSET', hk, 'next', now() + current_delay(host), 'ls', now())
redis.call('HINCRBY', hk, 'started', 1)
local keep = tonumber(CFG.start_log or '0')
if keep > 0 then
  redis.call('RPUSH', P .. 'starts:' .. host, now() .. ' ' .. wid .. ' ' .. token)
  redis.call('LTRIM', P .. 'starts:' .. host, -keep, -1)
end
if not mine then redis.call('HINCRBY', hk, 'unleased', 1) end
return 0
"""

#: ARGV: P, host, crawl_delay_ms.  robots.txt's Crawl-delay for the whole cluster.
CRAWL_DELAY = PRELUDE + CHECK + r"""
set_crawl_delay(ARGV[2], tonumber(ARGV[3]))
return 1
"""

#: ARGV: P, host, ms.  Hold the server for ms (its robots.txt answered 5xx/429): POP hands out
#: none of its URLs meanwhile, cluster-wide.  0 if the server's hold was ended early before
#: (POP's end_holds: holding it again would hold the same URLs at once), 1 if held now, 2 if
#: it was held already (the hold extended).
HOST_HOLD = PRELUDE + CHECK + r"""
local host = ARGV[2]
if redis.call('SISMEMBER', P .. 'released', host) == 1 then return 0 end
local prev = hnum(host, 'hold', 0)
redis.call('HSET', P .. 'h:' .. host, 'hold', math.max(prev, now() + tonumber(ARGV[3])))
redis.call('SADD', P .. 'held', host)
if prev > now() then return 2 end
return 1
"""

#: ARGV: P, worker, robots key, lease_ms.  robots.txt once per cluster: the stored entry
#: {'entry', kind, status, body, ms left}; else {'fetch'} if this worker may fetch it (it now
#: holds the lease for lease_ms) or {'wait'} while another worker's lease lives (or this worker
#: was declared dead: it fetches nothing until it re-registers).
ROBOTS_CLAIM = PRELUDE + CHECK + r"""
local wid, rk = ARGV[2], ARGV[3]
local ek = P .. 'rb:' .. rk
local v = redis.call('HMGET', ek, 'k', 's', 'b', 'f')
if v[1] then
  return {'entry', v[1], v[2] or '0', v[3] or '', redis.call('PTTL', ek), v[4] or '0'}
end
if not touch(wid) then return {'wait'} end
local lk = P .. 'rl:' .. rk
local holder = redis.call('GET', lk)
if holder and holder ~= wid then return {'wait'} end
redis.call('SET', lk, wid, 'PX', ARGV[4])
incr('robots_fetches')
return {'fetch'}
"""

#: ARGV: P, worker, robots key, lease_ms.  Extend this worker's lease; 0 if it is not its own.
ROBOTS_RENEW = PRELUDE + CHECK + r"""
local lk = P .. 'rl:' .. ARGV[3]
if redis.call('GET', lk) ~= ARGV[2] then return 0 end
redis.call('PEXPIRE', lk, ARGV[4])
return 1
"""

#: ARGV: P, worker, robots key, kind, status, body, ttl_ms, failed, keep_ms.  Store the
#: fetched robots.txt for the cluster and give the lease back; with kind '' nothing is stored
#: (the fetch was aborted).  ``failed`` '1': the server answered 5xx/429, one more such fetch in
#: a row for the whole cluster (``rf:<robots key>``, kept ``keep_ms`` past this fetch, stored in
#: the entry as ``f``: FOCUS_ROBOTSTXT_HOLDS counts the cluster's fetches, not one worker's);
#: any other outcome starts the count again.  Returns the count.
ROBOTS_STORE = PRELUDE + CHECK + r"""
local wid, rk = ARGV[2], ARGV[3]
local f = 0
if ARGV[4] ~= '' then
  local fk = P .. 'rf:' .. rk
  if ARGV[8] == '1' then
    f = redis.call('INCR', fk)
    redis.call('PEXPIRE', fk, ARGV[9])
  else
    redis.call('DEL', fk)
  end
  local ek = P .. 'rb:' .. rk
  redis.call('DEL', ek)
  redis.call('HSET', ek, 'k', ARGV[4], 's', ARGV[5], 'b', ARGV[6], 'f', f)
  redis.call('PEXPIRE', ek, ARGV[7])
end
local lk = P .. 'rl:' .. rk
if redis.call('GET', lk) == wid then redis.call('DEL', lk) end
return f
"""

#: ARGV: P.  Counters, the batch length and the live workers, as a flat list.
STATUS = PRELUDE + CHECK + r"""
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
"""

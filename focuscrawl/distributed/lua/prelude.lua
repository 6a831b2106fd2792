-- The prelude every script starts with: the crawl's configuration and the shared functions.
-- ARGV[1] is the crawl's key prefix P; keys are derived from it here, so this needs a single
-- Redis server, not Redis Cluster. The configuration is read from P..'cfg' so every worker
-- decides with the same rules; times come from Redis's own clock (TIME), so worker clocks never
-- matter.
--
-- Key layout under the prefix P:
--
-- cfg                  HASH   the crawl's strategy and politeness settings (first worker wins)
-- c                    HASH   counters: seq, entries, queued, hot, reserved, inflight, fetched,
--                             pages, lease_seq, rng, ... (fetched + reserved is the MAX_PAGES
--                             budget in use)
-- r:<fp>               STRING a queued URL's record, msgpack values in order: u(rl) s(eq)
--                             h(ost) sc(ore, as text) kw d(epth) p(arent) a(nchor) q(ueue) pl
--                             (pickled request dict, unusual requests only, else ''); fp = the
--                             first 14 hex digits of the URL's SHA1 (ufp)
-- q:<queue>:<host>     ZSET   one server's queue; score = priority (smaller first), member =
--                             zero-padded seq + fp, so equal priorities stay FIFO
-- i:<queue>            ZSET   servers by their best entry (score, member = that seq + host)
-- k:<queue>            HASH   host -> its current member in i:<queue>
--                             queues: main; Cho: hot and url (dequeue2 = hot first)
-- batch                LIST   Best-N-First: the current batch (fps), in its seeded random order
-- worst                ZSET   MAX_BUFFER eviction order: score, then newest first (seq + fp)
-- d:<bucket>           SET    URLs seen: 50-bit fingerprints x 4 + their states, 1 handed out,
--                             2 learnt from (a crawled page's score counts once), 3 both
--                             (integers: an intset of 8 B each while a bucket holds <=
--                             set-max-intset-entries; bucket = 16 more bits of the SHA1 mod
--                             FP_BUCKETS); with a Bloom filter (bloom, a STRING bitmap) for the
--                             URLs handed out, only state 2
-- g:id / g:url         HASH   link graph node ids (Cho with distance or backlinks only)
-- g:o:<id>             ZSET   out-edges in insertion order; g:in HASH in-degrees
-- g:hot SET, g:dist HASH      hot pages; distance from a hot page (only if < limit)
-- l:<lease>            HASH   a handed-out URL: its record's fields + w(orker) st(ate: r
--                             reserved, f fetched) cnt (counted as a page) n (its number)
-- wl:<worker>          SET    a worker's leases; w:<worker> STRING alive key (its TTL in ms,
--                             PX TTL; renewed by heartbeats and by every script the worker runs)
-- workers              ZSET   registered workers -> last heartbeat
-- h:<host>             HASH   next (ms), ls (last start), cd (Crawl-delay ms), slow, sd (slow
--                             delay ms), conc (1 once slow), started, hold (ms: held until,
--                             its robots.txt answered 5xx/429)
-- held / released      SET    servers held now / whose hold POP ended early (not held again)
-- seeding              SET    workers whose spider may still yield seeds (as of their last POP)
-- hs:<host>            HASH   the server's slots: token -> worker|p (pending) or
--                             worker|a|<start ms> (active); a dead worker's pending slot no
--                             longer counts, its active one not once hold_ms (the download
--                             timeout) has passed since its start
-- starts:<host>        LIST   with FOCUS_REDIS_START_LOG: the last request starts, "ms worker
--                             token" (a politeness audit)
-- rb:<robots key>      HASH   a robots.txt fetched for the whole cluster (key: scheme://host:port):
--                             k(ind: response, error, ignored) s(tatus) b(ody, the raw file)
--                             f (failures in a row); expires (PX) after FOCUS_ROBOTSTXT_TTL, or
--                             FOCUS_ROBOTSTXT_ERROR_TTL when unreachable (disallow all meanwhile)
-- rl:<robots key>      STRING the worker fetching that robots.txt: a lease (PX worker TTL,
--                             renewed while the fetch lasts), so a dead worker's lease expires
-- rf:<robots key>      STRING 5xx/429 answers in a row for that robots.txt, cluster-wide

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

-- what the crawl has seen of a URL, one integer in one set: 50 bits of the URL's SHA1 times 4
-- plus its states (1 handed out, 2 learnt from, 3 both), so a fetched URL costs one intset
-- entry (8 B). Bucket = 16 more bits mod FP_BUCKETS: a bucket stays small enough for Redis's
-- intset encoding up to FP_BUCKETS x set-max-intset-entries (512) URLs, 8 M
local FP_BUCKETS = 16384
local function fp_of(url)
  local h = redis.sha1hex(url)
  return P .. 'd:' .. (tonumber(string.sub(h, 14, 17), 16) % FP_BUCKETS),
         math.floor(tonumber(string.sub(h, 1, 13), 16) / 4) * 4
end
local function num(x) return string.format('%.0f', x) end
local function seen_state(url)
  local key, base = fp_of(url)
  for st = 1, 3 do
    if redis.call('SISMEMBER', key, num(base + st)) == 1 then return st end
  end
  return 0
end
-- set (on) or clear one state bit (1 or 2) of a URL; false if it was so already
local function seen_flip(url, bit, on)
  local key, base = fp_of(url)
  local st = 0
  for i = 1, 3 do
    if redis.call('SISMEMBER', key, num(base + i)) == 1 then st = i end
  end
  if (st % (2 * bit) >= bit) == on then return false end
  local new = st - bit
  if on then new = st + bit end
  if st > 0 then redis.call('SREM', key, num(base + st)) end
  if new > 0 then redis.call('SADD', key, num(base + new)) end
  return true
end

-- the seen-set of URLs handed out: exact fingerprints, or a Bloom filter (SETBIT/GETBIT)
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
  return seen_state(url) % 2 == 1
end
local function mark_done(url)
  if BLOOM_M > 0 then
    for _, b in ipairs(bloom_bits(url)) do redis.call('SETBIT', P .. 'bloom', b, 1) end
  else
    seen_flip(url, 1, true)
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
-- a queued URL's record: one STRING (msgpack values, no field names), keyed by 56 bits of its
-- URL's SHA1; queue members carry the same 14 hex digits, so they stay short (a sorted set's
-- compact encoding takes members of at most 64 bytes, which most URLs are not)
local function ufp(url) return string.sub(redis.sha1hex(url), 1, 14) end
local function rkey(f) return P .. 'r:' .. f end
local function rec_fp(f)
  local raw = redis.call('GET', rkey(f))
  if not raw then return nil end
  local u, s, h, sc, kw, d, p, a, q, pl = cmsgpack.unpack(raw)
  return {f = f, u = u, s = s, h = h, sc = tonumber(sc), sct = sc, kw = kw, d = d, p = p,
          a = a, q = q, pl = pl}
end
local function rec(url) return rec_fp(ufp(url)) end
local function rec_save(r)
  redis.call('SET', rkey(r.f), cmsgpack.pack(r.u, r.s, r.h, r.sct, r.kw, r.d, r.p, r.a, r.q,
                                             r.pl))
end
local function worst_member(seq, f) return pad(TOP - seq) .. f end
-- queue the record r (r.s, r.h, r.sc set) in queue q and save it
local function q_push(r, q)
  redis.call('ZADD', qkey(q, r.h), prio(r.u, r.sc), pad(r.s) .. r.f)
  r.q = q
  rec_save(r)
  incr('queued')
  if q == 'hot' then incr('hot') end
  refile(q, r.h)
  if BOUNDED then redis.call('ZADD', P .. 'worst', r.sc, worst_member(r.s, r.f)) end
end
local function q_remove(r)
  redis.call('ZREM', qkey(r.q, r.h), pad(r.s) .. r.f)
  incr('queued', -1)
  if r.q == 'hot' then incr('hot', -1) end
  refile(r.q, r.h)
  if BOUNDED then redis.call('ZREM', P .. 'worst', worst_member(r.s, r.f)) end
end
-- re-key a queued entry (new priority, new queue, or with new_seq: to its new queue's tail)
local function requeue_entry(r, new_seq)
  q_remove(r)
  if new_seq then r.s = new_seq end
  q_push(r, queue_for(r.u, r.kw))
end
-- Cho's promotion: a queued URL now within LIMIT of a hot page joins the hot queue's tail
local function promote(changed)
  for _, id in ipairs(changed) do
    local url = redis.call('HGET', P .. 'g:url', id)
    local r = rec(url)
    if r and r.q ~= 'hot' and r.q ~= 'b' and queue_for(url, r.kw) == 'hot' then
      requeue_entry(r, incr('seq'))
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
    local f = string.sub(v[1], 13)
    local r = rec_fp(f)
    redis.call('ZREM', P .. 'worst', v[1])
    if r and r.q ~= 'b' then
      q_remove(r)
      redis.call('DEL', rkey(f))
      incr('entries', -1)
      incr('evicted')
    end
  end
end
local function was_crawled(url) return seen_state(url) >= 2 end
local function crawled(url, score_text, hot)
  if not seen_flip(url, 2, true) then return end
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

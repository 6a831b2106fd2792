-- Prelude, part 4 (after prelude/graph.lua): priorities, the per-server queues and their index,
-- queued URLs' records (r:<fp>), Cho's promotion, MAX_BUFFER eviction, a crawled page.

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
-- the parent's URL, once per parent (a page yields many links): pu:<fp> holds it and how many
-- records point to it (msgpack n, url); a record holds the parent's fp as 7 bytes
local function fp_bin(h) return (string.gsub(h, '..', function(c)
  return string.char(tonumber(c, 16)) end)) end
local function fp_hex(b) return (string.gsub(b, '.', function(c)
  return string.format('%02x', string.byte(c)) end)) end
local function pkey(pf) return P .. 'pu:' .. fp_hex(pf) end
local function parent_ref(url)
  if not url or url == '' then return '' end
  local pf = fp_bin(ufp(url))
  local raw = redis.call('GET', pkey(pf))
  local n = 0
  if raw then n = cmsgpack.unpack(raw) end
  redis.call('SET', pkey(pf), cmsgpack.pack(n + 1, url))
  return pf
end
local function parent_of(r)
  if r.pf == '' then return '' end
  local _, url = cmsgpack.unpack(redis.call('GET', pkey(r.pf)))
  return url
end
-- the server is usually the URL's authority: then the record stores '' for it ('\0' for an
-- empty server, never the case from a worker, so the encoding stays lossless)
local function url_host(u) return string.match(u, '^[^:/]+://([^/?#]*)') end
local function rec_fp(f)
  local raw = redis.call('GET', rkey(f))
  if not raw then return nil end
  local u, s, h, sc, kw, d, pf, a, q, pl = cmsgpack.unpack(raw)
  if h == '' then h = url_host(u) elseif h == '\0' then h = '' end
  return {f = f, u = u, s = s, h = h, sc = tonumber(sc), sct = sc, kw = kw, d = d, pf = pf,
          a = a, q = q, pl = pl}
end
local function rec(url) return rec_fp(ufp(url)) end
-- a new record (r.p its parent's URL, no r.pf yet) takes a reference to its parent's entry
local function rec_save(r)
  if r.pf == nil then r.pf = parent_ref(r.p) end
  local h = r.h
  if h == url_host(r.u) then h = '' elseif h == '' then h = '\0' end
  redis.call('SET', rkey(r.f), cmsgpack.pack(r.u, r.s, h, r.sct, r.kw, r.d, r.pf, r.a, r.q,
                                             r.pl))
end
local function rec_del(r)
  redis.call('DEL', rkey(r.f))
  if r.pf == '' then return end
  local n, url = cmsgpack.unpack(redis.call('GET', pkey(r.pf)))
  if n <= 1 then
    redis.call('DEL', pkey(r.pf))
  else
    redis.call('SET', pkey(r.pf), cmsgpack.pack(n - 1, url))
  end
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
      rec_del(r)
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

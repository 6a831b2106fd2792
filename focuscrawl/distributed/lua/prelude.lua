-- The prelude every script starts with: the crawl's configuration and the shared functions,
-- this file then prelude/*.lua in the order of scripts.PRELUDE (seen, graph, queues, hosts,
-- leases; each uses only what the files before it define).
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
--                             h(ost; '' when it is the URL's authority) sc(ore, as text) kw d(epth) pf (the parent's fp as 7
--                             bytes, '' for none) a(nchor) q(ueue) pl (pickled request dict,
--                             unusual requests only, else ''); fp = the first 14 hex digits of
--                             the URL's SHA1 (ufp)
-- pu:<fp>              STRING a parent page's URL, once for all its queued links: msgpack n
--                             (records pointing to it), url; deleted with the last of them
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

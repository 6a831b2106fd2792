-- Prelude, part 2 (after prelude.lua): the seen-set (d:<bucket>, or a Bloom filter) and
-- what the crawl knows of a URL: handed out, learnt from.

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

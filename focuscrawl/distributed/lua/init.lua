-- INIT. ARGV: P, json-free flat list of config fields and values.  Stores the config unless the
-- crawl has one already; returns the crawl's config (flat list) for the worker to compare.

if redis.call('EXISTS', P .. 'cfg') == 0 then
  for i = 2, #ARGV, 2 do redis.call('HSET', P .. 'cfg', ARGV[i], ARGV[i + 1]) end
  local seed = tonumber(redis.call('HGET', P .. 'cfg', 'seed') or '0')
  redis.call('HSET', C, 'rng', (seed % 2147483646) + 1)
end
return redis.call('HGETALL', P .. 'cfg')

-- ADD_MANY. ARGV: P, then operations, each a tag and its arguments: a + ADD's ten arguments (a
-- discovered link), c + CRAWLED's three (a fetched page's score) or s + worker, lease (SETTLE of
-- one lease).  A page's score and its outlinks in one round trip instead of one per link, and the
-- leases the worker is done with along with them: each operation is exactly ADD's, CRAWLED's or
-- SETTLE's, applied in order.  Returns one integer per operation (ADD's answer; 1 for c; SETTLE's
-- for s).  A malformed list is refused before anything is written.

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

-- SETTLE. ARGV: P, worker, lease...  The worker is done with these URLs (outlinks queued): drop
-- them.

touch(ARGV[2])
local n = 0
for i = 3, #ARGV do n = n + drop_lease(ARGV[i], ARGV[2]) end
return n

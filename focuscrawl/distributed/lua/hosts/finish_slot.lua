-- A fragment, not a script: finish_slot(), HOST_FINISH's body as a function, shared with
-- DOWNLOADED so that a leased download's end frees its slot and counts its page in one call. Frees
-- the slot; a started fetch slower than FOCUS_SLOW_SECONDS (or timed out) marks the server slow.
-- Returns 1 if the fetch had started, else 0.

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

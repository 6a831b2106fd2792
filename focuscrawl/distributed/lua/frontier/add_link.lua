-- A fragment, not a script: add_link(), ADD's body as a function, shared by ADD and ADD_MANY so
-- that a page's outlinks in one call are queued exactly as one call each would. phot and force are
-- booleans, the other arguments strings as ADD receives them. Returns 1 if the URL is queued or
-- moved up, else 0.

local function add_link(url, host, anchor, parent, score_text, phot, depth, kw, force,
                        payload)
  local pscore = tonumber(score_text)
  local rk = P .. 'r:' .. url
  -- observe: learn from the parent (its score, the edge) before queueing
  if parent ~= '' then
    if not was_crawled(parent) then crawled(parent, score_text, phot) end
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

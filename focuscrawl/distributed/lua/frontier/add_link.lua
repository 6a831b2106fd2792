-- A fragment, not a script: add_link(), ADD's body as a function, shared by ADD and ADD_MANY so
-- that a page's outlinks in one call are queued exactly as one call each would. phot and force are
-- booleans, the other arguments strings as ADD receives them. Returns 1 if the URL is queued or
-- moved up, else 0.

local function add_link(url, host, anchor, parent, score_text, phot, depth, kw, force,
                        payload)
  local pscore = tonumber(score_text)
  local f = ufp(url)
  -- observe: learn from the parent (its score, the edge) before queueing
  if parent ~= '' then
    if not was_crawled(parent) then crawled(parent, score_text, phot) end
    if GRAPH then
      local changed = {}
      add_edge(parent, url, changed)
      if DIST then promote(changed) end
      if REORDER == 'backlinks' then
        local r = rec_fp(f)
        if r and r.q ~= 'b' then requeue_entry(r, nil) end
      end
    end
  end
  local r = rec_fp(f)
  if r then
    incr('duplicates')
    if BF or r.q == 'b' then return 0 end
    if not CHO then
      if pscore > r.sc then
        r.sc, r.sct = pscore, score_text
        requeue_entry(r, nil)
        return 1
      end
      return 0
    end
    local better, new_seq, changed = false, nil, false
    if kw == '1' and r.kw ~= '1' then
      r.kw, changed = '1', true
      if r.q ~= 'hot' then
        new_seq = incr('seq')
        incr('promotions')
        better = true
      end
    end
    if pscore > r.sc then
      r.sc, r.sct, changed = pscore, score_text, true
      better = better or REORDER == 'score'
    end
    if better then
      requeue_entry(r, new_seq)
      return 1
    end
    if changed then rec_save(r) end
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
  r = {f = f, u = url, s = incr('seq'), h = host, sc = pscore, sct = score_text, kw = kw,
       d = depth, p = parent, a = anchor, q = '', pl = payload}
  incr('entries')
  incr('added')
  q_push(r, queue_for(url, kw))
  bound()
  return redis.call('EXISTS', rkey(f))
end

-- Every script but INIT runs this after the prelude: a crawl whose configuration is gone (Redis
-- came back empty after a restart without persistence, or the keys were deleted) is lost; the
-- script touches nothing and fails with FOCUSCRAWL_LOST, and the worker stops
-- (connection.RedisLink, LOST_MARK).

if next(CFG) == nil then return redis.error_reply('FOCUSCRAWL_LOST no crawl under ' .. P) end

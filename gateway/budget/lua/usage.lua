-- Spend, reservations and requests in flight of one scope, after dropping expired holds.
-- KEYS: held, res, exp, day spend, month spend   ARGV: scope
-- Reply: {day usd, month usd, day tokens, month tokens, reserved usd, reserved tokens,
--         in flight}
local _, now_ms = clock()
local held = KEYS[1]
purge(held, KEYS[2], KEYS[3], now_ms)
local d = redis.call('HMGET', KEYS[4], 'u', 't')
local m = redis.call('HMGET', KEYS[5], 'u', 't')
local h = redis.call('HMGET', held, 'u|' .. ARGV[1], 't|' .. ARGV[1], 'n|' .. ARGV[1])
return {num(d[1]) or 0, num(m[1]) or 0, num(d[2]) or 0, num(m[2]) or 0,
        num(h[1]) or 0, num(h[2]) or 0, num(h[3]) or 0}

-- Settle one request once: release its reservation, record the actual spend of every scope,
-- and charge the tpm bucket the difference between the actual and the estimated tokens.
-- KEYS: held, res, exp, settled marker, then per scope: day spend, month spend, bucket
-- ARGV: request id, actual usd, actual tokens, reserved tokens, reservation ttl ms,
--       settled-marker ttl ms, day ttl s, month ttl s, scope count
-- Reply: 1 if settled now, 0 if it had been settled already.
local held, res, exp = KEYS[1], KEYS[2], KEYS[3]
local ttl_ms = tonumber(ARGV[5])
if not redis.call('SET', KEYS[4], '1', 'NX', 'PX', ARGV[6]) then
  return 0
end
local rid = ARGV[1]
local entry = redis.call('HGET', res, rid)
if entry then -- absent when it expired: the purge released it already
  release(held, entry)
  redis.call('HDEL', res, rid)
  redis.call('ZREM', exp, rid)
end
local now_s = clock()
local usd, tok, reserved = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
for i = 1, tonumber(ARGV[9]) do
  local k = 4 + (i - 1) * 3
  for j, ttl_s in ipairs({ARGV[7], ARGV[8]}) do
    redis.call('HINCRBY', KEYS[k + j], 'u', int(usd))
    redis.call('HINCRBY', KEYS[k + j], 't', int(tok))
    redis.call('EXPIRE', KEYS[k + j], ttl_s)
  end
  local bucket = KEYS[k + 3]
  local b = redis.call('HMGET', bucket, 'tl', 'ta', 'tc', 'rl', 'ra', 'rc')
  local tpm = num(b[3])
  if tpm then -- gone only if it sat full for longer than a reservation lives
    local level = math.min(tpm, refill(num(b[1]), num(b[2]), tpm, now_s) + reserved - tok)
    redis.call('HSET', bucket, 'tl', level, 'ta', now_s)
    local full_s = full_in_s(level, tpm)
    local rpm = num(b[6])
    if rpm then
      full_s = math.max(full_s, full_in_s(refill(num(b[4]), num(b[5]), rpm, now_s), rpm))
    end
    redis.call('PEXPIRE', bucket, math.ceil(full_s * 1000) + ttl_ms)
  end
end
return 1

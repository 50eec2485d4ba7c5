-- Settle one request once: release its reservation, record the actual spend of every scope,
-- and charge the tpm bucket the difference between the actual and the estimated tokens;
-- a lease's unused rpm permits go back to the rpm bucket.
-- KEYS: held, res, exp, settled marker, then per scope: day spend, month spend, bucket
-- ARGV: request id, actual usd, actual tokens, reserved tokens, reservation ttl ms,
--       settled-marker ttl ms, day ttl s, month ttl s, scope count, unused rpm permits
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
local unused = tonumber(ARGV[10] or '0')
for i = 1, tonumber(ARGV[9]) do
  local k = 4 + (i - 1) * 3
  for j, ttl_s in ipairs({ARGV[7], ARGV[8]}) do
    redis.call('HINCRBY', KEYS[k + j], 'u', int(usd))
    redis.call('HINCRBY', KEYS[k + j], 't', int(tok))
    redis.call('EXPIRE', KEYS[k + j], ttl_s)
  end
  local bucket = KEYS[k + 3]
  local b = redis.call('HMGET', bucket, 'tl', 'ta', 'tc', 'rl', 'ra', 'rc')
  local tpm, rpm = num(b[3]), num(b[6])
  -- A bucket is gone only if it sat full for longer than a reservation lives.
  if tpm or (rpm and unused > 0) then
    local full_s = 0
    if tpm then
      local level = math.min(tpm, refill(num(b[1]), num(b[2]), tpm, now_s) + reserved - tok)
      redis.call('HSET', bucket, 'tl', level, 'ta', now_s)
      full_s = full_in_s(level, tpm)
    end
    if rpm then
      local level = refill(num(b[4]), num(b[5]), rpm, now_s)
      if unused > 0 then
        level = math.min(rpm, level + unused)
        redis.call('HSET', bucket, 'rl', level, 'ra', now_s)
      end
      full_s = math.max(full_s, full_in_s(level, rpm))
    end
    redis.call('PEXPIRE', bucket, math.ceil(full_s * 1000) + ttl_ms)
  end
end
return 1

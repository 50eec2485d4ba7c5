-- Admit one request (or a lease of several) over all its scopes, or change nothing
-- (evaluation.py, transcribed).
-- KEYS: held, res, exp, then per scope: day spend, month spend, bucket
-- ARGV: request id, cost, tokens, ttl ms, concurrent retry s, scope count, rpm permits,
--       concurrency slots, then per scope:
--       name, daily usd, monthly usd, daily tokens, monthly tokens, soft fraction, rpm, tpm,
--       concurrent ('' = unlimited)
-- Reply: {code (1 admitted, 0 refused, 2 already held), reason, scope, retry s, soft,
--         hard (spend alone reached the limit), now s, rpm limit, remaining, reset s,
--         tpm limit, remaining, reset s}
local now_s, now_ms = clock()
local held, res, exp = KEYS[1], KEYS[2], KEYS[3]
purge(held, res, exp, now_ms)
local rid = ARGV[1]
if redis.call('HEXISTS', res, rid) == 1 then
  return {2}
end
local cost, tokens, ttl_ms = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local concurrent_retry_s = tonumber(ARGV[5])
local permits, slots = tonumber(ARGV[7]), tonumber(ARGV[8])
local scopes = {}
for i = 1, tonumber(ARGV[6]) do
  local a, k = 8 + (i - 1) * 9, 3 + (i - 1) * 3
  local s = {
    name = ARGV[a + 1], d_usd = num(ARGV[a + 2]), m_usd = num(ARGV[a + 3]),
    d_tok = num(ARGV[a + 4]), m_tok = num(ARGV[a + 5]), soft = tonumber(ARGV[a + 6]),
    rpm = num(ARGV[a + 7]), tpm = num(ARGV[a + 8]), conc = num(ARGV[a + 9]),
    day = KEYS[k + 1], month = KEYS[k + 2], bucket = KEYS[k + 3],
  }
  local d = redis.call('HMGET', s.day, 'u', 't')
  local m = redis.call('HMGET', s.month, 'u', 't')
  local h = redis.call('HMGET', held, 'u|' .. s.name, 't|' .. s.name, 'n|' .. s.name)
  s.lines = {
    {'daily_usd', s.d_usd, num(d[1]) or 0, num(h[1]) or 0, cost},
    {'monthly_usd', s.m_usd, num(m[1]) or 0, num(h[1]) or 0, cost},
    {'daily_tokens', s.d_tok, num(d[2]) or 0, num(h[2]) or 0, tokens},
    {'monthly_tokens', s.m_tok, num(m[2]) or 0, num(h[2]) or 0, tokens},
  }
  s.in_flight = num(h[3]) or 0
  if s.rpm or s.tpm then
    local b = redis.call('HMGET', s.bucket, 'rl', 'ra', 'tl', 'ta')
    if s.rpm then s.rl = refill(num(b[1]), num(b[2]), s.rpm, now_s) end
    if s.tpm then s.tl = refill(num(b[3]), num(b[4]), s.tpm, now_s) end
  end
  scopes[i] = s
end

local function rate_state(admitted)
  local rq, tk -- {remaining, limit} of the tightest bucket
  for _, s in ipairs(scopes) do
    if s.rpm then
      local left = s.rl - (admitted and permits or 0)
      if not rq or left < rq[1] or (left == rq[1] and s.rpm < rq[2]) then rq = {left, s.rpm} end
    end
    if s.tpm then
      local left = s.tl - (admitted and tokens or 0)
      if not tk or left < tk[1] or (left == tk[1] and s.tpm < tk[2]) then tk = {left, s.tpm} end
    end
  end
  local out = {false, false, false, false, false, false}
  if rq then
    out[1], out[2] = rq[2], math.max(0, math.floor(rq[1]))
    out[3] = tostring(full_in_s(rq[1], rq[2]))
  end
  if tk then
    out[4], out[5] = tk[2], math.max(0, math.floor(tk[1]))
    out[6] = tostring(full_in_s(tk[1], tk[2]))
  end
  return out
end

local function reply(code, reason, scope, retry, soft, hard, rate)
  local r = {code, reason, scope, retry and tostring(retry) or false, soft, hard,
             tostring(now_s)}
  for i = 1, 6 do r[7 + i] = rate and rate[i] or false end
  return r
end

-- Budgets first: retrying cannot cure them, so they are what the caller must hear.
for _, s in ipairs(scopes) do
  for _, l in ipairs(s.lines) do
    local limit, spent, reserved, amount = l[2], l[3], l[4], l[5]
    if limit then
      if spent >= limit then
        return reply(0, l[1], s.name, nil, 0, 1, nil)
      end
      if amount > 0 and spent + reserved + amount > limit then
        return reply(0, l[1], s.name, nil, 0, 0, nil)
      end
    end
  end
end

local worst -- {reason, scope, wait s}: the longest wait, so a retry is not refused again
for _, s in ipairs(scopes) do
  local refusal
  if s.conc and s.in_flight + slots > s.conc then
    refusal = {'concurrent', s.name, concurrent_retry_s}
  else
    for _, b in ipairs({{'rpm', s.rpm, s.rl, permits}, {'tpm', s.tpm, s.tl, tokens}}) do
      local per_minute, level = b[2], b[3]
      if per_minute then
        local need = math.min(b[4], per_minute)
        local wait = math.max(0, need - level) * 60 / per_minute
        if level < need and (not refusal or wait > refusal[3]) then
          refusal = {b[1], s.name, wait}
        end
      end
    end
  end
  if refusal and (not worst or refusal[3] > worst[3]) then worst = refusal end
end
if worst then
  return reply(0, worst[1], worst[2], worst[3], 0, 0, rate_state(false))
end

local soft = 0
for _, s in ipairs(scopes) do
  for _, l in ipairs(s.lines) do
    if l[2] and l[3] + l[4] + l[5] >= s.soft * l[2] then soft = 1 end
  end
end
local rate = rate_state(true)

local names = {}
for i, s in ipairs(scopes) do
  names[i] = s.name
  redis.call('HINCRBY', held, 'u|' .. s.name, int(cost))
  redis.call('HINCRBY', held, 't|' .. s.name, int(tokens))
  redis.call('HINCRBY', held, 'n|' .. s.name, slots)
  if s.rpm or s.tpm then
    local full_s = 0
    if s.rpm then
      s.rl = s.rl - permits
      redis.call('HSET', s.bucket, 'rl', s.rl, 'ra', now_s, 'rc', s.rpm)
      full_s = full_in_s(s.rl, s.rpm)
    end
    if s.tpm then
      s.tl = s.tl - tokens
      redis.call('HSET', s.bucket, 'tl', s.tl, 'ta', now_s, 'tc', s.tpm)
      full_s = math.max(full_s, full_in_s(s.tl, s.tpm))
    end
    -- A bucket that has refilled is the same as no bucket; keep it while settle may still
    -- correct it.
    redis.call('PEXPIRE', s.bucket, math.ceil(full_s * 1000) + ttl_ms)
  end
end
-- Amounts as strings: cjson would round large numbers to 14 digits.
redis.call('HSET', res, rid,
           cjson.encode({c = int(cost), t = int(tokens), s = names, n = slots}))
redis.call('ZADD', exp, now_ms + ttl_ms, rid)
-- Once every reservation has expired these keys hold nothing that still counts. Only ever
-- lengthen their life: a replica with a shorter reservation TTL must not cut short the
-- holds of one with a longer TTL (GT leaves a key without an expiry alone, so set it first).
for _, key in ipairs({held, res, exp}) do
  if redis.call('PTTL', key) < 0 then
    redis.call('PEXPIRE', key, ttl_ms + 60000)
  else
    redis.call('PEXPIRE', key, ttl_ms + 60000, 'GT')
  end
end
return reply(1, false, false, nil, soft, 0, rate)

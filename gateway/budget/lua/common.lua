-- Prepended to every budget script: the clock, bucket arithmetic and the lazy expiry of
-- reservations, shared so that admit, settle and usage cannot disagree about them.
-- Held amounts live in one hash per tenant (fields u|scope, t|scope, n|scope) so that
-- releasing a reservation touches only keys declared by every script (Redis Cluster).

local function clock()
  -- Server time: the replicas' own clocks may disagree.
  local t = redis.call('TIME')
  local s, us = tonumber(t[1]), tonumber(t[2])
  return s + us / 1e6, s * 1000 + math.floor(us / 1000)
end

local function int(x)
  -- Lua numbers are doubles; %d keeps large integers out of exponent notation.
  return string.format('%d', x)
end

local function refill(level, at_s, per_minute, now_s)
  if not level then return per_minute end -- a bucket nobody used yet starts full
  return math.min(per_minute, level + math.max(0, now_s - at_s) * per_minute / 60)
end

local function full_in_s(level, per_minute)
  return math.max(0, per_minute - level) * 60 / per_minute
end

local function release(held, entry)
  local r = cjson.decode(entry)
  local slots = tonumber(r.n or 1) -- entries written before leases hold one slot
  for _, scope in ipairs(r.s) do
    if redis.call('HINCRBY', held, 'n|' .. scope, -slots) <= 0 then
      redis.call('HDEL', held, 'u|' .. scope, 't|' .. scope, 'n|' .. scope)
    else
      redis.call('HINCRBY', held, 'u|' .. scope, int(-tonumber(r.c)))
      redis.call('HINCRBY', held, 't|' .. scope, int(-tonumber(r.t)))
    end
  end
end

local function purge(held, res, exp, now_ms)
  -- O(expired): the index is ordered by expiry, so only the expired are read.
  local expired = redis.call('ZRANGEBYSCORE', exp, '-inf', now_ms)
  for _, rid in ipairs(expired) do
    local entry = redis.call('HGET', res, rid)
    if entry then
      release(held, entry)
      redis.call('HDEL', res, rid)
    end
  end
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', exp, '-inf', now_ms)
  end
end

local function num(x)
  -- HMGET gives false for a missing field; an empty ARGV means "no limit".
  if x == false or x == '' then return nil end
  return tonumber(x)
end

-- Token bucket rate limiter.
--
-- The bucket holds up to `capacity` tokens and refills continuously at `rate` tokens per
-- second; each request takes `requested` tokens. Bursts up to the capacity are allowed, the
-- long-run rate is bounded by the refill rate. The state is a hash {tokens, ts}; the refill
-- since the last call is computed from the elapsed time, so nothing needs to run in between.
--
-- The current time is an argument: a script that reads TIME gives different results on every
-- run (and cannot be tested); passing `now` keeps the script deterministic.
--
-- KEYS[1]: the bucket (a hash with fields tokens and ts)
-- ARGV[1]: capacity, a positive integer
-- ARGV[2]: refill rate in tokens per second, a positive number
-- ARGV[3]: now, in milliseconds
-- ARGV[4]: tokens requested (optional, default 1), a positive integer
-- Returns {allowed (1/0), whole tokens left}.
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = tonumber(ARGV[4] or '1')
if not capacity or capacity < 1 or capacity % 1 ~= 0 then
  return redis.error_reply('ERR capacity must be a positive integer')
end
if not rate or not (rate > 0) or rate == math.huge then
  return redis.error_reply('ERR rate must be a positive number of tokens per second')
end
if not now or now < 0 or now % 1 ~= 0 then
  return redis.error_reply('ERR now must be a non-negative integer of milliseconds')
end
if not requested or requested < 1 or requested % 1 ~= 0 then
  return redis.error_reply('ERR requested must be a positive integer')
end

-- A missing bucket (new client, or expired after being idle) starts full.
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or capacity
local last = tonumber(state[2]) or now
-- A clock that went backwards refills nothing (rather than draining the bucket).
local elapsed = math.max(0, now - last)
tokens = math.min(capacity, tokens + elapsed * rate / 1000)

local allowed = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
end

-- A Lua number passed to redis.call is written with 17 significant digits: 0.3 tokens is
-- stored as "0.29999999999999999", which tonumber() reads back as exactly the same number.
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
-- An idle bucket is full again after capacity / rate seconds: let it expire by then.
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000))
return {allowed, math.floor(tokens)}

-- A counter that never goes above a cap (INCRBY with a ceiling).
--
-- Useful for quotas such as "at most 5 active sessions" or "at most 100 free credits".
-- The check and the increment are atomic, so concurrent callers cannot overshoot the cap.
--
-- KEYS[1]: the counter (a string holding an integer; missing means 0)
-- ARGV[1]: the cap, a non-negative integer
-- ARGV[2]: the increment, a positive integer (optional, default 1)
-- Returns {1, new value} when incremented, {0, current value} when the cap would be exceeded.
local cap = tonumber(ARGV[1])
local step = tonumber(ARGV[2] or '1')
if not cap or cap < 0 or cap % 1 ~= 0 then
  return redis.error_reply('ERR cap must be a non-negative integer')
end
if not step or step < 1 or step % 1 ~= 0 then
  return redis.error_reply('ERR increment must be a positive integer')
end

local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if not current then
  -- The same message INCR would give, so callers see one error for a corrupt counter.
  return redis.error_reply('ERR value is not an integer or out of range')
end
if current + step > cap then
  return {0, current}
end
return {1, redis.call('INCRBY', KEYS[1], step)}

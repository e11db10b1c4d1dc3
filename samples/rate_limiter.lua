-- Fixed-window rate limiter with input validation.
-- KEYS[1]: the counter key for this client and window
-- ARGV[1]: the limit (requests per window), ARGV[2]: the window length in seconds
-- Returns {allowed (1/0), remaining, ttl of the window}
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
if not limit or limit < 1 or limit % 1 ~= 0 then
  return redis.error_reply('ERR limit must be a positive integer')
end
if not window or window < 1 or window % 1 ~= 0 then
  return redis.error_reply('ERR window must be a positive integer of seconds')
end

local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('EXPIRE', KEYS[1], window)
end
local ttl = redis.call('TTL', KEYS[1])
if count > limit then
  return {0, 0, ttl}
end
return {1, limit - count, ttl}

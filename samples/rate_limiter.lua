-- Fixed-window rate limiter with input validation.
--
-- Every client gets one counter key per window (for example "ratelimit:<user>:<route>").
-- The first request of a window creates the counter and starts its expiry; when the key
-- expires the window is over and the next request starts a fresh one.
--
-- KEYS[1]: the counter key for this client and window
-- ARGV[1]: the limit (requests allowed per window), a positive integer
-- ARGV[2]: the window length in seconds, a positive integer
-- Returns {allowed (1/0), remaining requests in this window, seconds until the window resets}
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
-- tonumber() accepts "1.5", "1e3" and " 7 ": insist on whole, positive numbers.
if not limit or limit < 1 or limit % 1 ~= 0 then
  return redis.error_reply('ERR limit must be a positive integer')
end
if not window or window < 1 or window % 1 ~= 0 then
  return redis.error_reply('ERR window must be a positive integer of seconds')
end

-- INCR creates the key at 1 when it is missing, and fails on a non-integer value.
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('TTL', KEYS[1])
-- Start the window on the first request. Also repair a counter that lost its expiry
-- (TTL -1, e.g. written by hand or by a PERSIST): otherwise the client is blocked forever.
if count == 1 or ttl == -1 then
  redis.call('EXPIRE', KEYS[1], window)
  ttl = window
end
if count > limit then
  return {0, 0, ttl}
end
return {1, limit - count, ttl}

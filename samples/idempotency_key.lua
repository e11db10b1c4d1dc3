-- Idempotency key: remember the result of an operation so a retried request gets the same
-- answer instead of running the operation twice (a double payment, a duplicate order).
--
-- The first call stores the result under the request's idempotency key with an expiry; later
-- calls with the same key return the stored result and change nothing. SET ... NX GET (Redis
-- 7.0+) does both in one command: it sets only if the key is missing and replies the value
-- that was there before (nil when there was none).
--
-- KEYS[1]: the idempotency key, e.g. "idem:<client>:<request id>"
-- ARGV[1]: the result to store
-- ARGV[2]: how long to remember it, in seconds (a positive integer)
-- Returns {1, result} the first time, {0, stored result} on a repeat.
local result = ARGV[1]
local ttl = tonumber(ARGV[2])
if result == nil then
  return redis.error_reply('ERR missing result')
end
if not ttl or ttl < 1 or ttl % 1 ~= 0 then
  return redis.error_reply('ERR ttl must be a positive integer of seconds')
end

local previous = redis.call('SET', KEYS[1], result, 'NX', 'EX', ttl, 'GET')
if previous then
  return {0, previous}
end
return {1, result}

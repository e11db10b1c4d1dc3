-- Acquire a lock with a token and an expiry (SET NX PX).
--
-- The token is a random value only the caller knows (a UUID); it is what unlock.lua compares
-- before deleting. The expiry makes sure a crashed owner cannot hold the lock forever.
-- Calling again with the same token while the lock is held refreshes its expiry (re-entrant
-- extend), so a long job can keep its lock alive.
--
-- KEYS[1]: the lock key
-- ARGV[1]: my token
-- ARGV[2]: the lock's time to live in milliseconds, a positive integer
-- Returns the status OK when the lock is (now) mine, otherwise the current holder's
-- remaining time to live in milliseconds (PTTL; -1 means the lock has no expiry at all).
local token = ARGV[1]
local ttl_ms = tonumber(ARGV[2])
if token == nil or token == '' then
  return redis.error_reply('ERR token must be a non-empty string')
end
if not ttl_ms or ttl_ms < 1 or ttl_ms % 1 ~= 0 then
  return redis.error_reply('ERR ttl must be a positive integer of milliseconds')
end

-- SET ... NX replies the status OK (a table {ok = 'OK'} in Lua) or a nil (false in Lua).
local acquired = redis.call('SET', KEYS[1], token, 'NX', 'PX', ttl_ms)
if acquired then
  return acquired
end
if redis.call('GET', KEYS[1]) == token then
  -- Already mine: extend it.
  redis.call('PEXPIRE', KEYS[1], ttl_ms)
  return redis.status_reply('OK')
end
return redis.call('PTTL', KEYS[1])

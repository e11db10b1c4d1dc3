-- Safe unlock: compare-and-delete.
--
-- A lock is a string key holding a random token chosen by its owner (see lock_acquire.lua).
-- Deleting it blindly with DEL could release a lock that expired and was since taken by
-- another client. GET + DEL inside one script is atomic: nothing runs in between.
--
-- KEYS[1]: the lock key
-- ARGV[1]: my token
-- Returns 1 if the lock was mine and is now released, 0 otherwise (missing or held by
-- someone else).
local token = ARGV[1]
if token == nil or token == '' then
  return redis.error_reply('ERR token must be a non-empty string')
end

-- GET returns false (not nil) for a missing key; a WRONGTYPE error aborts the script.
if redis.call('GET', KEYS[1]) == token then
  return redis.call('DEL', KEYS[1])
end
return 0

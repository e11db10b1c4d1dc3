-- Lesson 1: an atomic counter with a window.
-- KEYS[1]: the counter; ARGV[1]: how much to add; ARGV[2]: the window in seconds.
-- Returns the new count. TODO: add ARGV[1], not 1; return the new value; give a new
-- counter a TTL of ARGV[2] seconds.
local value = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], (tonumber(value) or 0) + 1)
return value

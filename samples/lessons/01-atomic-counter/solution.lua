-- Lesson 1, a solution: INCRBY is atomic and returns the new value; the TTL is set only when the
-- counter has none (the call that created it), so the window does not move with each event.
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('TTL', KEYS[1]) == -1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return count

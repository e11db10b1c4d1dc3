-- Lesson 2, a solution: the INCR is the caller's place in the window; the call that opens the
-- window (count 1) sets its end.
local limit = tonumber(ARGV[1])
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
if count > limit then
  return 0
end
return 1

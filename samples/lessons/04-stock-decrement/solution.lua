-- Lesson 4, a solution: check and decrement in one script; a missing item counts as no stock and
-- is not created.
local stock = tonumber(redis.call('GET', KEYS[1]) or '0')
local qty = tonumber(ARGV[1])
if stock < qty then
  return -1
end
return redis.call('DECRBY', KEYS[1], qty)

-- A reference solution: compare as numbers; a missing score counts as none.
local old = tonumber(redis.call('GET', KEYS[1]))
local new = tonumber(ARGV[1])
if old and old >= new then
  return old
end
redis.call('SET', KEYS[1], new)
return new

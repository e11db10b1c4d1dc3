#!lua name=counters
-- A function library (Redis 7+): load it with FUNCTION LOAD, call it with FCALL / FCALL_RO.
--
-- Two functions share the library's local helper. counter_incr adds ARGV[1] (default 1) to the
-- counter KEYS[1] and returns the new value; counter_get only reads, so it is flagged no-writes
-- and may be called with FCALL_RO (on a replica too).
--
-- In the library's top-level code only redis.register_function, redis.log and the version are
-- available: redis.call works inside the functions, never while the library loads.

local function amount(args)
  local n = tonumber(args[1] or '1')
  if not n or n ~= math.floor(n) then
    return redis.error_reply('ERR the increment must be an integer')
  end
  return n
end

redis.register_function('counter_incr', function(keys, args)
  local n = amount(args)
  if type(n) == 'table' then
    return n
  end
  return redis.call('INCRBY', keys[1], n)
end)

redis.register_function{
  function_name = 'counter_get',
  callback = function(keys, args)
    return tonumber(redis.call('GET', keys[1]) or '0')
  end,
  flags = {'no-writes'},
  description = 'the counter, 0 when it does not exist',
}

-- Delayed queue: move the jobs that are due from a schedule to a work list.
--
-- Producers schedule a job with `ZADD delayed <due time in ms> <job>`; consumers pop ready
-- jobs from the list with BLPOP/LMOVE. A poller calls this script regularly. Reading, removing
-- and pushing happen atomically, so two pollers can never move the same job twice.
--
-- Both keys carry the same {hash tag} ("{jobs}:delayed", "{jobs}:ready") so that on a Redis
-- Cluster they live in one hash slot, as a script touching both requires.
--
-- KEYS[1]: the schedule, a sorted set of jobs scored by their due time (ms)
-- KEYS[2]: the ready list
-- ARGV[1]: the current time in ms (passed in rather than read with TIME, so the script is
--          deterministic and testable)
-- ARGV[2]: the most jobs to move in one call (1..1000)
-- Returns the jobs moved, oldest due first (an empty array when nothing is due).
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
if not now or now < 0 or now % 1 ~= 0 then
  return redis.error_reply('ERR now must be a non-negative integer of milliseconds')
end
-- The batch limit keeps each call short (a script blocks the whole server) and keeps
-- unpack() below far from Lua's limit on the number of arguments.
if not limit or limit < 1 or limit > 1000 or limit % 1 ~= 0 then
  return redis.error_reply('ERR limit must be an integer between 1 and 1000')
end

local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
if #due == 0 then
  return due
end
redis.call('ZREM', KEYS[1], unpack(due))
redis.call('RPUSH', KEYS[2], unpack(due))
return due

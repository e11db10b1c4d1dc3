-- Delete many keys in batches and count how many existed.
--
-- unpack() of a very large table fails ("too many results to unpack") because Lua limits the
-- number of values on its stack, so the keys are passed to DEL a batch at a time.
-- All keys are declared in KEYS (not built inside the script) so Redis Cluster can route the
-- call; on a cluster they must also share one hash slot, hence the {hash tag} in names such as
-- "{session:9f1c}:cart" (only the part in braces is hashed).
--
-- KEYS: the keys to delete (any number, any type), e.g. every key of one session
-- ARGV[1]: the batch size (1..1000, optional, default 100)
-- Returns the number of keys that existed and were deleted.
local batch = tonumber(ARGV[1] or '100')
if not batch or batch < 1 or batch > 1000 or batch % 1 ~= 0 then
  return redis.error_reply('ERR batch size must be an integer between 1 and 1000')
end

local deleted = 0
for first = 1, #KEYS, batch do
  local last = math.min(first + batch - 1, #KEYS)
  deleted = deleted + redis.call('DEL', unpack(KEYS, first, last))
end
return deleted

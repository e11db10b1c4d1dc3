-- Optimistic concurrency on a hash: update fields only if the version matches.
--
-- A record is a hash with a "version" field. A client reads the record, computes its change,
-- and writes back with the version it read. If someone else wrote in between, the version has
-- moved on and the write is refused: the client re-reads and retries.
--
-- KEYS[1]: the record (a hash)
-- ARGV[1]: the version the client read (0 for a record that does not exist yet)
-- ARGV[2], ARGV[3], ...: field, value pairs to write (at least one pair)
-- Returns the new version, or an error reply CONFLICT when the version does not match.
local expected = tonumber(ARGV[1])
if not expected or expected < 0 or expected % 1 ~= 0 then
  return redis.error_reply('ERR version must be a non-negative integer')
end
if #ARGV < 3 or #ARGV % 2 == 0 then
  return redis.error_reply('ERR expected field value pairs after the version')
end
for i = 2, #ARGV, 2 do
  if ARGV[i] == 'version' then
    return redis.error_reply('ERR the version field is managed by this script')
  end
end

-- HGET returns false when the record or the field is missing: that is version 0.
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if not current then
  return redis.error_reply('ERR the version field of ' .. KEYS[1] .. ' is not a number')
end
if current ~= expected then
  return redis.error_reply(string.format('CONFLICT expected version %d, found %d', expected, current))
end

-- unpack(ARGV, 2) passes ARGV[2], ARGV[3], ... : every field and value in one HSET.
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return redis.call('HINCRBY', KEYS[1], 'version', 1)

-- Lesson 3, a solution: compare and delete in one script, so no other client can take the lock
-- between the check and the delete.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0

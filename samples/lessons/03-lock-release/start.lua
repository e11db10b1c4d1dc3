-- Lesson 3: release a lock only if it is yours (compare-and-delete).
-- KEYS[1]: the lock; ARGV[1]: your token. Returns 1 (released) or 0 (not yours, or no lock).
-- TODO: this deletes whoever holds the lock.
return redis.call('DEL', KEYS[1])

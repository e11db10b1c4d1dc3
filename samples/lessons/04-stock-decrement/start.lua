-- Lesson 4: take stock, never below zero.
-- KEYS[1]: the stock; ARGV[1]: units to take. Returns the stock left, or -1 when there is not
-- enough (nothing changed). TODO: this sells stock it does not have.
return redis.call('DECRBY', KEYS[1], ARGV[1])

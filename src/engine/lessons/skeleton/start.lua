-- The script the class starts from: KEYS[1] a score, ARGV[1] a new score.
-- TODO: this replaces a higher score with a lower one.
redis.call('SET', KEYS[1], ARGV[1])
return tonumber(ARGV[1])

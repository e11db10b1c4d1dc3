-- Lesson 2: a fixed-window rate limiter.
-- KEYS[1]: the caller's counter; ARGV[1]: calls allowed per window; ARGV[2]: the window in seconds.
-- Returns 1 (allowed) or 0 (over the limit). TODO: count the calls; deny past the limit.
return 1

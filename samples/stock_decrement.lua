-- Decrement a stock counter only if there is enough stock.
--
-- A plain DECRBY would happily go below zero; checking with GET first and then DECRBY from
-- the client is a race. Inside a script the check and the write are atomic.
--
-- KEYS[1]: the stock counter of one item (a string holding an integer)
-- ARGV[1]: the quantity to take, a positive integer
-- Returns the new stock, or an error reply: NOSTOCK when there is not enough (nothing is
-- changed), ERR for bad input or an unknown item.
local qty = tonumber(ARGV[1])
if not qty or qty < 1 or qty % 1 ~= 0 then
  return redis.error_reply('ERR quantity must be a positive integer')
end

local current = redis.call('GET', KEYS[1])
if not current then
  return redis.error_reply('ERR unknown item ' .. KEYS[1])
end
local stock = tonumber(current)
if not stock then
  return redis.error_reply('ERR stock value is not an integer')
end
if stock < qty then
  -- A custom error code (the first word) lets the client tell this case apart from a bug.
  return redis.error_reply(string.format('NOSTOCK only %d left, %d requested', stock, qty))
end
return redis.call('DECRBY', KEYS[1], qty)

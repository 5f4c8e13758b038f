"""
The Lua scripts of L{tinyscrapy.frontier.redisstore.RedisStore}: each step of a shared
crawl that must not be torn runs as one script, atomically in Redis.
"""

_PUSH = """
local n = tonumber(ARGV[1])
local flags = {}
for i = 0, n - 1 do
  local at = 2 + 4 * i
  if redis.call('SADD', KEYS[1], ARGV[at]) == 1 or ARGV[at + 3] == '1' then
    redis.call('ZADD', KEYS[2], ARGV[at + 1], ARGV[at + 2])
    flags[i + 1] = 1
  else
    flags[i + 1] = 0
  end
end
for i = 2 + 4 * n, #ARGV do
  redis.call('HDEL', KEYS[3], ARGV[i])
end
return flags
"""

_POP = """
redis.call('SADD', KEYS[3], ARGV[2])
local items = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
for i = 1, #items, 2 do
  redis.call('HSET', KEYS[2], items[i], items[i + 1])
end
if #items > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #items / 2 - 1)
end
return items
"""

# KEYS: queue, workers, epoch; ARGV: prefix, worker, epoch token.
# Returns {queued, processing, requeued, state}: state 0 the crawl goes on, 1 it is over
# (another worker cleared the keys), 2 the epoch is gone or not ours (Redis lost the data).
_STATUS = """
local epoch = redis.call('GET', KEYS[3])
if epoch ~= ARGV[3] then
  if epoch == 'over:' .. ARGV[3] then
    return {0, 0, 0, 1}
  end
  return {0, 0, 0, 2}
end
local requeued, processing = 0, 0
for _, worker in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local hash = ARGV[1] .. 'processing:' .. worker
  if worker ~= ARGV[2] and redis.call('EXISTS', ARGV[1] .. 'alive:' .. worker) == 0 then
    local entries = redis.call('HGETALL', hash)
    for i = 1, #entries, 2 do
      redis.call('ZADD', KEYS[1], entries[i + 1], entries[i])
    end
    requeued = requeued + #entries / 2
    redis.call('DEL', hash)
    redis.call('SREM', KEYS[2], worker)
  else
    processing = processing + redis.call('HLEN', hash)
  end
end
return {redis.call('ZCARD', KEYS[1]), processing, requeued, 0}
"""

_BEAT = """
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
return 1
"""

# KEYS: alive, workers, epoch, seen; ARGV: heartbeat ms, worker, a new epoch token.
# Joins, and starts a new epoch unless a crawl is on: returns {epoch token, SCARD seen}.
_JOIN = """
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
local epoch = redis.call('GET', KEYS[3])
if not epoch or string.sub(epoch, 1, 5) == 'over:' then
  epoch = ARGV[3]
  redis.call('SET', KEYS[3], epoch)
end
return {epoch, redis.call('SCARD', KEYS[4])}
"""

# KEYS: queue, workers, processing, alive, seen, epoch;
# ARGV: worker, clear (1/0), prefix, epoch token, the "over" marker's TTL in ms.
# This worker's entries go back to the queue and it leaves. With clear, the other workers
# whose heartbeat expired are requeued and removed; those alive with an empty processing
# hash do not hold the crawl: if none holds an entry and the queue is empty, the keys
# go (the epoch is marked over for the idle workers still registered, so that they
# finish). Returns {released, cleared, entries held by other workers, queued}.
_RELEASE = """
local entries = redis.call('HGETALL', KEYS[3])
for i = 1, #entries, 2 do
  redis.call('ZADD', KEYS[1], entries[i + 1], entries[i])
end
redis.call('DEL', KEYS[3], KEYS[4])
redis.call('SREM', KEYS[2], ARGV[1])
local epoch = redis.call('GET', KEYS[6])
local cleared, holders, idle = 0, 0, {}
if ARGV[2] == '1' and epoch == ARGV[4] then
  for _, worker in ipairs(redis.call('SMEMBERS', KEYS[2])) do
    local hash = ARGV[3] .. 'processing:' .. worker
    if redis.call('EXISTS', ARGV[3] .. 'alive:' .. worker) == 1 then
      local held = redis.call('HLEN', hash)
      holders = holders + held
      if held == 0 then
        idle[#idle + 1] = worker
      end
    else
      local dead = redis.call('HGETALL', hash)
      for i = 1, #dead, 2 do
        redis.call('ZADD', KEYS[1], dead[i + 1], dead[i])
      end
      redis.call('DEL', hash)
      redis.call('SREM', KEYS[2], worker)
    end
  end
  if holders == 0 and redis.call('ZCARD', KEYS[1]) == 0 then
    for _, worker in ipairs(idle) do
      redis.call('DEL', ARGV[3] .. 'alive:' .. worker, ARGV[3] .. 'processing:' .. worker)
    end
    redis.call('DEL', KEYS[5], KEYS[1], KEYS[2])
    if #idle > 0 then
      redis.call('SET', KEYS[6], 'over:' .. ARGV[4], 'PX', ARGV[5])
    else
      redis.call('DEL', KEYS[6])
    end
    cleared = 1
  end
elseif epoch == 'over:' .. ARGV[4] and redis.call('SCARD', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[6])
end
return {#entries / 2, cleared, holders, redis.call('ZCARD', KEYS[1])}
"""

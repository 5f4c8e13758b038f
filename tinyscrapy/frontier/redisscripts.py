"""
The Lua scripts of L{tinyscrapy.frontier.redisstore.RedisStore}: each step of a shared
crawl that must not be torn runs as one script, atomically in Redis.

Every script that writes the crawl's keys first checks the crawl's epoch (C{KEYS[1]}
against the token in C{ARGV[1]}) and writes nothing unless it is the worker's own: a
worker of a lost epoch (Redis restarted without its data, or the crawl ended while the
worker was away) can never recreate a queue or a seen set. Each answer starts with the
state: 0 the epoch is ours, 1 it is marked over (C{over:TOKEN}: the crawl ended), 2 it is
gone or another crawl's.
"""

_EPOCH = """
local function epoch_state()
  local epoch = redis.call('GET', KEYS[1])
  if epoch == ARGV[1] then return 0 end
  if epoch == 'over:' .. ARGV[1] then return 1 end
  return 2
end
local state = epoch_state()
"""

# KEYS: epoch, seen, queue, processing; ARGV: token, n, n x (fingerprint, score, member,
# dont_filter), then the acknowledgements. Returns {state, flag per entry (1 queued)}.
PUSH = _EPOCH + """
if state ~= 0 then return {state} end
local n = tonumber(ARGV[2])
local answer = {0}
for i = 0, n - 1 do
  local at = 3 + 4 * i
  if redis.call('SADD', KEYS[2], ARGV[at]) == 1 or ARGV[at + 3] == '1' then
    redis.call('ZADD', KEYS[3], ARGV[at + 1], ARGV[at + 2])
    answer[#answer + 1] = 1
  else
    answer[#answer + 1] = 0
  end
end
for i = 3 + 4 * n, #ARGV do
  redis.call('HDEL', KEYS[4], ARGV[i])
end
return answer
"""

# KEYS: epoch, queue, processing, workers, alive; ARGV: token, count, worker, heartbeat
# ms. Returns {state, evicted (1: this worker had been removed as dead), member, score,
# ...}.
POP = _EPOCH + """
if state ~= 0 then return {state, 0} end
local evicted = 1 - redis.call('SISMEMBER', KEYS[4], ARGV[3])
redis.call('SADD', KEYS[4], ARGV[3])
redis.call('SET', KEYS[5], '1', 'PX', ARGV[4])
local items = redis.call('ZRANGE', KEYS[2], 0, tonumber(ARGV[2]) - 1, 'WITHSCORES')
for i = 1, #items, 2 do
  redis.call('HSET', KEYS[3], items[i], items[i + 1])
end
if #items > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, #items / 2 - 1)
end
local answer = {0, evicted}
for i = 1, #items do answer[#answer + 1] = items[i] end
return answer
"""

# KEYS: epoch, queue, workers, seen; ARGV: token, prefix, worker, may end (1/0), the end
# marker's TTL in ms, persist (1/0).
# Requeues the entries of workers whose heartbeat expired, then counts. With "may end"
# (this worker is idle), an empty queue and no entry held by a live worker end the crawl
# here, atomically: the keys go (the seen set stays with persist) and the epoch becomes
# the end marker, which expires. Returns {state, queued, processing, requeued}: state 1
# with the counts 0 when the crawl is over (now or before).
STATUS = _EPOCH + """
if state ~= 0 then return {state, 0, 0, 0} end
local requeued, processing = 0, 0
local workers = redis.call('SMEMBERS', KEYS[3])
for _, worker in ipairs(workers) do
  local hash = ARGV[2] .. 'processing:' .. worker
  if worker ~= ARGV[3] and redis.call('EXISTS', ARGV[2] .. 'alive:' .. worker) == 0 then
    local entries = redis.call('HGETALL', hash)
    for i = 1, #entries, 2 do
      redis.call('ZADD', KEYS[2], entries[i + 1], entries[i])
    end
    requeued = requeued + #entries / 2
    redis.call('DEL', hash)
    redis.call('SREM', KEYS[3], worker)
  else
    processing = processing + redis.call('HLEN', hash)
  end
end
local queued = redis.call('ZCARD', KEYS[2])
if ARGV[4] == '1' and queued == 0 and processing == 0 then
  for _, worker in ipairs(workers) do
    redis.call('DEL', ARGV[2] .. 'alive:' .. worker, ARGV[2] .. 'processing:' .. worker)
  end
  redis.call('DEL', KEYS[2], KEYS[3])
  if ARGV[6] ~= '1' then
    redis.call('DEL', KEYS[4])
  end
  redis.call('SET', KEYS[1], 'over:' .. ARGV[1], 'PX', ARGV[5])
  return {1, 0, 0, requeued}
end
return {0, queued, processing, requeued}
"""

# KEYS: epoch, alive, workers; ARGV: token, heartbeat ms, worker.
# Returns {state, evicted}.
BEAT = _EPOCH + """
if state ~= 0 then return {state, 0} end
local evicted = 1 - redis.call('SISMEMBER', KEYS[3], ARGV[3])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
redis.call('SADD', KEYS[3], ARGV[3])
return {0, evicted}
"""

# KEYS: epoch, alive, workers, seen, queue; ARGV: a new token, heartbeat ms, worker.
# Joins the crawl on, or starts one (a new epoch) when there is none. A crawl whose end
# marker is there is not joined. Returns {how, token, SCARD seen, ZCARD queue, marker's
# PTTL}: how is 'join' (a crawl is on), 'new' (a new epoch; seen and queue say whether
# keys of an earlier crawl were left: SCHEDULER_PERSIST or a stopped crawl) or 'over'.
JOIN = """
local epoch = redis.call('GET', KEYS[1])
if epoch and string.sub(epoch, 1, 5) == 'over:' then
  return {'over', epoch, 0, 0, redis.call('PTTL', KEYS[1])}
end
local how = 'join'
if not epoch then
  epoch = ARGV[1]
  redis.call('SET', KEYS[1], epoch)
  how = 'new'
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
redis.call('SADD', KEYS[3], ARGV[3])
return {how, epoch, redis.call('SCARD', KEYS[4]), redis.call('ZCARD', KEYS[5]), -1}
"""

# KEYS: epoch, queue, workers, processing, alive; ARGV: token, worker.
# This worker's entries go back to the queue and it leaves (when the epoch is its own:
# else there is nothing of it left to release). Returns {state, released}.
RELEASE = _EPOCH + """
if state ~= 0 then return {state, 0} end
local entries = redis.call('HGETALL', KEYS[4])
for i = 1, #entries, 2 do
  redis.call('ZADD', KEYS[2], entries[i + 1], entries[i])
end
redis.call('DEL', KEYS[4], KEYS[5])
redis.call('SREM', KEYS[3], ARGV[2])
return {0, #entries / 2}
"""

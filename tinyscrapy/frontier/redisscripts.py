"""
The Lua scripts of L{tinyscrapy.frontier.redisstore.RedisStore}: each step of a shared
crawl that must not be torn runs as one script, atomically in Redis.

Every script that writes the crawl's keys first checks the crawl's epoch (C{KEYS[1]}
against the token in C{ARGV[1]}) and writes nothing unless it is the worker's own: a
worker of a lost epoch (Redis restarted without its data, or the crawl ended while the
worker was away) can never recreate a queue or a seen set. Each answer starts with the
state: 0 the epoch is ours, 1 it is marked over (C{over:TOKEN}: the crawl ended), 2 it is
gone or another crawl's.

Politeness across workers lives here too. A queue member starts with its lease header:
16 bytes of id, the slot's name (a 2-byte length, then the name: a host), the rule's
parallelism and delay in ms (4 bytes each). Per slot, in hashes C{host:active} (leases
out), C{host:next} (Redis C{TIME} in ms before which no lease is granted), C{host:hold}
(the lease whose send is awaited: C{WORKER|ID}) and C{host:sent} (the next-send time
after the last real send): a pop grants a lease only while the slot has fewer than its
parallelism out and, for a delay, when its next-send time passed; it then holds the slot
until the worker reports the send (the next-send time becomes the send's C{TIME} plus the
delay: timed from the send), or the lease ends unsent, or the hold expires.

Nothing read from a key is trusted: a member too short for its header, or whose name
length runs past its end, and a held entry whose score is not a number, are moved to the
dead-letter list C{dead} (the last C{DEAD_MAX} kept) instead of failing the script for every
worker; a parallelism is read as at least 1 and at most C{MAX_PARALLELISM}, a delay as at
most C{MAX_DELAY_MS}; a counter of a politeness hash that is not a number counts as 0; a
next-send time later than any worker sets (the member's delay from now, and the hold while
a send is awaited) is read as that; and while no lease is out anywhere, the status script
drops the slots' lease counters and holds, so a counter no lease stands behind cannot
keep a slot shut.
"""

#: The bounds of what a queue member's lease header may ask (docs/shared-crawl.md).
MAX_PARALLELISM = 65535
MAX_DELAY_MS = 3_600_000
#: The most members the dead-letter list keeps (the oldest go first).
DEAD_MAX = 10_000

_LEASES = f"""
local MAX_PAR, MAX_DELAY, DEAD_MAX = {MAX_PARALLELISM}, {MAX_DELAY_MS}, {DEAD_MAX}
""" + """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function num(v)
  return tonumber(v) or 0
end
-- the lease header of member m: its slot, parallelism and delay (ms), bounded; nil when m
-- is too short for it (16 bytes of id, a 2-byte name length, the name, 8 bytes)
local function lease_of(m)
  if #m < 26 then return nil end
  local hlen = struct.unpack('>H', m, 17)
  if #m < 26 + hlen then return nil end
  local host = string.sub(m, 19, 18 + hlen)
  local par, delay = struct.unpack('>I4>I4', m, 19 + hlen)
  if par < 1 then par = 1 elseif par > MAX_PAR then par = MAX_PAR end
  if delay > MAX_DELAY then delay = MAX_DELAY end
  return host, par, delay
end
-- a member no worker can read: out of the queue's way, kept for a person to look at
local function dead(prefix, m)
  redis.call('RPUSH', prefix .. 'dead', m)
  redis.call('LTRIM', prefix .. 'dead', -DEAD_MAX, -1)
end
-- the lease of member m (held by worker) ends; conservative: it may have been sent
local function free(prefix, m, worker, conservative)
  local host, _, delay = lease_of(m)
  if not host then return end
  local active = prefix .. 'host:active'
  if num(redis.call('HGET', active, host)) <= 1 then
    redis.call('HDEL', active, host)
  else
    redis.call('HINCRBY', active, host, -1)
  end
  if delay > 0 and redis.call('HGET', prefix .. 'host:hold', host)
      == worker .. '|' .. string.sub(m, 1, 16) then
    redis.call('HDEL', prefix .. 'host:hold', host)
    local nxt = num(redis.call('HGET', prefix .. 'host:sent', host))
    if conservative then nxt = now_ms() + delay end
    redis.call('HSET', prefix .. 'host:next', host, nxt)
  end
end
-- worker sent a request of slot host now: its next send is timed from here. keep: the
-- worker still has a request of that slot on its way to the wire (the send was another,
-- e.g. its robots.txt): its hold stays
local function sent(prefix, worker, host, delay, keep)
  local nxt = now_ms() + delay
  local hold = redis.call('HGET', prefix .. 'host:hold', host)
  if hold and string.sub(hold, 1, #worker + 1) == worker .. '|' and keep == '0' then
    redis.call('HDEL', prefix .. 'host:hold', host)
  else
    nxt = math.max(nxt, num(redis.call('HGET', prefix .. 'host:next', host)))
  end
  redis.call('HSET', prefix .. 'host:next', host, nxt)
  redis.call('HSET', prefix .. 'host:sent', host, nxt)
end
-- entries of a processing hash back to the queue (a bad one to the dead-letter list):
-- {requeued, dead}
local function requeue(prefix, queue, entries, worker)
  local requeued, bad = 0, 0
  for i = 1, #entries, 2 do
    local m, score = entries[i], tonumber(entries[i + 1])
    if score and lease_of(m) then
      redis.call('ZADD', queue, score, m)
      free(prefix, m, worker, true)
      requeued = requeued + 1
    else
      dead(prefix, m)
      bad = bad + 1
    end
  end
  return requeued, bad
end
local function delete_leases(prefix)
  redis.call('DEL', prefix .. 'host:active', prefix .. 'host:next', prefix .. 'host:hold',
             prefix .. 'host:sent')
end
"""

_EPOCH = _LEASES + """
local function epoch_state()
  local epoch = redis.call('GET', KEYS[1])
  if epoch == ARGV[1] then return 0 end
  if epoch == 'over:' .. ARGV[1] then return 1 end
  return 2
end
local state = epoch_state()
"""

# KEYS: epoch, seen, queue, processing; ARGV: token, n, prefix, worker, r, d, n x
# (fingerprint, score, member, dont_filter), r x (slot, delay ms, keep) sends to report, d
# members of processing this worker could not read (to the dead-letter list), then the
# acknowledgements. Returns {state, flag per entry (1 queued)}.
PUSH = _EPOCH + """
if state ~= 0 then return {state} end
local n, prefix, worker = tonumber(ARGV[2]), ARGV[3], ARGV[4]
local r, d = tonumber(ARGV[5]), tonumber(ARGV[6])
local answer = {0}
for i = 0, n - 1 do
  local at = 7 + 4 * i
  if ARGV[at + 3] == '1' or redis.call('SADD', KEYS[2], ARGV[at]) == 1 then
    redis.call('ZADD', KEYS[3], ARGV[at + 1], ARGV[at + 2])
    answer[#answer + 1] = 1
  else
    answer[#answer + 1] = 0
  end
end
local at = 7 + 4 * n
for i = 0, r - 1 do
  sent(prefix, worker, ARGV[at + 3 * i], tonumber(ARGV[at + 3 * i + 1]), ARGV[at + 3 * i + 2])
end
at = at + 3 * r
for i = at, at + d - 1 do
  if redis.call('HDEL', KEYS[4], ARGV[i]) == 1 then
    free(prefix, ARGV[i], worker, false)
    dead(prefix, ARGV[i])
  end
end
for i = at + d, #ARGV do
  if redis.call('HDEL', KEYS[4], ARGV[i]) == 1 then
    free(prefix, ARGV[i], worker, false)
  end
end
return answer
"""

# KEYS: epoch, queue, processing, workers, alive; ARGV: token, count, worker, heartbeat
# ms, prefix, how many of the best queued to look at, hold ms.
# Takes up to count requests whose slot grants a lease (see above), best first; a member
# whose lease header cannot be read goes to the dead-letter list. Returns {state, evicted
# (1: this worker had been removed as dead), wait ms (when a slot's delay held requests
# back: the soonest it ends; else -1), dead-lettered, member, score, ...}.
POP = _EPOCH + """
if state ~= 0 then return {state, 0, -1, 0} end
local count, worker, prefix = tonumber(ARGV[2]), ARGV[3], ARGV[5]
local evicted = 1 - redis.call('SISMEMBER', KEYS[4], worker)
redis.call('SADD', KEYS[4], worker)
redis.call('SET', KEYS[5], '1', 'PX', ARGV[4])
local items = redis.call('ZRANGE', KEYS[2], 0, tonumber(ARGV[6]) - 1, 'WITHSCORES')
local answer, blocked, wait, now, bad = {0, evicted, -1, 0}, {}, -1, nil, 0
local active_key = prefix .. 'host:active'
for i = 1, #items, 2 do
  if (#answer - 4) / 2 >= count then break end
  local m = items[i]
  local host, par, delay = lease_of(m)
  if not host then
    redis.call('ZREM', KEYS[2], m)
    dead(prefix, m)
    bad = bad + 1
  elseif not blocked[host] then
    local ok = num(redis.call('HGET', active_key, host)) < par
    if ok and delay > 0 then
      now = now or now_ms()
      local nxt = num(redis.call('HGET', prefix .. 'host:next', host))
      -- the latest a worker sets: the delay from now, and the hold while a send is awaited
      local latest = now + delay
      if redis.call('HEXISTS', prefix .. 'host:hold', host) == 1 then
        latest = latest + tonumber(ARGV[7])
      end
      if nxt > latest then  -- no worker wrote it: the slot's own delay from now
        nxt = latest
        redis.call('HSET', prefix .. 'host:next', host, nxt)
      end
      if nxt > now then
        ok = false
        if wait < 0 or nxt - now < wait then wait = nxt - now end
      else
        redis.call('HSET', prefix .. 'host:next', host, now + delay + tonumber(ARGV[7]))
        redis.call('HSET', prefix .. 'host:hold', host, worker .. '|' .. string.sub(m, 1, 16))
        blocked[host] = true  -- one at a time: the next is timed from its send
      end
    end
    if ok then
      redis.call('HSET', active_key, host, num(redis.call('HGET', active_key, host)) + 1)
      redis.call('HSET', KEYS[3], m, items[i + 1])
      redis.call('ZREM', KEYS[2], m)
      answer[#answer + 1] = m
      answer[#answer + 1] = items[i + 1]
    else
      blocked[host] = true
    end
  end
end
answer[3] = wait
answer[4] = bad
return answer
"""

# KEYS: epoch, queue, workers, seen; ARGV: token, prefix, worker, may end (1/0), the end
# marker's TTL in ms, persist (1/0).
# Requeues the entries of workers whose heartbeat expired, then counts. With "may end"
# (this worker is idle), an empty queue and no entry held by a live worker end the crawl
# here, atomically: the keys go (the seen set and the dead-letter list stay) and the
# epoch becomes the end marker, which expires. Returns {state, queued, processing,
# requeued, dead-lettered}: state 1 with the counts 0 when the crawl is over (now or
# before).
STATUS = _EPOCH + """
if state ~= 0 then return {state, 0, 0, 0, 0} end
local requeued, processing, dead_count = 0, 0, 0
local workers = redis.call('SMEMBERS', KEYS[3])
for _, worker in ipairs(workers) do
  local hash = ARGV[2] .. 'processing:' .. worker
  if worker ~= ARGV[3] and redis.call('EXISTS', ARGV[2] .. 'alive:' .. worker) == 0 then
    local back, bad = requeue(ARGV[2], KEYS[2], redis.call('HGETALL', hash), worker)
    requeued = requeued + back
    dead_count = dead_count + bad
    redis.call('DEL', hash)
    redis.call('SREM', KEYS[3], worker)
  else
    processing = processing + redis.call('HLEN', hash)
  end
end
local queued = redis.call('ZCARD', KEYS[2])
if processing == 0 then
  -- no lease is out anywhere, so no slot has one out or awaits a send: counters and
  -- holds left by an earlier crawl, or written by hand, go (a pop grants again)
  redis.call('DEL', ARGV[2] .. 'host:active', ARGV[2] .. 'host:hold')
end
if ARGV[4] == '1' and queued == 0 and processing == 0 then
  for _, worker in ipairs(workers) do
    redis.call('DEL', ARGV[2] .. 'alive:' .. worker, ARGV[2] .. 'processing:' .. worker)
  end
  redis.call('DEL', KEYS[2], KEYS[3])
  delete_leases(ARGV[2])
  if ARGV[6] ~= '1' then
    redis.call('DEL', KEYS[4])
  end
  redis.call('SET', KEYS[1], 'over:' .. ARGV[1], 'PX', ARGV[5])
  return {1, 0, 0, requeued, dead_count}
end
return {0, queued, processing, requeued, dead_count}
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

# KEYS: epoch, queue, workers, processing, alive; ARGV: token, worker, prefix.
# This worker's entries go back to the queue and it leaves (when the epoch is its own:
# else there is nothing of it left to release). Returns {state, released}.
RELEASE = _EPOCH + """
if state ~= 0 then return {state, 0} end
local released = requeue(ARGV[3], KEYS[2], redis.call('HGETALL', KEYS[4]), ARGV[2])
redis.call('DEL', KEYS[4], KEYS[5])
redis.call('SREM', KEYS[3], ARGV[2])
return {0, released}
"""

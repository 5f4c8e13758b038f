"""
L{RedisStore}: the keys of a shared crawl in one Redis database, moved as bytes.

Every key starts with the crawl's prefix (C{tinyscrapy:SPIDER:} by default):

    - C{seen}: a SET of request fingerprints (decimal). C{SADD} answers 1 to one process
      only, so two processes never both queue a page;
    - C{queue}: a ZSET of encoded requests, scored by C{-priority} (lowest score first);
      a member starts with a microsecond timestamp, so equal priorities come out roughly
      first in, first out;
    - C{workers}: a SET of the worker ids that joined;
    - C{processing:WORKER}: a HASH of the requests WORKER took and has not acknowledged
      (member -> score);
    - C{alive:WORKER}: a key that expires C{worker timeout} seconds after WORKER's last
      heartbeat.

Each step that must not be torn is one Lua script, so it is atomic in Redis: a push (dedup
then queue, then the acknowledgements of the requests that yielded them), a pop (out of
the queue into C{processing}), a status (requeue the entries of dead workers, then count),
a release (this worker's entries back to the queue, leave, maybe clear). The status and
release scripts name keys that are not in C{KEYS} (one per worker): fine on one Redis,
not on Redis Cluster.

txredisapi imports the global reactor: it is imported here only when connecting.
"""

from urllib.parse import unquote, urlsplit

from twisted.internet.defer import CancelledError, succeed

from tinyscrapy.errors import UsageError

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

_STATUS = """
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
return {redis.call('ZCARD', KEYS[1]), processing, requeued}
"""

_BEAT = """
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
return 1
"""

_RELEASE = """
local entries = redis.call('HGETALL', KEYS[3])
for i = 1, #entries, 2 do
  redis.call('ZADD', KEYS[1], entries[i + 1], entries[i])
end
redis.call('DEL', KEYS[3], KEYS[4])
redis.call('SREM', KEYS[2], ARGV[1])
local cleared = 0
if ARGV[2] == '1' and redis.call('SCARD', KEYS[2]) == 0
    and redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[5], KEYS[1], KEYS[2])
  cleared = 1
end
return {#entries / 2, cleared}
"""


def parse_redis_url(url):
    """
    C{redis://[[user]:password@]host[:port][/db]} as C{(host, port, db, user, password)}.

    @raise UsageError: it is not such a URL.
    """
    try:
        parts = urlsplit(url)
        port = parts.port or 6379
        db = int(parts.path.strip("/") or 0)
    except ValueError as e:
        raise UsageError(f"--scheduler {url}: not a redis://host:port/db URL ({e})") from None
    if parts.scheme.lower() != "redis" or not parts.hostname or db < 0 \
            or parts.query or parts.fragment:
        raise UsageError(f"--scheduler {url}: not a redis://host:port/db URL")
    password = unquote(parts.password) if parts.password else None
    user = unquote(parts.username) if parts.username else None
    return parts.hostname, port, db, user, password


def connect(url, reactor, timeout=10.0):
    """
    Connect to the Redis of C{url}, with reconnection once connected.

    txredisapi retries a first connection for ever, so a plain TCP connection is tried
    first: it fails at once, with the reason, when nothing listens there.

    @return: a Deferred firing with the txredisapi connection once Redis answered PING;
        it errbacks with L{UsageError} ("cannot connect to URL: reason") otherwise.
    """
    from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
    from twisted.internet.protocol import Protocol

    host, port, db, user, password = parse_redis_url(url)
    endpoint = TCP4ClientEndpoint(reactor, host, port, timeout=timeout)
    d = connectProtocol(endpoint, Protocol())
    d.addCallback(_cb_reachable, host, port, db, user, password, reactor, timeout)
    d.addErrback(_eb_cannot_connect, url)
    return d


def _cb_reachable(protocol, host, port, db, user, password, reactor, timeout):
    """Something listens: close the probe and open txredisapi's connection."""
    import txredisapi

    protocol.transport.loseConnection()
    credentials = {"password": password}
    if user:  # older txredisapi releases have no username
        credentials["username"] = user
    client = txredisapi.lazyConnection(
        host, port, db, reconnect=True, charset=None, convertNumbers=False,
        connectTimeout=timeout, replyTimeout=timeout, **credentials)
    d = client.ping()
    call = reactor.callLater(timeout, d.cancel)
    d.addBoth(_cb_answered, client, call)
    return d


def _cb_answered(result, client, call):
    if call.active():
        call.cancel()
    if hasattr(result, "check"):  # a Failure: no answer
        d = client.disconnect()
        d.addBoth(_cb_reraise, result)
        return d
    return client


def _cb_reraise(_, failure):
    return failure


def _eb_cannot_connect(failure, url):
    from twisted.internet import error
    if failure.check(UsageError):
        return failure
    reasons = {error.ConnectionRefusedError: "Connection refused",
               error.TimeoutError: "timed out", error.DNSLookupError: "unknown host",
               error.ConnectingCancelledError: "timed out", CancelledError: "no answer to PING"}
    reason = next((text for kind, text in reasons.items() if failure.check(kind)),
                  failure.getErrorMessage())
    raise UsageError(f"cannot connect to {url}: {reason}")


class RedisStore:
    """
    One worker's view of the shared keys. Each method sends one command or script and
    returns its Deferred, which errbacks with txredisapi's C{ConnectionError} (or
    C{TimeoutError}) when the connection is lost before the answer came.

    @ivar prefix: the keys' prefix (C{str}).
    @ivar worker: this worker's id (C{str}).
    """

    def __init__(self, client, prefix, worker, worker_timeout):
        self.client = client
        self.prefix = prefix
        self.worker = worker
        self.worker_timeout_ms = max(1, int(worker_timeout * 1000))
        self.seen, self.queue, self.workers = (prefix + "seen", prefix + "queue",
                                               prefix + "workers")
        self.processing = f"{prefix}processing:{worker}"
        self.alive = f"{prefix}alive:{worker}"

    def beat(self):
        """Join (again) and renew this worker's heartbeat. @return: a Deferred."""
        return self.client.eval(_BEAT, [self.alive, self.workers],
                                [self.worker_timeout_ms, self.worker])

    def push(self, entries, acks=()):
        """
        Queue the new ones of C{entries}, then acknowledge C{acks}, in one script.

        @param entries: C{(fingerprint, score, member, dont_filter)} tuples.
        @param acks: members of this worker's C{processing} hash to forget.
        @return: a Deferred firing with one flag per entry: 1 queued, 0 a duplicate.
        """
        if not entries and not acks:
            return succeed([])
        args = [len(entries)]
        for fingerprint, score, member, dont_filter in entries:
            args += [fingerprint, score, member, 1 if dont_filter else 0]
        args += list(acks)
        return self.client.eval(_PUSH, [self.seen, self.queue, self.processing], args)

    def pop(self, count):
        """
        Move up to C{count} requests, best first, from the queue into C{processing}.

        @return: a Deferred firing with a list of C{(member, score)}.
        """
        d = self.client.eval(_POP, [self.queue, self.processing, self.workers],
                             [count, self.worker])
        d.addCallback(_pairs)
        return d

    def taken(self):
        """@return: a Deferred firing with this worker's C{processing} as C{(member, score)}
        pairs (after a pop whose answer was lost)."""
        d = self.client.hgetall(self.processing)
        d.addCallback(dict.items)
        d.addCallback(list)
        return d

    def status(self):
        """
        Requeue the entries of dead workers, then count.

        @return: a Deferred firing with C{(queued, processing, requeued)}: requests in the
            queue, entries held by live workers (this one included), entries requeued now.
        """
        d = self.client.eval(_STATUS, [self.queue, self.workers], [self.prefix, self.worker])
        d.addCallback(_ints)
        return d

    def release(self, clear):
        """
        This worker's C{processing} back to the queue; leave the crawl. With C{clear}, the
        last worker to leave an empty queue deletes the keys (the seen set too).

        @return: a Deferred firing with C{(released, cleared)}.
        """
        d = self.client.eval(_RELEASE, [self.queue, self.workers, self.processing,
                                        self.alive, self.seen],
                             [self.worker, 1 if clear else 0])
        d.addCallback(_ints)
        return d

    def disconnect(self):
        """Close the connection. @return: a Deferred firing once it is closed."""
        return self.client.disconnect()


def _pairs(flat):
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


def _ints(values):
    return tuple(int(value) for value in values)

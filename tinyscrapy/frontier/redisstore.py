"""
L{RedisStore}: the keys of a shared crawl in one Redis database, moved as bytes.

Every key starts with the crawl's prefix (C{tinyscrapy:SPIDER:} by default, or what the
spider's C{frontier_key()} returns; C{SCHEDULER_REDIS_KEY} overrides both):

    - C{seen}: a SET of request fingerprints (decimal). C{SADD} answers 1 to one process
      only, so two processes never both queue a page;
    - C{queue}: a ZSET of encoded requests, scored by C{-priority} (lowest score first);
      a member starts with a microsecond timestamp, so equal priorities come out roughly
      first in, first out;
    - C{workers}: a SET of the worker ids that joined;
    - C{processing:WORKER}: a HASH of the requests WORKER took and has not acknowledged
      (member -> score);
    - C{alive:WORKER}: a key that expires C{worker timeout} seconds after WORKER's last
      heartbeat;
    - C{epoch}: a random token written by the first worker to join a crawl; a worker that
      finds it gone knows Redis lost the crawl's state (a restart without its data).
      C{over:TOKEN} tells idle workers still registered that the crawl finished and the
      keys were deleted (it expires).

Each step that must not be torn is one Lua script, so it is atomic in Redis: a push (dedup
then queue, then the acknowledgements of the requests that yielded them), a pop (out of
the queue into C{processing}), a status (requeue the entries of dead workers, then count),
a release (this worker's entries back to the queue, leave, maybe clear). They are in
L{tinyscrapy.frontier.redisscripts}. The status and
release scripts name keys that are not in C{KEYS} (one per worker): fine on one Redis,
not on Redis Cluster.

Connecting is L{tinyscrapy.frontier.redisconnect}.
"""

from twisted.internet.defer import succeed

from tinyscrapy.frontier.redisconnect import connect, parse_redis_url, redact  # noqa: F401
from tinyscrapy.frontier.redisscripts import _BEAT, _JOIN, _POP, _PUSH, _RELEASE, _STATUS


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
        self.epoch_key = prefix + "epoch"
        self.epoch = None  # the token of the crawl this worker joined

    def connected(self):
        """@return: whether txredisapi holds a live connection now (it parks commands
        sent while it has none, until it reconnects)."""
        factory = getattr(self.client, "_factory", None)
        return factory is None or factory.size > 0

    def join(self, token):
        """
        Join the crawl with a heartbeat; start a new epoch (C{token}) unless one is on.

        @return: a Deferred firing with how many fingerprints C{seen} holds.
        """
        d = self.client.eval(_JOIN, [self.alive, self.workers, self.epoch_key, self.seen],
                             [self.worker_timeout_ms, self.worker, token])
        d.addCallback(self._cb_joined)
        return d

    def _cb_joined(self, result):
        epoch, seen = result
        self.epoch = epoch.decode() if isinstance(epoch, bytes) else str(epoch)
        return int(seen)

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
        Requeue the entries of dead workers, then count (unless the epoch changed).

        @return: a Deferred firing with C{(queued, processing, requeued, state)}: requests
            in the queue, entries held by live workers (this one included), entries
            requeued now, and the state: 0 the crawl goes on, 1 another worker finished
            it and deleted the keys, 2 the epoch is gone (Redis lost the crawl's state).
        """
        d = self.client.eval(_STATUS, [self.queue, self.workers, self.epoch_key],
                             [self.prefix, self.worker, self.epoch or ""])
        d.addCallback(_ints)
        return d

    def release(self, clear):
        """
        This worker's C{processing} back to the queue; leave the crawl. With C{clear},
        the keys (the seen set too) are deleted if the queue is empty and no other worker
        holds an entry: workers whose heartbeat expired are requeued first, and live ones
        with an empty C{processing} hash (idle, or killed moments ago) hold nothing.

        @return: a Deferred firing with C{(released, cleared, held, queued)}: entries of
            ours put back, whether the keys went, entries other live workers hold, and
            requests left in the queue.
        """
        d = self.client.eval(_RELEASE, [self.queue, self.workers, self.processing,
                                        self.alive, self.seen, self.epoch_key],
                             [self.worker, 1 if clear else 0, self.prefix,
                              self.epoch or "", self.worker_timeout_ms])
        d.addCallback(_ints)
        return d

    def disconnect(self):
        """Close the connection. @return: a Deferred firing once it is closed."""
        return self.client.disconnect()


def _pairs(flat):
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


def _ints(values):
    return tuple(int(value) for value in values)

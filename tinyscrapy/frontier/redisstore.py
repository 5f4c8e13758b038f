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
    - C{dead}: a LIST of the queue members no worker could read (too short for their
      header, a name length that lies, a request that does not decode), the last
      C{redisscripts.DEAD_MAX}; kept when the crawl ends, for a person to look at;
    - C{alive:WORKER}: a key that expires C{worker timeout} seconds after WORKER's last
      heartbeat;
    - C{epoch}: a random token written by the first worker to join a crawl; a worker that
      finds it gone knows Redis lost the crawl's state (a restart without its data).
      When the crawl ends it becomes the end marker C{over:TOKEN}, which expires after
      C{SCHEDULER_REDIS_END_MARKER_TTL} seconds: workers of the crawl that ask meanwhile
      learn that it ended; a new worker started meanwhile exits at once. Every script
      that writes checks it first (L{tinyscrapy.frontier.redisscripts}).

Each step that must not be torn is one Lua script, so it is atomic in Redis: a push (dedup
then queue, then the acknowledgements of the requests that yielded them), a pop (out of
the queue into C{processing}), a status (requeue the entries of dead workers, count, and
end the crawl when nothing is queued or held), a release (this worker's entries back to
the queue, leave). They are in
L{tinyscrapy.frontier.redisscripts}. The status and
release scripts name keys that are not in C{KEYS} (one per worker): fine on one Redis,
not on Redis Cluster.

Connecting is L{tinyscrapy.frontier.redisconnect}.
"""

from twisted.internet.defer import succeed

from tinyscrapy.frontier import redisscripts
from tinyscrapy.frontier.redisconnect import connect, parse_redis_url, redact  # noqa: F401

OK, OVER, LOST = 0, 1, 2  # the epoch states every script answers first


class RedisStore:
    """
    One worker's view of the shared keys. Each method sends one command or script and
    returns its Deferred, which errbacks with txredisapi's C{ConnectionError} (or
    C{TimeoutError}) when the connection is lost before the answer came, or with
    L{CancelledError} when Redis did not answer within C{timeout} seconds (a command
    parked while txredisapi has no connection included).

    @ivar prefix: the keys' prefix (C{str}).
    @ivar worker: this worker's id (C{str}).
    @ivar epoch: the token of the crawl this worker joined.
    @ivar reconnects: how many times the connection was rebuilt (L{reopen}).
    """

    def __init__(self, client, prefix, worker, worker_timeout, clock, timeout, remake):
        self.client = client
        self.remake = remake  # builds a new client (see redisconnect.make_client)
        self.prefix = prefix
        self.worker = worker
        self.clock = clock
        self.timeout = timeout
        self.worker_timeout_ms = max(1, int(worker_timeout * 1000))
        self.seen, self.queue, self.workers = (prefix + "seen", prefix + "queue",
                                               prefix + "workers")
        self.processing = f"{prefix}processing:{worker}"
        self.alive = f"{prefix}alive:{worker}"
        self.epoch_key = prefix + "epoch"
        self.epoch = None
        self.reconnects = 0
        self._waiting = set()  # the Deferreds of commands not answered yet

    def connected(self):
        """@return: whether txredisapi holds a live connection now (it parks commands
        sent while it has none, until it reconnects)."""
        factory = getattr(self.client, "_factory", None)
        return factory is None or factory.size > 0

    def gave_up(self):
        """@return: whether txredisapi stopped reconnecting by itself (a C{SELECT} or
        C{AUTH} that timed out on a reconnection makes it call C{stopTrying()})."""
        factory = getattr(self.client, "_factory", None)
        return factory is not None and factory.size == 0 and factory.stopped \
            and not factory.disconnectCalled

    def reopen(self):
        """Replace a client that gave up by a new one (the old one is closed)."""
        old, self.client = self.client, self.remake()
        self.reconnects += 1
        d = old.disconnect()
        d.addErrback(_ignore)

    def _eval(self, script, keys, args):
        return self._timed(self.client.eval(script, keys, args))

    def _timed(self, d):
        """C{d} errbacks with L{CancelledError} after C{timeout} seconds without an
        answer (and is cancelled at L{disconnect})."""
        d.addTimeout(self.timeout, self.clock)
        self._waiting.add(d)
        d.addBoth(self._cb_answered, d)
        return d

    def _cb_answered(self, result, d):
        self._waiting.discard(d)
        return result

    def join(self, token):
        """
        Join the crawl with a heartbeat; start a new epoch (C{token}) unless one is on.

        @return: a Deferred firing with C{(how, seen, queued, marker_ttl)}: how is
            C{"join"}, C{"new"} or C{"over"} (the crawl's end marker is there, expiring in
            C{marker_ttl} seconds; nothing was written).
        """
        d = self._eval(redisscripts.JOIN,
                       [self.epoch_key, self.alive, self.workers, self.seen, self.queue],
                       [token, self.worker_timeout_ms, self.worker])
        d.addCallback(self._cb_joined)
        return d

    def _cb_joined(self, result):
        how, epoch, seen, queued, ttl = result
        how = how.decode() if isinstance(how, bytes) else str(how)
        if how != "over":
            self.epoch = epoch.decode() if isinstance(epoch, bytes) else str(epoch)
        return how, int(seen), int(queued), max(0, int(ttl)) / 1000

    def run_id(self):
        """@return: a Deferred firing with the Redis server's run id (it changes when
        Redis restarts), or None if it could not be read."""
        d = self._timed(self.client.execute_command("INFO", "server"))
        d.addCallbacks(_run_id, _ignore)
        return d

    def beat(self):
        """Renew this worker's heartbeat (join again if it was removed as dead).
        @return: a Deferred firing with C{(state, evicted)}."""
        d = self._eval(redisscripts.BEAT, [self.epoch_key, self.alive, self.workers],
                       [self.epoch or "", self.worker_timeout_ms, self.worker])
        d.addCallback(_ints)
        return d

    def push(self, entries, acks=(), reports=(), dead=()):
        """
        Queue the new ones of C{entries}, then report the sends of C{reports}, then move
        C{dead} to the dead-letter list, then acknowledge C{acks} (their leases end), in
        one script.

        @param entries: C{(fingerprint, score, member, dont_filter)} tuples.
        @param acks: members of this worker's C{processing} hash to forget.
        @param reports: C{(slot, delay ms, keep)} of the requests sent since the last push,
            on slots with a delay; keep: another request of the slot is still on its way
            to the wire here (the one sent was not the lease's: a robots.txt, say).
        @param dead: members of this worker's C{processing} hash it could not read: they
            go to the C{dead} list, for a person to look at.
        @return: a Deferred firing with C{(state, flags)}: one flag per entry, 1 queued,
            0 a duplicate (no flags unless the state is L{OK}: nothing was written).
        """
        if not entries and not acks and not reports and not dead:
            return succeed((OK, []))
        args = [self.epoch or "", len(entries), self.prefix, self.worker, len(reports),
                len(dead)]
        for fingerprint, score, member, dont_filter in entries:
            args += [fingerprint, score, member, 1 if dont_filter else 0]
        for slot, delay_ms, keep in reports:
            args += [slot, delay_ms, 1 if keep else 0]
        args += list(dead)
        args += list(acks)
        d = self._eval(redisscripts.PUSH,
                       [self.epoch_key, self.seen, self.queue, self.processing], args)
        d.addCallback(_state_and_rest)
        return d

    def pop(self, count, scan, hold):
        """
        Move up to C{count} requests, best first among the C{scan} best queued, whose
        slot grants a lease, from the queue into C{processing}.

        @param hold: seconds a slot with a delay stays held for a lease whose send was
            not reported (a worker that died, or went silent).
        @return: a Deferred firing with C{(state, evicted, wait, dead, [(member, score),
            ...])}: wait is the seconds until a slot's delay ends, when one held requests
            back (else None); dead, how many unreadable members went to the C{dead} list.
        """
        d = self._eval(redisscripts.POP, [self.epoch_key, self.queue, self.processing,
                                          self.workers, self.alive],
                       [self.epoch or "", count, self.worker, self.worker_timeout_ms,
                        self.prefix, max(count, scan), max(1, int(hold * 1000))])
        d.addCallback(_popped)
        return d

    def taken(self):
        """@return: a Deferred firing with this worker's C{processing} as C{(member, score)}
        pairs (after a pop whose answer was lost)."""
        d = self._timed(self.client.hgetall(self.processing))
        d.addCallback(dict.items)
        d.addCallback(list)
        return d

    def status(self, may_end=False, end_ttl=60.0, persist=False):
        """
        Requeue the entries of dead workers, then count; with C{may_end} (this worker is
        idle), end the crawl if nothing is queued and no live worker holds anything.

        @return: a Deferred firing with C{(state, queued, processing, requeued, dead)}:
            the state L{OVER} when the crawl ended (now or earlier), L{LOST} when the epoch
            is gone (Redis lost the crawl's state, or the end marker expired); dead, how
            many unreadable entries of dead workers went to the C{dead} list.
        """
        d = self._eval(redisscripts.STATUS,
                       [self.epoch_key, self.queue, self.workers, self.seen],
                       [self.epoch or "", self.prefix, self.worker, 1 if may_end else 0,
                        max(1, int(end_ttl * 1000)), 1 if persist else 0])
        d.addCallback(_ints)
        return d

    def release(self):
        """
        This worker's C{processing} back to the queue; leave the crawl.

        @return: a Deferred firing with C{(state, released)}.
        """
        d = self._eval(redisscripts.RELEASE, [self.epoch_key, self.queue, self.workers,
                                              self.processing, self.alive],
                       [self.epoch or "", self.worker, self.prefix])
        d.addCallback(_ints)
        return d

    def disconnect(self):
        """Cancel the commands not answered yet and close the connection.
        @return: a Deferred firing once it is closed."""
        for d in list(self._waiting):
            d.cancel()
        return self.client.disconnect()


def _popped(flat):
    state, evicted, wait, dead = (int(value) for value in flat[:4])
    rest = flat[4:]
    return (state, evicted, wait / 1000 if wait >= 0 else None, dead,
            [(rest[i], rest[i + 1]) for i in range(0, len(rest), 2)])


def _state_and_rest(flat):
    return int(flat[0]), [int(flag) for flag in flat[1:]]


def _ints(values):
    return tuple(int(value) for value in values)


def _run_id(info):
    text = info.decode("latin-1") if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith("run_id:"):
            return line[len("run_id:"):].strip()
    return None


def _ignore(_failure):
    return None

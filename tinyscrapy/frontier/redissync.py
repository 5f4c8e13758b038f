"""
The background half of L{tinyscrapy.frontier.redis.RedisScheduler}, which inherits it:
what runs between the engine's synchronous calls.

    - writing: the outbox (requests enqueued here) and the acknowledgements go to Redis in
      one script per batch, on C{reactor.callLater(0, ...)}; an acknowledgement is written
      only once everything before it is, so a request is forgotten after what it yielded
      is queued;
    - reading: when the local buffer runs low, a pop moves a batch from the shared queue
      into this worker's C{processing} hash, and the engine is woken when it lands;
    - the tick (a C{LoopingCall}): notices a lost connection (txredisapi parks the
      commands sent meanwhile: their Deferreds fire only after it reconnects), retries
      what failed, refills, checks the crawl's status when idle, and renews this worker's
      heartbeat. A status check that finds the crawl's epoch key gone (Redis restarted
      without its data) stops the crawl with the finish reason C{redis_state_error}.

Each method's Deferred is the store's (L{tinyscrapy.frontier.redisstore.RedisStore}): it
fires when Redis answers, or errbacks when the connection is lost (then the tick retries).
"""

import logging

from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import deferLater

from tinyscrapy.frontier import codec
from tinyscrapy.frontier.redisstore import OK, OVER

logger = logging.getLogger("tinyscrapy.frontier.redis")

_MAX_PUSH = 1000  # requests a push script writes at most
_PREFETCH_CAP = 4  # times CONCURRENT_REQUESTS: the most a worker buffers when slots wait


class SharedQueueSync:
    """The writing, reading and ticking of L{tinyscrapy.frontier.redis.RedisScheduler}."""

    # writing

    def _flush_soon(self):
        """Flush on the next reactor turn, unless one is on its way or scheduled (the
        end of a flush schedules the next)."""
        if self._flush_call is None and self._flushing is None and self.store is not None:
            self._flush_call = self.clock.callLater(0, self._flush)

    def _flush(self):
        """
        Write a batch of the outbox, then the acknowledgements (those only once the whole
        outbox fits: a request is forgotten after what it yielded is queued).

        @return: a Deferred firing with True when written, False when it failed (the
            batch is back in the outbox; the tick retries).
        """
        self._flush_call = None
        if self._flushing is not None:
            return self._wait_flush()
        if not (self._outbox or self._acks):
            return succeed(True)
        entries, self._outbox = self._outbox[:_MAX_PUSH], self._outbox[_MAX_PUSH:]
        acks = []
        if not self._outbox:
            acks, self._acks = self._acks, []
        self._acking, self._pushing = acks, entries
        waiter = self._wait_flush()  # before the push: it may fail at once
        d = self._flushing = self.store.push(entries, acks)
        d.addCallbacks(self._cb_pushed, self._eb_push_failed,
                       callbackArgs=(entries,), errbackArgs=(entries, acks))
        d.addBoth(self._cb_flushed)
        return waiter

    def _wait_flush(self):
        waiter = Deferred()
        self._flush_waiters.append(waiter)
        return waiter

    def _cb_pushed(self, answer, entries):
        state, flags = answer
        self._reachable()
        if not self._epoch_ok(state, len(entries) + len(self._acking)):
            return True  # refused: nothing of it can be written any more
        pushed = sum(flags)
        self.stats.inc_value("scheduler/redis/pushed", pushed)
        if len(entries) > pushed:
            self.stats.inc_value("scheduler/redis/duplicates", len(entries) - pushed)
        if pushed:  # there is something to take now, ours or not
            self._empty_pop_at = float("-inf")
            self._refill()
        return True

    def _eb_push_failed(self, failure, entries, acks):
        self._outbox[:0] = entries
        self._acks[:0] = acks
        self._trouble(failure, "writing")
        return False

    def _cb_flushed(self, written):
        self._flushing = None
        self._acking = self._pushing = ()
        waiters, self._flush_waiters = self._flush_waiters, []
        for waiter in waiters:
            waiter.callback(written)
        if written and (self._outbox or self._acks):
            self._flush_soon()

    def _write_all(self, written=True):
        """
        Flush until the outbox and the acknowledgements are written, retrying a failed
        flush every poll interval (txredisapi reconnects meanwhile).

        @return: a Deferred firing once all is written; it never fires while Redis does
            not answer: the caller cancels it at its deadline.
        """
        if self._flushing is None and not (self._outbox or self._acks) \
                or self._over or self._lost:
            return succeed(None)
        if not written:
            d = deferLater(self.clock, self.poll, self._flush)
        else:
            d = self._flush()
        d.addCallback(self._write_all)
        return d

    # reading

    def _refill(self, from_tick=False, starved=False):
        """Take a batch from the shared queue, unless one is on its way, the crawl looks
        over, or the last one came back empty less than a poll interval ago. The buffer
        holds C{CONCURRENT_REQUESTS}, or (C{starved}: all of them wait on slot delays)
        up to C{_PREFETCH_CAP} times that."""
        if self._popping is not None or self.store is None or not self._tick.running \
                or self._over or self._lost:
            return
        if not from_tick and self.clock.seconds() < self._empty_pop_at + self.poll:
            return
        cap = self.batch * (_PREFETCH_CAP if starved else 1)
        count = min(self.batch, cap - self.local.size())
        if count <= 0:
            return
        d = self._popping = self.store.taken() if self._reclaim else self.store.pop(count)
        d.addCallbacks(self._cb_popped, self._eb_pop_failed)

    def _cb_popped(self, answer):
        self._popping = None
        self._reachable()
        if self._reclaim:  # after a lost answer: what our processing hash really holds
            self._reclaim = False
            known = {*self._taken.values(), *self._acks, *self._acking}
            entries = [(member, score) for member, score in answer if member not in known]
        else:
            state, evicted, entries = answer
            if not self._epoch_ok(state, 0):
                return
            if evicted:
                self._evicted()
        if not entries:
            self._empty_pop_at = self.clock.seconds()
            return
        for member, _score in entries:
            self._take(member)
        self.stats.inc_value("scheduler/redis/popped", len(entries))
        self._changed()
        self._wake_engine()

    def _take(self, member):
        """One request out of the shared queue: opened in the ledger, buffered here."""
        try:
            request = codec.request_from_bytes(member[16:], self.spider)
        except Exception as e:
            logger.error("shared frontier %s: dropping an entry that does not decode "
                         "(%s: %s)", self.shown, type(e).__name__, e)
            self.stats.inc_value("scheduler/redis/undecodable")
            self._acks.append(member)
            self._flush_soon()
            return
        self.ledger.open(request)
        self.seen.add(request.fingerprint)
        self._taken[request] = member
        self.local.enqueue_request(request)

    def _eb_pop_failed(self, failure):
        self._popping = None
        self._reclaim = True  # the pop may have run: look at our processing hash
        self._trouble(failure, "taking requests")

    # the tick: status, heartbeat, retries, the watchdog

    def _on_tick(self):
        now = self.clock.seconds()
        if self._over or self._lost:
            return
        if self._outage_since is not None and \
                now - self._outage_since > self.timeout * (1 + self.retries):
            self._unreachable(now - self._outage_since)
            return
        if self.store.gave_up():  # txredisapi stopped reconnecting: a new client
            logger.warning("shared frontier %s: the Redis client stopped reconnecting "
                           "(a reply timed out while it reconnected); opening a new "
                           "connection", self.shown)
            self.stats.inc_value("scheduler/redis/reconnects")
            self.store.reopen()
        if not self.store.connected():
            self._trouble(None, "")  # commands wait for the reconnection (timed)
            return
        if now >= self._next_beat:
            self._next_beat = now + self.worker_timeout / 3
            self.store.beat().addCallbacks(self._cb_beat, self._trouble,
                                           errbackArgs=("renewing the heartbeat",))
        if self._outbox or self._acks:
            self._flush_soon()
        idle = not self.local.has_pending_requests() and not self._busy()
        if idle or now >= self._next_status:
            self._status()  # it refills when something is queued
        elif self.local.size() < self.batch:
            self._refill(from_tick=True)

    def _cb_beat(self, answer):
        state, evicted = answer
        self._reachable()
        if self._epoch_ok(state, 0) and evicted:
            self._evicted()

    def _busy(self):
        """Something of ours is not yet in Redis, or on its way from it."""
        return bool(self._taken or self._outbox or self._acks or self._flushing
                    or self._popping or self._reclaim)

    def _status(self):
        """Requeue dead workers' entries and count. Sent while the engine found nothing
        to do and nothing changed here since, it may end the crawl (in Redis, for every
        worker) when nothing is queued or held anywhere."""
        if self._checking is not None or self.store is None or not self._tick.running \
                or self._over or self._lost:
            return
        self._next_status = self.clock.seconds() + self.worker_timeout / 3
        may_end = self._idle_at == self._changes and not self._busy() \
            and not self.local.has_pending_requests()
        d = self._checking = self.store.status(may_end, self.end_ttl, self.persist)
        d.addCallbacks(self._cb_status, self._eb_status_failed)

    def _cb_status(self, status):
        self._checking = None
        self._reachable()
        state, queued, _processing, requeued = status
        self._count_requeued(requeued)
        if not self._epoch_ok(state, 0):
            return
        if queued:
            self._empty_pop_at = float("-inf")
            self._refill()

    def _epoch_ok(self, state, refused):
        """Act on the epoch state a script answered: L{OVER} finishes this worker,
        L{LOST} stops it. C{refused}: the writes the script refused (counted).
        @return: whether the state is L{OK}."""
        if state == OK:
            return True
        if refused:
            self.stats.inc_value("scheduler/redis/refused_writes", refused)
        if state == OVER:
            self._crawl_over()
        else:
            self._state_lost()
        return False

    def _crawl_over(self):
        """The crawl ended (this worker's status ended it, or another's): nothing is
        queued or held anywhere. What is buffered here was requeued from a heartbeat
        that expired and fetched by others: it ends here as C{shared}."""
        if self._over:
            return
        self._over = True
        self._drop_buffer()
        self._refuse_outbox()
        logger.info("shared frontier %s: the crawl is over (nothing queued, nothing held "
                    "by any worker); keys %s* deleted%s, the end marker kept for %g s",
                    self.shown, self.store.prefix,
                    " but the seen set (SCHEDULER_PERSIST)" if self.persist else "",
                    self.end_ttl)
        self._wake_engine()

    def _refuse_outbox(self):
        """Forget what can no longer be written (the epoch is over or lost)."""
        refused = len(self._outbox) + len(self._acks)
        if refused:
            self.stats.inc_value("scheduler/redis/refused_writes", refused)
        self._outbox, self._acks = [], []

    def _evicted(self):
        """Another worker found this one's heartbeat expired (a pause, a stall) and put
        its entries back in the queue: the requests buffered here are someone else's
        now. Those handed to the engine run on (fetched twice at worst)."""
        dropped = self._drop_buffer()
        self.stats.inc_value("scheduler/redis/evicted")
        logger.warning("shared frontier %s: this worker's heartbeat had expired and its "
                       "requests were put back in the queue; %d buffered request(s) "
                       "dropped here, joined again", self.shown, dropped)

    def _drop_buffer(self):
        """End the buffered requests (taken, not handed out) as C{shared}.
        @return: how many."""
        buffered = [request for request in self._taken if request not in self._handed]
        for request in buffered:
            del self._taken[request]
            self.ledger.close(request, "shared")
        self.local.close("dropped")
        self.local = self._new_buffer()
        self._changed()
        return len(buffered)

    def _wake_engine(self):
        engine = self.crawler.engine
        if engine is not None:
            engine._wake()

    def _state_lost(self):
        """The epoch key is gone: Redis lost the crawl (restarted without its data, or
        the keys were deleted, or its end marker expired while this worker was away).
        Going on would fetch nothing or everything again: stop, and say which."""
        if self._lost:
            return
        self._lost = True
        self._refuse_outbox()
        d = self.store.run_id()
        d.addCallback(self._cb_lost_run_id)

    def _cb_lost_run_id(self, run_id):
        if run_id is not None and run_id != self.run_id:
            why = "Redis restarted without its data (its run id changed)"
        else:
            why = ("Redis did not restart: the keys were deleted, or the crawl ended more "
                   f"than SCHEDULER_REDIS_END_MARKER_TTL ({self.end_ttl:g} s) ago while "
                   "this worker was away")
        logger.error("shared frontier %s: the crawl's keys %s* are gone: %s; this "
                     "worker's writes are refused and the crawl stops (finish reason "
                     "redis_state_error). Start the workers again: they start a new "
                     "crawl on the empty keys", self.shown, self.store.prefix, why)
        self.stats.inc_value("scheduler/redis/state_lost")
        self.crawler.stop("redis_state_error")

    def _unreachable(self, seconds):
        """Redis has not answered for longer than the bound: stop (exit status 1)."""
        self._lost = True
        logger.error("shared frontier %s: Redis has not answered for %.0f s "
                     "(SCHEDULER_REDIS_TIMEOUT %g s x (1 + SCHEDULER_REDIS_RETRIES %d)); "
                     "the crawl stops (finish reason redis_unreachable_error); the "
                     "requests this worker took go back to the queue when its heartbeat "
                     "expires", self.shown, seconds, self.timeout, self.retries)
        self.stats.inc_value("scheduler/redis/unreachable")
        self.crawler.stop("redis_unreachable_error")

    def _eb_status_failed(self, failure):
        self._checking = None
        self._trouble(failure, "checking the status")

    def _count_requeued(self, count):
        if count:
            self.stats.inc_value("scheduler/redis/requeued", count)
            logger.info("shared frontier %s: %d request(s) put back in the queue",
                        self.shown, count)

    def _changed(self):
        self._changes += 1

    def _trouble(self, failure, doing):
        """Log a lost connection once per outage; txredisapi reconnects by itself (the
        tick watches that it does). C{failure} is None when the tick found the
        connection down."""
        if self._outage_since is None and not self._closing:
            self._outage_since = self.clock.seconds()
            what = "lost the connection to Redis" if failure is None else \
                f"lost the connection to Redis ({doing} failed: {_reason(failure)})"
            logger.warning("shared frontier %s: %s; waiting while txredisapi reconnects "
                           "(at most %g s)", self.shown, what,
                           self.timeout * (1 + self.retries))

    def _reachable(self):
        if self._outage_since is not None:
            self._outage_since = None
            logger.info("shared frontier %s: reachable again", self.shown)
            self._next_status = float("-inf")  # check at once that Redis kept the crawl


def _reason(failure):
    from twisted.internet.defer import CancelledError
    if failure.check(CancelledError):
        return "no answer in SCHEDULER_REDIS_TIMEOUT"
    return failure.getErrorMessage() or failure.type.__name__

"""
The states of a shared crawl as one worker of L{tinyscrapy.frontier.redis.RedisScheduler}
sees them, and what each does (a mixin of it, through
L{tinyscrapy.frontier.redissync.SharedQueueSync}):

    - every script answers the crawl's epoch state first (L{OK}, L{OVER}, L{LOST}); a
      write it refused is counted (C{scheduler/redis/refused_writes});
    - over: the crawl ended (this worker's status ended it, or another's): the worker
      finishes, exit status 0;
    - lost: the epoch is gone (Redis restarted without its data: its run id changed; or
      the keys were deleted, or the end marker expired while this worker was away): the
      crawl stops with C{redis_state_error}, exit status 1;
    - evicted: another worker found this one's heartbeat expired and requeued what it
      held: the requests buffered here are dropped (the others fetch them);
    - an outage: logged once; txredisapi reconnects (the tick replaces a client that gave
      up); longer than C{SCHEDULER_REDIS_TIMEOUT x (1 + SCHEDULER_REDIS_RETRIES)}, the
      crawl stops with C{redis_unreachable_error}, exit status 1;
    - a refusal: Redis answered a script with an error (the keys hold what no worker
      wrote, a Redis without scripting): not an outage, since it answers the same way
      every time, so the crawl stops at once with C{redis_script_error}, exit status 1
      (the answers of a Redis loading its data or busy with a script are an outage).
"""

import logging

from tinyscrapy.frontier.redisstore import OK, OVER

logger = logging.getLogger("tinyscrapy.frontier.redis")


class CrawlStates:
    """What a worker does on each state of the crawl (see the module docstring)."""

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
        self._outbox, self._acks, self._reports, self._dead = [], [], [], []

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
            engine.wake()

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
        unwritten = len(self._outbox) + len(self._acks)
        logger.error("shared frontier %s: Redis has not answered for %.0f s "
                     "(SCHEDULER_REDIS_TIMEOUT %g s x (1 + SCHEDULER_REDIS_RETRIES %d); "
                     "last: %s); the crawl stops (finish reason redis_unreachable_error); "
                     "%d write(s) not done; the requests this worker took go back to the "
                     "queue when its heartbeat expires", self.shown, seconds, self.timeout,
                     self.retries, self._last_trouble, unwritten)
        self.stats.inc_value("scheduler/redis/unreachable")
        self.crawler.stop("redis_unreachable_error")

    def _trouble(self, failure, doing):
        """Log a lost connection once per outage; txredisapi reconnects by itself (the
        tick watches that it does). C{failure} is None when the tick found the
        connection down. A refusal by Redis (L{is_refusal}) stops the crawl instead."""
        if failure is not None and is_refusal(failure):
            self._refused(failure, doing)
            return
        if failure is not None:
            self._last_trouble = f"{doing} failed: {reason_of(failure)}"
        if self._outage_since is None and not self._closing:
            self._outage_since = self.clock.seconds()
            what = "lost the connection to Redis" if failure is None else \
                f"lost the connection to Redis ({doing} failed: {reason_of(failure)})"
            logger.warning("shared frontier %s: %s; waiting while txredisapi reconnects "
                           "(at most %g s)", self.shown, what,
                           self.timeout * (1 + self.retries))

    def _refused(self, failure, doing):
        """Redis answered with an error: say which, once, and stop (exit status 1)."""
        if self._lost:
            return
        self._lost = True
        self._refuse_outbox()
        message = failure.getErrorMessage()
        logger.error("shared frontier %s: Redis refused a script (%s): %s. This is not a "
                     "lost connection: %s; the crawl stops (finish reason "
                     "redis_script_error)", self.shown, doing, message,
                     _refusal_cause(message, self.store.prefix))
        self.stats.inc_value("scheduler/redis/script_error")
        self.crawler.stop("redis_script_error")

    def _reachable(self):
        if self._outage_since is not None:
            self._outage_since = None
            logger.info("shared frontier %s: reachable again", self.shown)
            self._next_status = float("-inf")  # check at once that Redis kept the crawl


def _refusal_cause(message, prefix):
    """What a Redis error answer to a script means for the crawl, in a few words."""
    if message.startswith("OOM"):
        return "Redis is out of the memory its maxmemory setting allows"
    if message.startswith(("READONLY", "MASTERDOWN")):
        return "this Redis is a replica, or its primary is down, and takes no writes"
    if message.startswith(("NOSCRIPT", "ERR unknown command", "NOPERM", "NOAUTH")):
        return "this Redis, or this user of it, cannot run the crawl's Lua scripts"
    return f"the crawl's keys {prefix}* hold something no worker wrote"


def reason_of(failure):
    """What went wrong, in a few words, for a log line."""
    from twisted.internet.defer import CancelledError
    if failure.check(CancelledError):
        return "no answer in SCHEDULER_REDIS_TIMEOUT"
    return failure.getErrorMessage() or failure.type.__name__


# a Redis that answers these errors is away for a while, not refusing: an outage
_TRANSIENT = ("LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "READONLY",
              "NOREPLICAS")


def is_refusal(failure):
    """Whether C{failure} is Redis answering with an error (txredisapi's C{ResponseError},
    or an answer that is not Redis's protocol), not a lost connection or a timeout."""
    import txredisapi
    if failure.check(txredisapi.InvalidResponse):
        return True
    if not failure.check(txredisapi.ResponseError):
        return False
    message = failure.getErrorMessage().removeprefix("Redis error: ").lstrip("-")
    return not message.startswith(_TRANSIENT)

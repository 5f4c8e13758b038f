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
import struct

from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import deferLater

from tinyscrapy.frontier import codec, redisscripts
from tinyscrapy.frontier.redisstates import CrawlStates

logger = logging.getLogger("tinyscrapy.frontier.redis")

_MAX_PUSH = 1000  # requests a push script writes at most
_PREFETCH_CAP = 4  # times CONCURRENT_REQUESTS: the most a worker buffers when slots wait
_SCAN = 8  # times CONCURRENT_REQUESTS: the best queued requests a pop looks at


def _member_header(member):
    """
    The lease header of a queue member, checked: C{(slot name, delay ms, where its request
    starts)}, the delay bounded as the scripts bound it; None when the member is too short
    for its header or its name's length runs past its end.
    """
    if not isinstance(member, bytes) or len(member) < _HEADER:
        return None
    (length,) = struct.unpack_from(">H", member, 16)
    end = _HEADER + length
    if len(member) < end:
        return None
    (delay_ms,) = struct.unpack_from(">L", member, 18 + length + 4)
    return (member[18:18 + length].decode("utf-8", "replace"),
            min(delay_ms, redisscripts.MAX_DELAY_MS), end)


_HEADER = 16 + 2 + 8  # id, the name's length, parallelism and delay: a member's least
_LOGGED_DEAD = 10  # dead-lettered entries logged one by one; the rest only counted


class SharedQueueSync(CrawlStates):
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
        if not (self._outbox or self._acks or self._reports or self._dead):
            return succeed(True)
        entries, self._outbox = self._outbox[:_MAX_PUSH], self._outbox[_MAX_PUSH:]
        acks = []
        reports, self._reports = self._reports, []
        dead, self._dead = self._dead, []
        if not self._outbox:
            acks, self._acks = self._acks, []
        self._acking, self._pushing, self._reporting = acks, entries, reports
        waiter = self._wait_flush()  # before the push: it may fail at once
        d = self._flushing = self.store.push(entries, acks, reports, dead)
        d.addCallbacks(self._cb_pushed, self._eb_push_failed,
                       callbackArgs=(entries,), errbackArgs=(entries, acks, reports, dead))
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

    def _eb_push_failed(self, failure, entries, acks, reports, dead):
        self._outbox[:0] = entries
        self._acks[:0] = acks
        self._reports[:0] = reports
        self._dead[:0] = dead
        self._trouble(failure, "writing")
        return False

    def _cb_flushed(self, written):
        self._flushing = None
        self._acking = self._pushing = self._reporting = ()
        waiters, self._flush_waiters = self._flush_waiters, []
        for waiter in waiters:
            waiter.callback(written)
        if written and (self._outbox or self._acks or self._reports or self._dead):
            self._flush_soon()

    def _write_all(self, written=True):
        """
        Flush until the outbox and the acknowledgements are written, retrying a failed
        flush every poll interval (txredisapi reconnects meanwhile).

        @return: a Deferred firing once all is written; it never fires while Redis does
            not answer: the caller cancels it at its deadline.
        """
        if self._flushing is None and \
                not (self._outbox or self._acks or self._reports or self._dead) \
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
        if self._reclaim:
            d = self._popping = self.store.taken()
        else:
            d = self._popping = self.store.pop(count, _SCAN * self.batch,
                                               self.timeout + self.worker_timeout)
        d.addCallbacks(self._cb_popped, self._eb_pop_failed)

    def _cb_popped(self, answer):
        self._popping = None
        self._reachable()
        if self._reclaim:  # after a lost answer: what our processing hash really holds
            self._reclaim = False
            known = {*self._taken.values(), *self._acks, *self._acking}
            entries = [(member, score) for member, score in answer if member not in known]
        else:
            state, evicted, wait, dead, entries = answer
            if not self._epoch_ok(state, 0):
                return
            self._count_dead(dead, "queue")
            if evicted:
                self._evicted()
            if wait is not None:  # a slot's delay held some back: try again as it ends
                self._pop_when(wait)
        if not entries:
            self._empty_pop_at = self.clock.seconds()
            return
        for member, _score in entries:
            self._take(member)
        self.stats.inc_value("scheduler/redis/popped", len(entries))
        self._changed()
        self._wake_engine()

    def _pop_when(self, wait):
        """A refill in C{wait} seconds (when a slot's delay in Redis ends)."""
        call = self._pop_call
        at = self.clock.seconds() + wait
        if call is not None and call.active():
            if call.getTime() <= at:
                return
            call.cancel()
        self._pop_call = self.clock.callLater(wait, self._on_delay_over)

    def _on_delay_over(self):
        self._pop_call = None
        self._empty_pop_at = float("-inf")
        self._refill(from_tick=True)

    def _slot_event(self, key):
        """The downloader's slots changed: after a send on a slot with a delay, report
        it (Redis times that slot's next send from it, for every worker). While another
        request of the slot is still on its way here (the send was its robots.txt),
        the slot stays held for it."""
        slot = self.slots.slot(key)
        delay_ms = max(int(slot.floor * 1000), self._lease_delays.get(key, 0))
        if delay_ms <= 0 or self._over or self._lost:
            return
        if slot.sent_count != self._sends.get(key, 0):
            self._sends[key] = slot.sent_count
            self._reports.append((key, delay_ms, slot.unsent > 0))
            self._flush_soon()

    def _take(self, member):
        """One request out of the shared queue: opened in the ledger, buffered here; a
        member that does not read (its header, or its request) goes to the dead-letter
        list instead."""
        header = _member_header(member)
        if header is None:
            self._dead_letter(member, "too short for its lease header, or its slot name's "
                                      "length runs past its end")
            return
        key, delay_ms, start = header
        try:
            request = codec.request_from_bytes(member[start:], self.spider)
        except Exception as e:
            self._dead_letter(member, f"its request does not decode ({type(e).__name__}: {e})")
            return
        if delay_ms > self._lease_delays.get(key, 0):  # as the pushing worker knew it
            self._lease_delays[key] = delay_ms
        self.ledger.open(request)
        self.seen.add(request.fingerprint)
        self._taken[request] = member
        self.local.enqueue_request(request)

    def _dead_letter(self, member, why):
        """An entry this worker took and cannot read: to the C{dead} list (with the next
        push), counted, logged (the first few one by one)."""
        self._dead.append(member)
        self._flush_soon()
        dead = self.stats.get_value("scheduler/redis/dead_letter", 0)
        self.stats.inc_value("scheduler/redis/dead_letter")
        if dead < _LOGGED_DEAD:
            logger.error("shared frontier %s: moved an entry it cannot read to %sdead "
                         "(%d bytes: %s); the crawl goes on%s", self.shown, self.store.prefix,
                         len(member), why, "" if dead + 1 < _LOGGED_DEAD else
                         " (further ones are only counted: scheduler/redis/dead_letter)")

    def _count_dead(self, count, where):
        """C{count} members a script moved to the dead-letter list from C{where}."""
        if count:
            self.stats.inc_value("scheduler/redis/dead_letter", count)
            logger.error("shared frontier %s: moved %d %s entr%s no worker can read (too "
                         "short for a lease header, or a bad score) to %sdead; the crawl "
                         "goes on", self.shown, count, where, "y" if count == 1 else "ies",
                         self.store.prefix)

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
        if self._outbox or self._acks or self._reports or self._dead:
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
        return bool(self._taken or self._outbox or self._acks or self._reports
                    or self._dead or self._flushing
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
        state, queued, _processing, requeued, dead = status
        self._count_requeued(requeued)
        self._count_dead(dead, "held")
        if not self._epoch_ok(state, 0):
            return
        if queued:
            self._empty_pop_at = float("-inf")
            self._refill()

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

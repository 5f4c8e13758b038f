"""
L{RedisScheduler}: a frontier that many processes share through Redis
(C{--scheduler redis://host:port/db}, or C{rediss://} over TLS); the keys are described in
L{tinyscrapy.frontier.redisstore}, the user's view in C{docs/shared-crawl.md}.

The engine's interface is synchronous; Redis is not. So:

    - L{RedisScheduler.enqueue_request} checks a local cache of fingerprints and answers
      at once; the request joins an outbox that C{reactor.callLater(0, ...)} writes in one
      script: Redis drops it if another process queued it first (C{SADD}).
    - L{RedisScheduler.next_request} serves from a local, slot-aware
      L{tinyscrapy.core.scheduler.Scheduler}. When it holds fewer than C{CONCURRENT_REQUESTS}
      (or up to 4 times that while all it holds wait on slot delays), a pop moves a batch
      of leases (requests whose host may take one more now, across all workers) from the
      shared queue into this worker's C{processing} hash; when it lands, the engine is
      woken. Each send on a host with a delay is reported, so that Redis times that
      host's next send from it.
    - L{RedisScheduler.request_done} is the acknowledgement: the entry leaves
      C{processing} (its lease ends) in the same script that writes what its callback
      yielded, after it. A worker that dies keeps its entries in C{processing} until its
      heartbeat expires; then another worker puts them back in the queue.
    - L{RedisScheduler.has_pending_requests} stays True until the crawl is over: a status
      check sent while the engine had nothing to do found the queue empty and no lease
      out anywhere, and ended the crawl in Redis (or another worker's did).

A C{LoopingCall} every C{SCHEDULER_REDIS_POLL_INTERVAL} seconds retries what failed,
refills, checks the status, renews the heartbeat and watches the connection (a client
that stopped reconnecting is replaced; an outage past its bound stops the crawl). That
background half is in L{tinyscrapy.frontier.redissync}, what each state of the crawl
(over, lost, evicted, unreachable) does in L{tinyscrapy.frontier.redisstates}; this module
is the face the engine sees, and the opening and closing.
"""

import logging
import os
import socket
import struct
import time
from dataclasses import dataclass
from functools import partial

from twisted.internet.defer import CancelledError, succeed
from twisted.internet.task import LoopingCall

from tinyscrapy.core.scheduler import Scheduler
from tinyscrapy.dupefilters import FingerprintSet
from tinyscrapy.exceptions import UnserializableRequest, UsageError
from tinyscrapy.frontier import codec, redisscripts
from tinyscrapy.frontier.redisconnect import is_tls, make_client, tls_options
from tinyscrapy.frontier.redisstates import is_refusal, reason_of
from tinyscrapy.frontier.redisstore import OK, RedisStore, connect, parse_redis_url, redact
from tinyscrapy.frontier.redissync import _PREFETCH_CAP, SharedQueueSync
from tinyscrapy.utils.request import as_int, request_fingerprint

logger = logging.getLogger(__name__)


def default_key(spider):
    """The key prefix of C{spider}'s shared crawl: what its C{frontier_key()} returns
    (the crawl command's spider names its start URLs), else C{tinyscrapy:NAME:}."""
    frontier_key = getattr(spider, "frontier_key", None)
    key = frontier_key() if callable(frontier_key) else None
    return key or f"tinyscrapy:{spider.name}:"


@dataclass(frozen=True)
class RedisSchedulerStatistics:
    """This worker's side of the shared frontier."""

    pending: int
    enqueued: int
    duplicates: int
    seen: int
    outbox: int
    taken: int


class _NothingSeen:
    """The local buffer's duplicate filter: everything it gets was checked already."""

    def __contains__(self, fingerprint):
        return False

    def add(self, fingerprint):
        return True

    def __len__(self):
        return 0


def _stored_fingerprint(request):
    return request.fingerprint if request.fingerprint is not None \
        else request_fingerprint(request)


class RedisScheduler(SharedQueueSync):
    """
    A shared frontier: dedup, queue and acknowledgements in Redis, a prefetch buffer here.

    @ivar seen: fingerprints this worker queued or took (a cache of the shared C{seen}).
    @ivar local: the slot-aware L{Scheduler} the requests taken wait in.
    @ivar store: the L{RedisStore} once open.
    """

    def __init__(self, crawler):
        settings = crawler.settings
        self.url = settings.get("SCHEDULER_URL")
        parse_redis_url(self.url)  # a bad URL stops the start here, with one line
        self.shown = redact(self.url)  # what logs show: no password
        self.ca = settings.get("SCHEDULER_REDIS_TLS_CA") or None
        self.crawler = crawler
        self.stats = crawler.stats
        self.ledger = crawler.ledger
        self.clock = crawler.reactor
        # REQUEST_FINGERPRINTER_CLASS: a project's own fingerprinter dedups the crawl
        self.fingerprint = as_int(crawler.request_fingerprinter)
        self.seen = FingerprintSet()
        self.local = self._new_buffer()
        self.batch = max(1, settings.getint("CONCURRENT_REQUESTS"))
        self.persist = settings.getbool("SCHEDULER_PERSIST")
        self.key = settings.get("SCHEDULER_REDIS_KEY")
        self.poll = settings.getfloat("SCHEDULER_REDIS_POLL_INTERVAL")
        self.worker_timeout = settings.getfloat("SCHEDULER_REDIS_WORKER_TIMEOUT")
        self.timeout = settings.getfloat("SCHEDULER_REDIS_TIMEOUT")
        self.retries = max(0, settings.getint("SCHEDULER_REDIS_RETRIES"))
        self.end_ttl = settings.getfloat("SCHEDULER_REDIS_END_MARKER_TTL")
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(3).hex()}"
        self.spider = self.store = None
        self.run_id = None  # the Redis server's at join: a restart changes it
        self._token = os.urandom(4)
        self._count = 0
        self._outbox = []   # (fingerprint, score, member, dont_filter) to push
        self._acks = []     # members of our processing hash to forget, after the outbox
        self._dead = []     # members of our processing hash we cannot read: to the dead list
        self._reports = []  # (slot, delay ms) of the sends on slots with a delay
        self._reporting = ()
        self._sends = {}    # slot -> its sent_count when last looked at
        self._lease_delays = {}  # slot -> the largest delay (ms) its leases carried
        self._acking = ()   # the acknowledgements of the push on its way
        self._pushing = ()  # the outbox entries of the push on its way
        self._taken = {}    # request -> member, for requests taken and not yet done
        self._handed = set()  # those of _taken handed to the engine (the rest: buffered)
        self._flushing = self._popping = self._checking = None
        self._flush_call = None
        self._flush_waiters = []
        self._changes = 0   # bumped by every local change
        self._idle_at = -1  # _changes when the engine last found nothing to do
        self._empty_pop_at = self._next_beat = self._next_status = float("-inf")
        self._reclaim = False
        self._outage_since = None  # when Redis stopped answering, during an outage
        self._last_trouble = "no connection"  # what failed last, for the final error
        self._closing = False
        self._over = False  # the crawl ended (here or in another worker): finishing
        self._lost = False  # Redis lost the crawl's state, or it did not answer: stopping
        self._enqueued = self._duplicates = 0
        self._tick = LoopingCall(self._on_tick)
        self._tick.clock = crawler.reactor
        self._pop_call = None  # a refill when a slot's delay ends
        self.slots = getattr(crawler, "slots", None)
        if self.slots is not None:
            self.slots.listeners.append(self._slot_event)

    def _new_buffer(self):
        buffer = Scheduler(fingerprint=_stored_fingerprint,
                           slots=getattr(self.crawler, "slots", None), clock=self.clock)
        buffer.seen = _NothingSeen()
        return buffer

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    # opening and closing

    def open(self, spider):
        """
        Connect, join the crawl (requeueing the entries of dead workers) and start ticking.

        @return: a Deferred firing with None once joined; it errbacks with L{UsageError}
            when Redis cannot be reached (a Redis that does not answer is waited for as
            during a crawl: C{SCHEDULER_REDIS_TIMEOUT x (1 + SCHEDULER_REDIS_RETRIES)}).
        """
        self.spider = spider
        prefix = self.key or default_key(spider)
        d = connect(self.url, self.clock, self.timeout, self.ca, self.retries,
                    self._connect_retry)
        d.addCallback(self._cb_connected, prefix)
        return d

    def _connect_retry(self, attempt, reason):
        """The first connection got no answer: say so once, then wait as in an outage."""
        if attempt == 1:
            logger.warning("shared frontier %s: %s; trying again (at most %d more "
                           "time(s), SCHEDULER_REDIS_RETRIES)", self.shown, reason,
                           self.retries)

    def _cb_connected(self, client, prefix):
        tls = tls_options(self.url, self.ca) if is_tls(self.url) else None
        remake = partial(make_client, self.url, self.timeout, tls, quiet=True)
        self.store = RedisStore(client, prefix, self.worker, self.worker_timeout,
                                self.clock, self.timeout, remake)
        d = self.store.run_id()
        d.addCallback(self._cb_run_id)
        return d

    def _cb_run_id(self, run_id):
        self.run_id = run_id
        return self._join(os.urandom(8).hex(), self.retries)

    def _join(self, token, left):
        """Join the crawl; a join Redis does not answer is sent again (C{left} more
        times), as any command during an outage."""
        d = self.store.join(token)
        d.addCallbacks(self._cb_joined, self._eb_join_failed, errbackArgs=(token, left))
        return d

    def _eb_join_failed(self, failure, token, left):
        """The join failed: sent again while Redis does not answer (C{left} times);
        otherwise the connection is closed and the open fails with one line."""
        from txredisapi import ConnectionError as RedisConnectionError
        if is_refusal(failure):
            why = (f"Redis refused the join script ({failure.getErrorMessage()}); do its "
                   f"keys hold something else?")
        elif left > 0 and failure.check(CancelledError, RedisConnectionError):
            return self._join(token, left - 1)
        else:
            why = reason_of(failure)
        error = UsageError(f"cannot join the shared crawl at {self.shown}: {why}")
        d = self.store.disconnect()
        d.addBoth(_raise, error)
        return d

    def _cb_joined(self, joined):
        how, seen, queued, marker_ttl = joined
        prefix = self.store.prefix
        if how == "over":
            self._over = True
            logger.warning(
                "shared frontier %s: the crawl of keys %s* is over (it finished less than "
                "SCHEDULER_REDIS_END_MARKER_TTL=%g s ago); nothing to do. To start a new "
                "crawl, wait %.0f s for its end marker to expire, or delete it: redis-cli "
                "-u %s DEL %sepoch", self.shown, prefix, self.end_ttl, marker_ttl,
                self.shown, prefix)
            return None
        self._next_beat = self.clock.seconds() + self.worker_timeout / 3
        d = self.store.status()
        d.addCallbacks(self._cb_first_status, self._eb_first_status,
                       callbackArgs=(how, seen, queued))
        return d

    def _eb_first_status(self, failure):
        """The first status did not come (Redis stalled since the join): the tick checks
        it again, watching the outage as it does; a refusal stops the crawl."""
        self._next_status = float("-inf")
        self._tick.start(self.poll, now=False)
        self._trouble(failure, "checking the status")

    def _cb_first_status(self, status, how, seen, queued_at_join):
        state, queued, processing, requeued, dead = status
        self._count_dead(dead, "held")
        if state != OK:  # ended or lost between two scripts: say so at the first tick
            self._next_status = float("-inf")
        self._count_requeued(requeued)
        prefix = self.store.prefix
        if how == "new" and (seen or queued_at_join):
            logger.warning("shared frontier %s (keys %s*): worker %s started a crawl on "
                           "the keys an earlier crawl left (SCHEDULER_PERSIST, or a crawl "
                           "stopped early): resuming its %d queued request(s); its %d "
                           "fingerprints will not be fetched again (delete the keys %s* "
                           "to start over)", self.shown, prefix, self.worker,
                           queued_at_join, seen, prefix)
        elif how == "new":
            logger.info("shared frontier %s (keys %s*): worker %s started a new crawl",
                        self.shown, prefix, self.worker)
        else:
            logger.info("shared frontier %s (keys %s*): worker %s joined the crawl in "
                        "progress; %d queued, %d taken by other workers", self.shown,
                        prefix, self.worker, queued, processing)
        self._tick.start(self.poll, now=False)

    def close(self, reason):
        """
        Write the outbox, put the requests buffered here (never handed out) back in the
        shared queue, leave the crawl and disconnect. (The crawl's keys go when it ends:
        see L{tinyscrapy.frontier.redisstore}.)

        @return: a Deferred firing with None when disconnected (after at most
            C{SCHEDULER_REDIS_TIMEOUT} seconds of waiting for Redis); it never errbacks.
        """
        if self._tick.running:
            self._tick.stop()
        self._closing = True
        self.local.close(reason)
        if self.slots is not None and self._slot_event in self.slots.listeners:
            self.slots.listeners.remove(self._slot_event)
        if self._pop_call is not None and self._pop_call.active():
            self._pop_call.cancel()
        if self.store is None:
            return succeed(None)
        if self._lost or self._over:  # nothing of ours can be written any more
            self._refuse_outbox()
            d = succeed(None)
        else:
            d = self._write_all()  # retried until the deadline: txredisapi reconnects
            d.addCallback(self._cb_written)
        call = self.clock.callLater(self.timeout, d.cancel)
        d.addErrback(self._eb_close_failed)
        d.addBoth(self._cb_disconnect, call)
        return d

    def _cb_written(self, _):
        d = self.store.release()
        d.addCallback(self._cb_released)
        return d

    def _cb_released(self, result):
        state, released = result
        if state == OK:
            self._count_requeued(released)

    def _eb_close_failed(self, failure):
        requests = len(self._outbox) + len(self._pushing)
        acks = len(self._acks) + len(self._acking)
        if failure.check(CancelledError):
            why = f"Redis did not answer within SCHEDULER_REDIS_TIMEOUT ({self.timeout:g} s)"
        else:
            why = f"could not close ({failure.getErrorMessage() or failure.type.__name__})"
        logger.error("shared frontier %s: %s: %d request(s) not written, %d "
                     "acknowledgement(s) not written; their parents will be fetched again "
                     "by another worker after the heartbeat of %s expires", self.shown, why,
                     requests, acks, self.worker)

    def _cb_disconnect(self, _, call):
        if call.active():
            call.cancel()
        if self._flush_call is not None and self._flush_call.active():
            self._flush_call.cancel()
        d = self.store.disconnect()
        d.addTimeout(self.timeout, self.clock)  # a stalled Redis may never close it
        d.addErrback(_ignore)
        return d

    # the engine's interface

    def enqueue_request(self, request):
        """
        Admit C{request} unless this worker saw its fingerprint (C{dont_filter} skips the
        check); it is written to Redis soon, where it ends in this worker's ledger as
        C{shared}.

        @return: True if admitted, False if dropped as a duplicate.
        @raise UnserializableRequest: its callback is not a spider method (logged).
        """
        fingerprint = self.fingerprint(request)
        if self._over or fingerprint in self.seen and not request.dont_filter:
            self._duplicates += 1
            self.stats.inc_value("dupefilter/filtered")
            return False
        request.fingerprint = fingerprint
        try:
            member = self._member(request, codec.request_to_bytes(request, self.spider))
        except UnserializableRequest as e:
            logger.error("%s", e)
            raise
        if not request.dont_filter:  # as the in-memory scheduler: no trace of it
            self.seen.add(fingerprint)
        self._outbox.append((fingerprint, -request.priority, member, request.dont_filter))
        self._enqueued += 1
        self.ledger.close(request, "shared")
        self._changed()
        self._flush_soon()
        return True

    def _member(self, request, data):
        """A queue member: its lease header (see L{tinyscrapy.frontier.redisscripts}:
        microseconds, this worker's token and a counter, then the slot's name, parallelism
        and delay), then C{data}."""
        self._count += 1
        slots = self.local.slots
        key = slots.key_for(request)
        slot = slots.slot(key)
        name = str(key).encode("utf-8")[:0xFFFF]
        return struct.pack(">Q4sLH", time.time_ns() // 1000, self._token,
                           self._count & 0xFFFFFFFF, len(name)) + name + struct.pack(
            ">LL", max(1, min(slot.rule.parallelism, redisscripts.MAX_PARALLELISM)),
            min(int(slot.floor * 1000), redisscripts.MAX_DELAY_MS)) + data

    def next_request(self):
        """The next buffered request whose slot can take one now, or None. A refill is
        sent when fewer than C{CONCURRENT_REQUESTS} are buffered, or when none of those
        buffered can go now (they wait on their slots' delays), up to C{_PREFETCH_CAP}
        times C{CONCURRENT_REQUESTS}: so one delayed slot does not starve the others."""
        request = self.local.next_request()
        if request is not None:
            self._handed.add(request)
        size = self.local.size()
        if size < self.batch:
            self._refill()
        elif request is None and size < self.batch * _PREFETCH_CAP:
            self._refill(starved=True)  # all buffered wait on slot delays: take more
        return request

    def request_done(self, request):
        """Acknowledge C{request}: it leaves this worker's C{processing} hash after what
        its callback yielded is written."""
        member = self._taken.pop(request, None)
        self._handed.discard(request)
        if member is not None and not (self._over or self._lost):
            self._acks.append(member)
            self._changed()
            self._flush_soon()

    def next_ready_time(self):
        return self.local.next_ready_time()

    def has_pending_requests(self):
        """True until the crawl is over: a status check, sent while this worker and the
        engine had nothing to do, found nothing queued or held anywhere and ended it (or
        another worker's did)."""
        if self._over:
            return False
        if self.local.has_pending_requests():
            return True
        self._idle_at = self._changes  # the engine asks only when it has nothing to do
        if not self._busy():  # else the tick checks once all is written
            self._status()
        return True

    def size(self):
        """Requests buffered here, not handed out yet."""
        return self.local.size()

    __len__ = size

    def statistics(self):
        return RedisSchedulerStatistics(
            pending=self.local.size(), enqueued=self._enqueued, duplicates=self._duplicates,
            seen=len(self.seen), outbox=len(self._outbox), taken=len(self._taken))

def _ignore(_failure):
    return None


def _raise(_, error):
    raise error

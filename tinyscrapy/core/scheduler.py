"""
L{Scheduler}: the frontier. It remembers what was seen, and hands out what to fetch next.

The interface is the one TinyScrapy's engine calls, with return values that mean
something (as in Scrapy): L{Scheduler.enqueue_request} returns False when it drops a
duplicate; L{Scheduler.next_request} returns None for "nothing ready now", which is not
"finished" -- only L{Scheduler.has_pending_requests} says that.

Requests wait in one queue per download slot (per host), highest priority first within
it. The scheduler consults the downloader's L{tinyscrapy.core.downloader.slots.Slots} and hands out only a
request whose slot can take one now, so a host that is full or waiting out its delay never
holds one of the engine's places. Each slot queue with requests is filed in one place:

    - C{_ready}: a heap of slots that can start now, by (highest priority, earliest
      eligible); L{next_request} takes the top;
    - C{_waiting}: a heap of slots that can start at a known time (their delay);
    - parked: full slots, filed again when one of their requests is released.

Filing is a hint checked again when the slot comes up, so every operation is O(log n) in
the number of hosts, with no scan over them. A request whose C{meta["not_before"]} (a
reactor time) is still ahead waits in a third heap, C{_later}, holding no slot and no place.
L{Scheduler.next_ready_time} tells the engine when to look again if nothing is ready now.

Hundreds of thousands of waiting requests are kept out of CPython's full garbage
collections, which would otherwise walk them all again and again, stalling the reactor:
see L{tinyscrapy.utils.gc}.
"""

import itertools
from dataclasses import dataclass
from heapq import heappop, heappush

from tinyscrapy.core.downloader.slots import LimitRule, Slots
from tinyscrapy.dupefilters import FingerprintSet
from tinyscrapy.pqueues import _SlotQueue
from tinyscrapy.utils import gc as frozen
from tinyscrapy.utils.request import request_fingerprint

_READY, _WAITING, _PARKED = "ready", "waiting", "parked"


@dataclass(frozen=True)
class SchedulerStatistics:
    """What the frontier holds, and what it turned away."""

    pending: int
    enqueued: int
    dequeued: int
    duplicates: int
    seen: int
    hosts: int = 0
    later: int = 0


class Scheduler:
    """
    An in-memory frontier with a fingerprint duplicate filter and a queue per slot.

    @ivar seen: the fingerprints (C{int}) of every request admitted so far.
    @ivar slots: the L{Slots} consulted (the downloader's, in a crawl).
    """

    def __init__(self, fingerprint=request_fingerprint, slots=None, clock=None):
        self.fingerprint = fingerprint
        self.seen = FingerprintSet()
        if slots is None:  # alone (unit tests): no rule ever holds a request back
            slots = Slots(default=LimitRule(parallelism=2**62), clock=clock)
        self.slots = slots
        self.clock = clock if clock is not None else slots.clock
        slots.listeners.append(self._slot_changed)
        self._queues = {}
        self._ready = []
        self._waiting = []
        self._later = []
        self._order = itertools.count()
        self._pending = 0
        self._enqueued = 0
        self._dequeued = 0
        self._duplicates = 0
        self._freeze_at = frozen.STEP  # waiting requests that make the next gc freeze
        self._thaw_below = -1  # ... and that undo it (-1: none held)

    @classmethod
    def from_crawler(cls, crawler):
        """Consult the crawler's slots (the downloader's), on the crawler's reactor."""
        return cls(slots=getattr(crawler, "slots", None), clock=crawler.reactor)

    def open(self, spider):
        """Called once before the crawl; may return a Deferred (remote backends)."""

    def close(self, reason):
        """Called once after the crawl; may return a Deferred. Nothing persists here."""
        if self._slot_changed in self.slots.listeners:
            self.slots.listeners.remove(self._slot_changed)
        if self._thaw_below >= 0:
            self._thaw()

    def enqueue_request(self, request):
        """
        Add C{request} unless its fingerprint was seen. A C{dont_filter} request skips the
        check and is not remembered either (as in Scrapy): a later plain request for the
        same URL (the start page asked for again after a login, say) is fetched once more.

        @return: True if queued, False if dropped as a duplicate.
        """
        fingerprint = self.fingerprint(request)
        if fingerprint in self.seen and not request.dont_filter:
            self._duplicates += 1
            return False
        if not request.dont_filter:  # as Scrapy's: a dont_filter request leaves no trace
            self.seen.add(fingerprint)
        request.fingerprint = fingerprint
        self._pending += 1
        self._enqueued += 1
        self._queue(request)
        if self._pending >= self._freeze_at:
            self._freeze()
        return True

    def _freeze(self):
        """
        Another C{frozen.STEP} requests wait: keep them, and all that is alive, out of the
        full garbage collections (L{tinyscrapy.utils.gc} says why, and why that
        leaks nothing), until fewer than C{frozen.STEP // 2} wait.
        """
        self._freeze_at = self._pending + frozen.STEP
        if frozen.freeze(self):
            self._thaw_below = frozen.STEP // 2

    def _thaw(self):
        """The frontier drained (or closes): let the collector see everything again."""
        self._thaw_below = -1
        self._freeze_at = self._pending + frozen.STEP
        frozen.thaw(self)

    def _queue(self, request):
        """Queue C{request} in its slot, or in C{_later} while its C{meta["not_before"]}
        (a reactor time) is still ahead."""
        meta = request._meta
        not_before = meta.get("not_before") if meta else None
        if not_before is not None and not_before > self.clock.seconds():
            heappush(self._later, (not_before, next(self._order), request))
        else:
            self._push(request)

    def _push(self, request):
        """Queue C{request} in its slot's queue; file the slot if it was not."""
        key = self.slots.key_for(request)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = _SlotQueue(key)
        queue.push(request)
        if queue.where is None:
            self._file(queue, self.clock.seconds())
        elif queue.where is _READY and -queue.entry[0] < request.priority:
            self._file_ready(queue, queue.entry[1])  # its top priority rose

    def next_request(self):
        """
        The next request to download, or None when nothing is ready now.

        Synchronous on purpose: the engine asks in a loop. Remote backends prefetch.
        """
        now = self.clock.seconds()
        self._move_due(now)
        ready = self._ready
        while ready:
            entry = heappop(ready)
            queue = entry[-1]
            if queue.entry is not entry:
                continue  # stale: the slot was filed again since
            queue.where = queue.entry = None
            if not self.slots.can_start(queue.key, now):
                self._file(queue, now)
                continue
            request = queue.pop()
            if queue.count:
                self._file_ready(queue, now)  # checked again when it comes up
            else:
                del self._queues[queue.key]
            self._pending -= 1
            self._dequeued += 1
            if self._pending < self._thaw_below:
                self._thaw()
            return request
        return None

    def request_done(self, request):
        """
        The engine is finished with C{request}, a request this scheduler handed out: its
        callback ran and what it yielded is enqueued. A persistent or shared frontier
        acknowledges it only now, so a crash or a pause in between loses nothing.
        """

    def next_ready_time(self):
        """
        When a request may be ready, if none is now.

        @return: an absolute reactor time, or None when only a download finishing (or a
            new request) can make one ready.
        """
        if self._ready:
            return self.clock.seconds()
        waiting = self._waiting
        while waiting and waiting[0][-1].entry is not waiting[0]:
            heappop(waiting)
        times = [heap[0][0] for heap in (waiting, self._later) if heap]
        return min(times) if times else None

    def has_pending_requests(self):
        """True while any request waits, ready or not."""
        return self._pending > 0

    def size(self):
        """How many requests wait."""
        return self._pending

    __len__ = size

    # filing slots

    def _file(self, queue, now):
        """File C{queue}'s slot: ready now, waiting for a known time, or parked."""
        if self.slots.can_start(queue.key, now):
            self._file_ready(queue, now)
            return
        at = self.slots.ready_at(queue.key, now)
        if at is None:
            queue.where, queue.entry = _PARKED, None
            return
        entry = (at, next(self._order), queue)
        heappush(self._waiting, entry)
        queue.where, queue.entry = _WAITING, entry

    def _file_ready(self, queue, since):
        entry = (-queue.priorities[0], since, next(self._order), queue)
        heappush(self._ready, entry)
        queue.where, queue.entry = _READY, entry

    def _move_due(self, now):
        """Slots whose time has come become ready; due C{not_before} requests are queued."""
        waiting = self._waiting
        while waiting and waiting[0][0] <= now:
            entry = heappop(waiting)
            queue = entry[-1]
            if queue.entry is entry:
                self._file_ready(queue, entry[0])
        later = self._later
        while later and later[0][0] <= now:
            self._push(heappop(later)[-1])

    def _slot_changed(self, key):
        """A request of slot C{key} was sent or released: file the slot again."""
        queue = self._queues.get(key)
        if queue is not None and queue.where is not _READY:
            self._file(queue, self.clock.seconds())

    def statistics(self):
        return SchedulerStatistics(
            pending=self._pending, enqueued=self._enqueued, dequeued=self._dequeued,
            duplicates=self._duplicates, seen=len(self.seen), hosts=len(self._queues),
            later=len(self._later),
        )

"""
The scheduler's priority queues, as Scrapy keeps them (C{SCHEDULER_PRIORITY_QUEUE}).

L{SlotAwarePriorityQueue}, tinyscrapy's default, is a queue per download slot (per host),
highest priority first within it, that consults the downloader's
L{tinyscrapy.core.downloader.slots.Slots} and hands out only a request whose slot can take
one now: a host that is full or waiting out its delay never holds one of the engine's
places. Each slot queue with requests is filed in one place:

    - C{_ready}: a heap of slots that can start now, by (highest priority, earliest
      eligible); L{SlotAwarePriorityQueue.pop} takes the top;
    - C{_waiting}: a heap of slots that can start at a known time (their delay);
    - parked: full slots, filed again when one of their requests is released.

Filing is a hint checked again when the slot comes up, so every operation is O(log n) in
the number of hosts, with no scan over them. A request whose C{meta["not_before"]} (a
reactor time) is still ahead waits in a third heap, C{_later}, holding no slot and no place.
L{SlotAwarePriorityQueue.next_ready_time} tells the engine when to look again if nothing
is ready now.

Hundreds of thousands of waiting requests are kept out of CPython's full garbage
collections, which would otherwise walk them all again and again, stalling the reactor:
see L{tinyscrapy.utils.gc}.
"""

import itertools
from collections import deque
from heapq import heappop, heappush

from tinyscrapy.core.downloader.slots import LimitRule, Slots
from tinyscrapy.utils import gc

_READY, _WAITING, _PARKED = "ready", "waiting", "parked"


class _SlotQueue:
    """The requests of one slot: a FIFO per priority, and where the slot is filed."""

    __slots__ = ("key", "queues", "priorities", "count", "where", "entry")

    def __init__(self, key):
        self.key = key
        self.queues = {}
        self.priorities = []  # highest first, each with a non-empty queue
        self.count = 0
        self.where = None
        self.entry = None

    def push(self, request):
        queue = self.queues.get(request.priority)
        if queue is None:
            queue = self.queues[request.priority] = deque()
            self.priorities.append(request.priority)
            self.priorities.sort(reverse=True)
        queue.append(request)
        self.count += 1

    def pop(self):
        priority = self.priorities[0]
        queue = self.queues[priority]
        request = queue.popleft()
        if not queue:
            del self.queues[priority]
            del self.priorities[0]
        self.count -= 1
        return request


class SlotAwarePriorityQueue:
    """
    The waiting requests, a queue per download slot; L{pop} hands out the highest-priority
    request among the slots that can start one now.

    @ivar slots: the L{Slots} consulted (the downloader's, in a crawl).
    """

    def __init__(self, slots=None, clock=None):
        """
        @param slots: the downloader's slots; None (alone, in unit tests): no rule ever
            holds a request back.
        @param clock: the reactor (or a C{task.Clock}); None: the slots' clock.
        """
        if slots is None:
            slots = Slots(default=LimitRule(parallelism=2**62), clock=clock)
        self.slots = slots
        self.clock = clock if clock is not None else slots.clock
        slots.listeners.append(self._slot_changed)
        self._queues = {}
        self._ready = []
        self._waiting = []
        self._later = []
        self._order = itertools.count()
        self._count = 0
        self._freeze_at = gc.STEP  # waiting requests that make the next gc freeze
        self._thaw_below = -1  # ... and that undo it (-1: none held)

    @classmethod
    def from_crawler(cls, crawler):
        """Consult the crawler's slots (the downloader's), on the crawler's reactor."""
        return cls(slots=getattr(crawler, "slots", None), clock=crawler.reactor)

    def __len__(self):
        return self._count

    def push(self, request):
        """Queue C{request} in its slot, or in C{_later} while its C{meta["not_before"]}
        (a reactor time) is still ahead."""
        meta = request._meta
        not_before = meta.get("not_before") if meta else None
        if not_before is not None and not_before > self.clock.seconds():
            heappush(self._later, (not_before, next(self._order), request))
        else:
            self._push(request)
        self._count += 1
        if self._count >= self._freeze_at:
            self._freeze()

    def pop(self):
        """@return: the next request whose slot can take one now, or None."""
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
            self._count -= 1
            if self._count < self._thaw_below:
                self._thaw()
            return request
        return None

    def next_ready_time(self):
        """
        @return: when a request may be ready, if none is now (an absolute reactor time),
            or None when only a download finishing (or a new request) can make one ready.
        """
        if self._ready:
            return self.clock.seconds()
        waiting = self._waiting
        while waiting and waiting[0][-1].entry is not waiting[0]:
            heappop(waiting)
        times = [heap[0][0] for heap in (waiting, self._later) if heap]
        return min(times) if times else None

    def close(self):
        """Stop listening to the slots; let go of a garbage-collector freeze."""
        if self._slot_changed in self.slots.listeners:
            self.slots.listeners.remove(self._slot_changed)
        if self._thaw_below >= 0:
            self._thaw()

    @property
    def hosts(self):
        """How many slots have requests waiting."""
        return len(self._queues)

    @property
    def later(self):
        """How many requests wait for their C{meta["not_before"]}."""
        return len(self._later)

    # keeping a large frontier out of full collections

    def _freeze(self):
        """
        Another C{gc.STEP} requests wait: keep them, and all that is alive, out of the
        full garbage collections (L{tinyscrapy.utils.gc} says why, and why that leaks
        nothing), until fewer than C{gc.STEP // 2} wait.
        """
        self._freeze_at = self._count + gc.STEP
        if gc.freeze(self):
            self._thaw_below = gc.STEP // 2

    def _thaw(self):
        """The frontier drained (or closes): let the collector see everything again."""
        self._thaw_below = -1
        self._freeze_at = self._count + gc.STEP
        gc.thaw(self)

    # filing slots

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

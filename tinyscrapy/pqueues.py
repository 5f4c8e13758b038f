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
from tinyscrapy.exceptions import UsageError
from tinyscrapy.utils import gc
from tinyscrapy.utils.misc import build_from_crawler

_READY, _WAITING, _PARKED = "ready", "waiting", "parked"


class _Later:
    """The requests whose C{meta["not_before"]} (a reactor time) is still ahead: a heap by
    that time, holding no slot and no place (a retry's back-off waits here)."""

    __slots__ = ("heap", "order")

    def __init__(self):
        self.heap = []
        self.order = itertools.count()

    def hold(self, request, clock):
        """Keep C{request} if its C{not_before} is ahead. @return: whether it was kept."""
        meta = request._meta
        not_before = meta.get("not_before") if meta else None
        if not_before is None or not_before <= clock.seconds():
            return False
        heappush(self.heap, (not_before, next(self.order), request))
        return True

    def due(self, now):
        """Take out the requests whose time has come, earliest first."""
        heap = self.heap
        while heap and heap[0][0] <= now:
            yield heappop(heap)[-1]

    def next_time(self):
        """@return: the earliest C{not_before} held, or None."""
        return self.heap[0][0] if self.heap else None

    def __len__(self):
        return len(self.heap)


class _SlotQueue:
    """The requests of one slot: a FIFO per priority, and where the slot is filed."""

    __slots__ = ("key", "queues", "priorities", "count", "where", "entry", "lifo")

    def __init__(self, key, lifo=False):
        self.key = key
        self.lifo = lifo
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
        request = queue.pop() if self.lifo else queue.popleft()
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

    def __init__(self, slots=None, clock=None, lifo=False):
        """
        @param slots: the downloader's slots; None (alone, in unit tests): no rule ever
            holds a request back.
        @param clock: the reactor (or a C{task.Clock}); None: the slots' clock.
        @param lifo: within a priority of a slot, the newest request first (depth first).
        """
        if slots is None:
            slots = Slots(default=LimitRule(parallelism=2**62), clock=clock)
        self.slots = slots
        self.clock = clock if clock is not None else slots.clock
        slots.listeners.append(self._slot_changed)
        self._queues = {}
        self._lifo = lifo
        self._ready = []
        self._waiting = []
        self._later = _Later()
        self._order = itertools.count()
        self._count = 0
        self._freeze_at = gc.STEP  # waiting requests that make the next gc freeze
        self._thaw_below = -1  # ... and that undo it (-1: none held)

    @classmethod
    def from_crawler(cls, crawler, downstream_queue_cls=None, key="", startprios=(),
                     **kwargs):
        """
        Consult the crawler's slots (the downloader's), on the crawler's reactor.

        Scrapy's scheduler arguments are accepted: of C{downstream_queue_cls}
        (C{SCHEDULER_MEMORY_QUEUE}) only the order is taken, first in first out or (a
        C{LifoMemoryQueue}) last in first out within each priority of a slot.

        @raise UsageError: C{downstream_queue_cls} is neither kind of memory queue.
        """
        return cls(slots=getattr(crawler, "slots", None), clock=crawler.reactor,
                   lifo=_is_lifo(downstream_queue_cls))

    def __len__(self):
        return self._count

    def push(self, request):
        """Queue C{request} in its slot, or in C{_later} while its C{meta["not_before"]}
        (a reactor time) is still ahead."""
        if not self._later.hold(request, self.clock):
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
        times = [t for t in (waiting[0][0] if waiting else None, self._later.next_time())
                 if t is not None]
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
            queue = self._queues[key] = _SlotQueue(key, self._lifo)
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
        for request in self._later.due(now):
            self._push(request)

    def _slot_changed(self, key):
        """A request of slot C{key} was sent or released: file the slot again."""
        queue = self._queues.get(key)
        if queue is not None and queue.where is not _READY:
            self._file(queue, self.clock.seconds())


def _is_lifo(queue_cls):
    """Whether Scrapy's memory queue class C{queue_cls} (C{SCHEDULER_MEMORY_QUEUE}) pops
    the newest first. @raise UsageError: it is not one of the two memory queues."""
    if queue_cls is None:
        return False
    from tinyscrapy.squeues import FifoMemoryQueue, LifoMemoryQueue
    if isinstance(queue_cls, type) and issubclass(queue_cls, LifoMemoryQueue):
        return True
    if isinstance(queue_cls, type) and issubclass(queue_cls, FifoMemoryQueue):
        return False
    raise UsageError(f"setting SCHEDULER_MEMORY_QUEUE: SlotAwarePriorityQueue keeps its "
                     f"requests itself, first in first out (FifoMemoryQueue) or last in "
                     f"first out (LifoMemoryQueue), not in {queue_cls!r}; set "
                     f"SCHEDULER_PRIORITY_QUEUE to tinyscrapy.pqueues.ScrapyPriorityQueue "
                     f"to use a queue class of your own")


class ScrapyPriorityQueue:
    """
    Scrapy's priority queue: one downstream queue (C{SCHEDULER_MEMORY_QUEUE}, a
    L{tinyscrapy.squeues} class, or a class of the project's) per priority, the highest
    priority first. It hands out a request whether or not its host can take one now (the
    downloader's slot then holds it), as Scrapy's does; a request whose
    C{meta["not_before"]} is ahead waits out of the queues until then.

    @ivar queues: C{{-priority: downstream queue}}, as Scrapy keys them.
    @ivar curprio: the key of the highest priority with requests, or None.
    """

    @classmethod
    def from_crawler(cls, crawler, downstream_queue_cls, key, startprios=(), **kwargs):
        return cls(crawler, downstream_queue_cls, key, startprios)

    def __init__(self, crawler, downstream_queue_cls, key, startprios=(), **kwargs):
        """
        @param downstream_queue_cls: the class of each priority's queue, built with
            C{from_crawler(crawler, key + "/" + priority)} when it has one.
        @param key: the queues' common key (a folder, for disk queues).
        @param startprios: the priority keys of queues to open again (disk queues).
        """
        self.crawler = crawler
        self.downstream_queue_cls = downstream_queue_cls
        self.key = key
        self.queues = {}
        self.curprio = None
        self.clock = getattr(crawler, "reactor", None) or _global_reactor()
        self._later = _Later()
        for priority in startprios:
            queue = self.qfactory(priority)
            if len(queue):
                self.queues[priority] = queue
            else:
                queue.close()
        self.curprio = min(self.queues) if self.queues else None

    @property
    def slots(self):
        """The crawler's L{Slots} (which a C{--jobdir} frontier files requests by)."""
        return _crawler_slots(self.crawler)

    def qfactory(self, key):
        """A new downstream queue for the priority key C{key}."""
        return build_from_crawler(self.downstream_queue_cls, self.crawler,
                                  f"{self.key}/{key}")

    def priority(self, request):
        """The key a request is queued under: Scrapy's C{-request.priority}."""
        return -request.priority

    def push(self, request):
        if self._later.hold(request, self.clock):
            return
        self._push(request)

    def _push(self, request):
        priority = self.priority(request)
        queue = self.queues.get(priority)
        if queue is None:
            queue = self.queues[priority] = self.qfactory(priority)
        queue.push(request)
        if self.curprio is None or priority < self.curprio:
            self.curprio = priority

    def pop(self):
        """@return: the next request of the highest priority, or None."""
        if self._later.heap:
            for request in self._later.due(self.clock.seconds()):
                self._push(request)
        while self.curprio is not None:
            queue = self.queues[self.curprio]
            request = queue.pop()
            if len(queue) == 0:
                del self.queues[self.curprio]
                queue.close()
                self.curprio = min(self.queues) if self.queues else None
            if request is not None:
                return request
        return None

    def peek(self):
        """@return: what L{pop} would return now, left in its queue (None when empty)."""
        if self.curprio is None:
            return None
        return self.queues[self.curprio].peek()

    def next_ready_time(self):
        """@return: now while a request is queued, else the earliest C{not_before}
        waiting, else None."""
        return self.clock.seconds() if self.queues else self._later.next_time()

    def close(self):
        """Close every downstream queue. @return: the priority keys that still held
        requests (Scrapy's C{startprios} for the next run); requests held for their
        C{not_before} are put in their queues first."""
        for request in list(self._later.due(float("inf"))):
            self._push(request)
        active = []
        for priority, queue in self.queues.items():
            active.append(priority)
            queue.close()
        self.queues.clear()
        self.curprio = None
        return active

    def __len__(self):
        return sum(len(queue) for queue in self.queues.values()) + len(self._later)


class DownloaderAwarePriorityQueue:
    """
    Scrapy's C{DownloaderAwarePriorityQueue}: a L{ScrapyPriorityQueue} per download slot,
    and L{pop} takes from the slot with the fewest requests downloading now (the
    crawler's L{Slots}), so that one busy host does not get every place.

    @ivar pqueues: C{{slot name: ScrapyPriorityQueue}}.
    """

    @classmethod
    def from_crawler(cls, crawler, downstream_queue_cls, key, startprios=(), **kwargs):
        return cls(crawler, downstream_queue_cls, key, startprios)

    def __init__(self, crawler, downstream_queue_cls, key, slot_startprios=None, **kwargs):
        """
        @param slot_startprios: C{{slot name: priority keys}} of queues to open again.
        @raise ValueError: C{slot_startprios} is not a dict.
        """
        if slot_startprios and not isinstance(slot_startprios, dict):
            raise ValueError(f"DownloaderAwarePriorityQueue accepts slot_startprios as a "
                             f"dict; {slot_startprios.__class__!r} instance is passed. Only "
                             f"a crawl started with a JOBDIR of this queue resumes.")
        self.crawler = crawler
        self.downstream_queue_cls = downstream_queue_cls
        self.key = key
        self.clock = getattr(crawler, "reactor", None) or _global_reactor()
        self.pqueues = {}
        for slot, startprios in (slot_startprios or {}).items():
            self.pqueues[slot] = self.pqfactory(slot, startprios)

    def pqfactory(self, slot, startprios=()):
        safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in slot)
        return ScrapyPriorityQueue(self.crawler, self.downstream_queue_cls,
                                   f"{self.key}/{safe}", startprios)

    @property
    def slots(self):
        """The crawler's L{Slots}, which name each request's slot and count its
        downloads."""
        return _crawler_slots(self.crawler)

    def push(self, request):
        slot = self.slots.key_for(request)
        queue = self.pqueues.get(slot)
        if queue is None:
            queue = self.pqueues[slot] = self.pqfactory(slot)
        queue.push(request)

    def pop(self):
        """@return: a request of the slot with the fewest active downloads, or None."""
        slots = self.slots
        ready = [(slots.active_count(slot), slot) for slot, queue in self.pqueues.items()
                 if queue.queues]
        for _, slot in sorted(ready):
            queue = self.pqueues[slot]
            request = queue.pop()
            if len(queue) == 0:
                del self.pqueues[slot]
            if request is not None:
                return request
        if any(queue._later.heap for queue in self.pqueues.values()):
            for queue in list(self.pqueues.values()):
                request = queue.pop()  # moves its due requests in
                if request is not None:
                    return request
        return None

    def peek(self):
        slots = self.slots
        ready = sorted((slots.active_count(slot), slot)
                       for slot, queue in self.pqueues.items() if queue.queues)
        return self.pqueues[ready[0][1]].peek() if ready else None

    def next_ready_time(self):
        times = [t for t in (queue.next_ready_time() for queue in self.pqueues.values())
                 if t is not None]
        return min(times) if times else None

    def close(self):
        """@return: C{{slot name: priority keys}} that still held requests."""
        active = {slot: queue.close() for slot, queue in self.pqueues.items()}
        self.pqueues.clear()
        return active

    def __len__(self):
        return sum(len(queue) for queue in self.pqueues.values())

    def __contains__(self, slot):
        return slot in self.pqueues


def _crawler_slots(crawler):
    """The crawler's L{Slots} (the downloader's); made, with no limit, for a queue built
    alone (a component's test)."""
    slots = getattr(crawler, "slots", None)
    if slots is None:
        clock = getattr(crawler, "reactor", None) or _global_reactor()
        slots = crawler.slots = Slots(default=LimitRule(parallelism=2**62), clock=clock)
    return slots


def _global_reactor():
    from twisted.internet import reactor
    return reactor

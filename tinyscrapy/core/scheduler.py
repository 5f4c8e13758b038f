"""
L{Scheduler}: the frontier. It remembers what was seen, and hands out what to fetch next.

The interface is the one TinyScrapy's engine calls, with return values that mean
something (as in Scrapy): L{Scheduler.enqueue_request} returns False when it drops a
duplicate; L{Scheduler.next_request} returns None for "nothing ready now", which is not
"finished" -- only L{Scheduler.has_pending_requests} says that.

It is two parts, each named by a setting, as in Scrapy:

    - the duplicate filter (C{DUPEFILTER_CLASS}, L{tinyscrapy.dupefilters.RFPDupeFilter}):
      the fingerprints of every request admitted so far;
    - the priority queue (C{SCHEDULER_PRIORITY_QUEUE},
      L{tinyscrapy.pqueues.SlotAwarePriorityQueue}): the waiting requests, a queue per
      download slot, which hands out only a request whose slot can take one now.
"""

from dataclasses import dataclass

from tinyscrapy.settings import default_settings
from tinyscrapy.utils.misc import build_from_crawler, load_object


class BaseSchedulerMeta(type):
    """A class with Scrapy's scheduler methods counts as a L{BaseScheduler} (duck typing,
    as Scrapy's check does), without inheriting from it."""

    def __instancecheck__(cls, instance):
        return cls.__subclasscheck__(type(instance))

    def __subclasscheck__(cls, subclass):
        return all(callable(getattr(subclass, name, None))
                   for name in ("has_pending_requests", "enqueue_request", "next_request"))


class BaseScheduler(metaclass=BaseSchedulerMeta):
    """
    Scrapy's scheduler interface (C{SCHEDULER}): what the engine asks of a frontier. A
    scheduler written for Scrapy (scrapy-redis's, say) runs: the engine uses only these
    methods, C{len()} for its size when it has one, and C{request_done(request)} and
    C{next_ready_time()} when present.
    """

    @classmethod
    def from_crawler(cls, crawler):
        return cls()

    def open(self, spider):
        """Called once before the crawl; may return a Deferred."""

    def close(self, reason):
        """Called once after the crawl; may return a Deferred."""

    def has_pending_requests(self):
        """@return: True while any request waits."""
        raise NotImplementedError

    def enqueue_request(self, request):
        """@return: True if queued, False if dropped (a duplicate)."""
        raise NotImplementedError

    def next_request(self):
        """@return: the next request to download, or None when none is ready now."""
        raise NotImplementedError


def priority_queue(crawler):
    """
    The priority queue C{SCHEDULER_PRIORITY_QUEUE} names, built as Scrapy's scheduler
    builds its in-memory one: C{from_crawler(crawler, downstream_queue_cls=..., key="")},
    the downstream queue being C{SCHEDULER_MEMORY_QUEUE}.
    """
    settings = crawler.settings
    return build_from_crawler(load_object(settings["SCHEDULER_PRIORITY_QUEUE"]), crawler,
                              downstream_queue_cls=load_object(
                                  settings["SCHEDULER_MEMORY_QUEUE"]),
                              key="")


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


class Scheduler(BaseScheduler):
    """
    An in-memory frontier: a duplicate filter in front of a priority queue.

    @ivar dupefilter: the duplicate filter (C{request_seen(request)}).
    @ivar queue: the priority queue (C{push}, C{pop}, C{next_ready_time}).
    """

    def __init__(self, dupefilter=None, queue=None, *, fingerprint=None, slots=None,
                 clock=None):
        """
        @param dupefilter: the duplicate filter; None: C{DUPEFILTER_CLASS}'s default, with
            C{fingerprint} if given.
        @param queue: the priority queue; None: C{SCHEDULER_PRIORITY_QUEUE}'s default over
            C{slots} (None: no slot ever holds a request back, as unit tests want).
        @param clock: the reactor, or a C{task.Clock}.
        """
        if dupefilter is None:
            dupefilter = load_object(default_settings.DUPEFILTER_CLASS)()
            if fingerprint is not None:
                dupefilter.fingerprint = fingerprint
        if queue is None:
            queue = load_object(default_settings.SCHEDULER_PRIORITY_QUEUE)(slots, clock)
        self.dupefilter = dupefilter
        self.queue = queue
        self.spider = None
        if clock is not None:
            self.clock = clock
        self._pending = 0
        self._enqueued = 0
        self._dequeued = 0
        self._duplicates = 0

    @classmethod
    def from_crawler(cls, crawler):
        """The duplicate filter and the queue the crawler's settings name."""
        settings = crawler.settings
        dupefilter = build_from_crawler(load_object(settings["DUPEFILTER_CLASS"]), crawler)
        return cls(dupefilter, priority_queue(crawler), clock=crawler.reactor)

    # the seen set and the slots, for the frontiers built on this one

    @property
    def seen(self):
        return self.dupefilter.seen

    @seen.setter
    def seen(self, value):
        self.dupefilter.seen = value

    @property
    def fingerprint(self):
        return self.dupefilter.fingerprint

    @property
    def slots(self):
        return self.queue.slots

    @property
    def clock(self):
        """The clock the queue reads (C{meta["not_before"]}, the slots' delays)."""
        return self.queue.clock

    @clock.setter
    def clock(self, clock):
        self.queue.clock = clock

    def open(self, spider):
        """Called once before the crawl; may return a Deferred (remote backends)."""
        self.spider = spider
        return self.dupefilter.open()

    def close(self, reason):
        """Called once after the crawl; may return a Deferred. Nothing persists here."""
        close = getattr(self.queue, "close", None)
        if close is not None:
            close()
        return self.dupefilter.close(reason)

    def enqueue_request(self, request):
        """
        Add C{request} unless the duplicate filter has seen it. A C{dont_filter} request
        skips the check and is not remembered either (as in Scrapy): a later plain request
        for the same URL (the start page asked for again after a login, say) is fetched
        once more.

        @return: True if queued, False if dropped as a duplicate.
        """
        if not request.dont_filter and self.dupefilter.request_seen(request):
            self._duplicates += 1
            self.dupefilter.log(request, self.spider)
            return False
        self._pending += 1
        self._enqueued += 1
        self._queue(request)
        return True

    def _queue(self, request):
        self.queue.push(request)

    def requeue(self, request):
        """
        Queue C{request} again without the duplicate check: a copy of a request this
        scheduler handed out that was never finished (the worker process of C{--workers}
        that held it died). The original is acknowledged as usual (L{request_done}).
        """
        self._pending += 1
        self._queue(request)

    def next_request(self):
        """
        The next request to download, or None when nothing is ready now.

        Synchronous on purpose: the engine asks in a loop. Remote backends prefetch.
        """
        request = self.queue.pop()
        if request is not None:
            self._pending -= 1
            self._dequeued += 1
        return request

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
            new request) can make one ready (or the queue cannot tell).
        """
        next_ready_time = getattr(self.queue, "next_ready_time", None)
        return next_ready_time() if next_ready_time is not None else None

    def has_pending_requests(self):
        """True while any request waits, ready or not."""
        return self._pending > 0

    def size(self):
        """How many requests wait."""
        return self._pending

    __len__ = size

    def statistics(self):
        return SchedulerStatistics(
            pending=self._pending, enqueued=self._enqueued, dequeued=self._dequeued,
            duplicates=self._duplicates, seen=len(getattr(self.dupefilter, "seen", ())),
            hosts=getattr(self.queue, "hosts", 0), later=getattr(self.queue, "later", 0),
        )

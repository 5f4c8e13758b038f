"""
L{Scheduler}: the frontier. It remembers what was seen, and hands out what to fetch next.

The interface is the one TinyScrapy's engine calls, with return values that mean
something (as in Scrapy): L{Scheduler.enqueue_request} returns False when it drops a
duplicate; L{Scheduler.next_request} returns None for "nothing ready now", which is not
"finished" — only L{Scheduler.has_pending_requests} says that.

Requests wait in one FIFO queue per priority; the highest priority is served first.
Other backends (on disk, in Redis) keep the same interface.
"""

from collections import deque
from dataclasses import dataclass

from tinyscrapy.scope.fingerprint import request_fingerprint
from tinyscrapy.scope.seen import FingerprintSet


@dataclass(frozen=True)
class SchedulerStatistics:
    """What the frontier holds, and what it turned away."""

    pending: int
    enqueued: int
    dequeued: int
    duplicates: int
    seen: int


class Scheduler:
    """
    An in-memory frontier with a fingerprint duplicate filter.

    @ivar seen: the fingerprints of every request admitted so far (a L{FingerprintSet}).
    """

    def __init__(self, fingerprint=request_fingerprint):
        self.fingerprint = fingerprint
        self.seen = FingerprintSet()
        self._queues = {}
        self._priorities = []
        self._pending = 0
        self._enqueued = 0
        self._dequeued = 0
        self._duplicates = 0

    @classmethod
    def from_crawler(cls, crawler):
        return cls()

    def open(self, spider):
        """Called once before the crawl; may return a Deferred (remote backends)."""

    def close(self, reason):
        """Called once after the crawl; may return a Deferred. Nothing persists here."""

    def enqueue_request(self, request):
        """
        Add C{request} unless its fingerprint was seen (C{dont_filter} skips the check).

        @return: True if queued, False if dropped as a duplicate.
        """
        fingerprint = self.fingerprint(request)
        if fingerprint in self.seen and not request.dont_filter:
            self._duplicates += 1
            return False
        # a dont_filter request is still remembered: links back to it are duplicates
        self.seen.add(fingerprint)
        request.fingerprint = fingerprint
        self._push(request)
        return True

    def _push(self, request):
        priority = request.priority
        queue = self._queues.get(priority)
        if queue is None:
            queue = self._queues[priority] = deque()
            self._priorities.append(priority)
            self._priorities.sort(reverse=True)
        queue.append(request)
        self._pending += 1
        self._enqueued += 1

    def next_request(self):
        """
        The next request to download, or None when nothing is ready now.

        Synchronous on purpose: the engine asks in a loop. Remote backends prefetch.
        """
        for priority in self._priorities:
            queue = self._queues[priority]
            if queue:
                self._pending -= 1
                self._dequeued += 1
                return queue.popleft()
        return None

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
            duplicates=self._duplicates, seen=len(self.seen),
        )

"""
L{AutoThrottle}: Scrapy's AutoThrottle, per slot, with a back-off on 429 and 503.

Off unless C{AUTOTHROTTLE_ENABLED}. Each slot starts with a delay of
C{AUTOTHROTTLE_START_DELAY} (never less than its least delay: its rule's, or a robots.txt
C{Crawl-delay}), and after each response its delay steps towards the one that keeps
C{AUTOTHROTTLE_TARGET_CONCURRENCY} requests in flight at the observed latency L (from the
send to the end of the body)::

    target = L / AUTOTHROTTLE_TARGET_CONCURRENCY
    delay  = max(target, (delay + target) / 2)
    delay  = within [the slot's least delay, AUTOTHROTTLE_MAX_DELAY]

A response other than 200 never lowers the delay; a 429 or a 503 doubles it (at least to
C{AUTOTHROTTLE_START_DELAY}). A failure (timeout, refused connection) leaves it as it is.

An extension (C{EXTENSIONS_BASE}), as in Scrapy: built when the crawl starts, it sets
itself as the downloader's slots' C{throttle}, which the slots ask for a new slot's first
delay and tell of every download's latency, timed from the send.
"""

import logging

from tinyscrapy.exceptions import NotConfigured, UsageError

logger = logging.getLogger(__name__)

BACK_OFF_STATUSES = (429, 503)


class AutoThrottle:
    """
    Moves each slot's delay after every response (see the module docstring).

    @ivar target_concurrency: requests in flight per slot that the delay aims at.
    @ivar start: the first delay of a slot, in seconds.
    @ivar max_delay: the largest delay it sets (a rule's delay above it still wins).
    """

    def __init__(self, target_concurrency=1.0, start_delay=5.0, max_delay=60.0, debug=False):
        self.target_concurrency = target_concurrency
        self.start = start_delay
        self.max_delay = max_delay
        self.debug = debug

    @classmethod
    def from_settings(cls, settings):
        """
        @return: an L{AutoThrottle}, or None when C{AUTOTHROTTLE_ENABLED} is off.
        @raise UsageError: a target concurrency that is not positive, a negative delay.
        """
        if not settings.getbool("AUTOTHROTTLE_ENABLED"):
            return None
        target = settings.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY", 1.0)
        if target <= 0:
            raise UsageError(f"AUTOTHROTTLE_TARGET_CONCURRENCY={target}: must be above 0")
        start = settings.getfloat("AUTOTHROTTLE_START_DELAY", 5.0)
        max_delay = settings.getfloat("AUTOTHROTTLE_MAX_DELAY", 60.0)
        if start < 0 or max_delay < 0:
            raise UsageError("AUTOTHROTTLE_START_DELAY and AUTOTHROTTLE_MAX_DELAY must be >= 0")
        return cls(target, start, max_delay, settings.getbool("AUTOTHROTTLE_DEBUG"))

    @classmethod
    def from_crawler(cls, crawler):
        """
        Throttle the crawl's slots (C{crawler.slots}, the downloader's).

        @raise NotConfigured: C{AUTOTHROTTLE_ENABLED} is off.
        """
        throttle = cls.from_settings(crawler.settings)
        if throttle is None:
            raise NotConfigured("AUTOTHROTTLE_ENABLED is off")
        slots = getattr(crawler, "slots", None)
        if slots is not None:
            slots.throttle = throttle
        return throttle

    def start_delay(self, floor):
        """The delay a new slot whose least delay is C{floor} starts with."""
        return max(floor, min(self.start, self.max_delay))

    def adjust(self, slot, latency, result):
        """
        Move C{slot}'s delay after a download that took C{latency} seconds.

        @param result: the raw L{tinyscrapy.http.HttpResponse}, or a failure (ignored).
        """
        status = getattr(result, "status", None)
        if status is None:
            return
        old = slot.delay
        if status in BACK_OFF_STATUSES:
            new = min(max(2 * old, self.start), self.max_delay)
        else:
            target = latency / self.target_concurrency
            new = min(max(target, (old + target) / 2), self.max_delay)
            if status != 200 and new <= old:
                return
        new = max(new, slot.floor)
        if new == old:
            return
        slot.set_delay(new)
        if self.debug:
            logger.info("%s: delay %.3f -> %.3f s (latency %.3f s, status %d)",
                        slot.key, old, new, latency, status)

"""
L{AutoThrottle}: Scrapy's AutoThrottle, per slot, with a back-off on 429 and 503.

Off unless C{AUTOTHROTTLE_ENABLED}. Each slot starts with a delay of
C{AUTOTHROTTLE_START_DELAY} (never less than its least delay: C{DOWNLOAD_DELAY}, its
rule's, or a robots.txt C{Crawl-delay}), and after each response its delay steps towards
the one that keeps C{AUTOTHROTTLE_TARGET_CONCURRENCY} requests in flight at the observed
latency L (from the send to the end of the body)::

    target = L / AUTOTHROTTLE_TARGET_CONCURRENCY
    delay  = max(target, (delay + target) / 2)
    delay  = within [the slot's least delay, AUTOTHROTTLE_MAX_DELAY]

A response other than 200 never lowers the delay; a 429 or a 503 doubles it (at least to
C{AUTOTHROTTLE_START_DELAY}). A failure (timeout, refused connection) leaves it as it is,
and so does a request whose C{meta["autothrottle_dont_adjust_delay"]} is True. With
C{AUTOTHROTTLE_DEBUG}, each change is logged as Scrapy logs it::

    slot: example.com | conc: 2 | delay: 1500 ms (-500) | latency: 1000 ms | size:  3086 bytes

An extension (C{EXTENSIONS_BASE}), as in Scrapy; where Scrapy's listens to
C{response_downloaded}, this one is called by the downloader's slots, which it joins as
their C{throttle} when the spider opens: they ask it for a new slot's first delay
(L{AutoThrottle.start_delay}) and tell it of every download's latency, timed from the send
(L{AutoThrottle.adjust}), at the cost of no signal per response. Scrapy's hooks are here
too (L{AutoThrottle._spider_opened}, L{AutoThrottle._response_downloaded},
L{AutoThrottle._adjust_delay}, which a subclass may override to change the policy).
"""

import logging

from tinyscrapy import signals
from tinyscrapy.core.downloader.slots import Slot
from tinyscrapy.exceptions import NotConfigured, UsageError

logger = logging.getLogger(__name__)

BACK_OFF_STATUSES = (429, 503)


class InvalidThrottleSetting(NotConfigured, UsageError):
    """An C{AUTOTHROTTLE_*} value out of range: Scrapy's C{NotConfigured}, and here also a
    usage error that stops the start with one line."""


class AutoThrottle:
    """
    Moves each slot's delay after every response (see the module docstring).

    @ivar target_concurrency: requests in flight per slot that the delay aims at.
    @ivar mindelay: the least delay it sets (C{DOWNLOAD_DELAY}; a slot's own least delay,
        its rule's or robots.txt's, wins when longer).
    @ivar maxdelay: the largest delay it sets (a rule's longer delay still wins).
    @ivar start: the first delay of a slot, in seconds.
    @ivar debug: C{AUTOTHROTTLE_DEBUG}: log every change.
    """

    def __init__(self, crawler):
        """
        @raise NotConfigured: C{AUTOTHROTTLE_ENABLED} is off.
        @raise InvalidThrottleSetting: a target concurrency that is not above 0, or a
            negative delay.
        """
        self.crawler = crawler
        settings = crawler.settings
        if not settings.getbool("AUTOTHROTTLE_ENABLED"):
            raise NotConfigured
        self.debug = settings.getbool("AUTOTHROTTLE_DEBUG")
        self.target_concurrency = settings.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY")
        if self.target_concurrency <= 0.0:
            raise InvalidThrottleSetting(f"AUTOTHROTTLE_TARGET_CONCURRENCY "
                                         f"({self.target_concurrency!r}) must be higher than 0.")
        for name in ("AUTOTHROTTLE_START_DELAY", "AUTOTHROTTLE_MAX_DELAY"):
            if settings.getfloat(name) < 0:
                raise InvalidThrottleSetting(f"{name} ({settings.getfloat(name)!r}) must not "
                                             f"be negative.")
        self.mindelay = self._min_delay()
        self.maxdelay = self._max_delay()
        self.start = self._start_delay()
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        slots = getattr(crawler, "slots", None)
        if slots is not None:
            slots.throttle = self

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def _min_delay(self):
        return self.crawler.settings.getfloat("DOWNLOAD_DELAY")

    def _max_delay(self):
        return self.crawler.settings.getfloat("AUTOTHROTTLE_MAX_DELAY")

    def _start_delay(self):
        return max(self.mindelay, self.crawler.settings.getfloat("AUTOTHROTTLE_START_DELAY"))

    def _spider_opened(self, spider):
        """
        Read the delays again (a spider's C{download_delay} is C{DOWNLOAD_DELAY} for it) and
        give the downloader the first delay of a new slot as Scrapy's downloader holds it
        (C{_delay}); tinyscrapy's slots ask L{start_delay} instead.
        """
        self.mindelay = self._min_delay()
        download_delay = getattr(spider, "download_delay", None)
        if isinstance(download_delay, (int, float)) and not isinstance(download_delay, bool):
            self.mindelay = float(download_delay)
        self.maxdelay = self._max_delay()
        self.start = self._start_delay()
        slots = getattr(self.crawler, "slots", None)  # made after the extensions
        if slots is not None:
            slots.throttle = self
        engine = self.crawler.engine
        if engine is not None:
            engine.downloader._delay = self.start

    # what the slots ask

    def start_delay(self, floor):
        """The delay a new slot whose least delay is C{floor} starts with."""
        return max(floor, self.start)

    def adjust(self, slot, latency, result):
        """
        Move C{slot}'s delay after a download that took C{latency} seconds (the slots'
        hook, called as its place is freed).

        @param slot: a L{tinyscrapy.core.downloader.slots.Slot}.
        @param result: the raw L{tinyscrapy.http.HttpResponse}, or a failure (ignored).
        """
        if getattr(result, "status", None) is None:
            return
        request = getattr(result, "request", None)
        meta = getattr(request, "_meta", None)
        if meta and meta.get("autothrottle_dont_adjust_delay", False) is True:
            return
        old = slot.delay
        self._adjust_delay(slot, latency, result)
        if self.debug:  # on the wire: this one and the others sent, not yet answered
            self._log(slot.key, slot.active - slot.unsent + 1, slot.delay, old, latency,
                      result)

    # Scrapy's hooks

    def _response_downloaded(self, response, request, spider):
        """
        Scrapy's receiver of C{response_downloaded}: the slot named by
        C{request.meta["download_slot"]}, the latency in C{meta["download_latency"]}. (Not
        connected here: the slots call L{adjust}.)
        """
        key, slot = self._get_slot(request, spider)
        latency = request.meta.get("download_latency")
        if (latency is None or slot is None
                or request.meta.get("autothrottle_dont_adjust_delay", False) is True):
            return
        old = slot.delay
        self._adjust_delay(slot, latency, response)
        if self.debug:
            self._log(key, len(slot.transferring), slot.delay, old, latency, response)

    def _get_slot(self, request, spider):
        key = request.meta.get("download_slot")
        if key is None:
            return None, None
        return key, self.crawler.engine.downloader.slots.get(key)  # an existing slot only

    def _adjust_delay(self, slot, latency, response):
        """The policy: set C{slot}'s delay after C{response} came in C{latency} seconds."""
        old = slot.delay
        least = max(self.mindelay, slot.floor) if isinstance(slot, Slot) else self.mindelay
        if response.status in BACK_OFF_STATUSES:
            new = min(max(2 * old, self.start), self.maxdelay)
        else:
            target = latency / self.target_concurrency
            new = max(target, (old + target) / 2.0)
            new = min(max(self.mindelay, new), self.maxdelay)
            # error pages (and redirects) are small and fast: never let them lower it
            if response.status != 200 and new <= old:
                return
        new = max(new, least)
        if new != old:
            _set_delay(slot, new)

    def _log(self, key, concurrency, delay, old, latency, response):
        logger.info("slot: %(slot)s | conc:%(concurrency)2d | delay:%(delay)5d ms "
                    "(%(delaydiff)+d) | latency:%(latency)5d ms | size:%(size)6d bytes",
                    {"slot": key, "concurrency": concurrency, "delay": delay * 1000,
                     "delaydiff": (delay - old) * 1000, "latency": latency * 1000,
                     "size": len(response.body)})


def _set_delay(slot, delay):
    """Give C{slot} a new delay: tinyscrapy's L{Slot} moves its next send with it; a slot
    of another kind (Scrapy's shape) holds it as plain data."""
    if isinstance(slot, Slot):
        slot.set_delay(delay)
    else:
        slot.delay = delay

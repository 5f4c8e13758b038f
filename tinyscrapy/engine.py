"""
L{ExecutionEngine}: TinyScrapy's loop, read top to bottom in the order things happen.

The map of every Deferred hop (reviews check it against the code below):

    1. L{ExecutionEngine.open_spider} opens the scheduler (it may return a Deferred: a
       remote frontier connecting), keeps the spider's start requests as a lazy iterator,
       starts the heartbeat, and schedules the first turn with C{reactor.callLater(0,
       _next_request)}. It returns a Deferred that fires with None once all that is done.
    2. L{ExecutionEngine._next_request} is one turn of the loop. While fewer than C{max}
       requests are in flight it takes the next request from the scheduler (pulling start
       requests only when the scheduler has nothing ready) and starts its download. The
       scheduler only hands out a request whose host slot can take one now; when none can,
       the engine wakes itself with C{reactor.callLater} at the scheduler's
       C{next_ready_time()}. When the frontier is exhausted and nothing is in flight it
       begins closing.
    3. L{ExecutionEngine._download} starts one download: the downloader's Deferred fires
       with an L{HttpResponse}, or a L{Request} that continues this one (redirect, retry),
       or errbacks with the download's failure. Its host slot is free again by then, so
       L{ExecutionEngine._cb_download_finished} schedules a turn at once.
    4. L{ExecutionEngine._cb_downloaded} hands a response to the scraper, whose Deferred
       fires once the callback's output is handled (items through the pipelines, requests
       in the scheduler); L{ExecutionEngine._eb_download_failed} hands a failure to the
       spider's errback the same way.
    5. L{ExecutionEngine._cb_request_done} (C{addBoth}) takes the request out of flight and
       schedules the next turn with C{reactor.callLater(0, ...)}. Wake-ups that come
       together collapse into one pending call; a C{LoopingCall} heartbeat turns the loop
       every C{ENGINE_HEARTBEAT} seconds as well, so a frontier that says "pending" but
       hands nothing out this instant can never stall the crawl.
    6. L{ExecutionEngine._close_spider} runs when nothing is in flight and the engine is
       closing: L{tinyscrapy.closing.close_parts} closes the scraper (pipelines), the
       feeds, scheduler and downloader in turn, each possibly a Deferred, then sends
       C{spider_closed}; its Deferred fires and C{_close} fires with the finish reason.
       L{ExecutionEngine.start} returns C{_close}.
"""

import logging
from dataclasses import dataclass

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.task import LoopingCall

from tinyscrapy import signals
from tinyscrapy.closing import close_parts
from tinyscrapy.errors import DontCloseSpider, DuplicateRequest, IgnoreRequest
from tinyscrapy.http import Request
from tinyscrapy.startrequests import StartRequests

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EngineStatistics:
    """The loop's state."""

    in_flight: int
    max: int
    closing_reason: str


class ExecutionEngine:
    """
    Drives one spider's crawl.

    @ivar max: the most downloads in flight at once (C{CONCURRENT_REQUESTS}).
    @ivar in_flight: the requests being downloaded or scraped now.
    """

    def __init__(self, crawler, reactor, scheduler, downloader, scraper):
        self.crawler = crawler
        self.reactor = reactor
        self.scheduler = scheduler
        self.downloader = downloader
        self.scraper = scraper
        self.max = crawler.settings.getint("CONCURRENT_REQUESTS")
        self.in_flight = set()
        self.acknowledging = True  # False once output was lost (stop_for_error)
        self.spider = None
        self.closing_reason = None
        self._closing_started = False
        self._close = Deferred()
        self._start_requests = None
        self._start_batch = crawler.settings.getint("START_REQUESTS_BATCH")
        self._wakeup = None
        self._ready_call = None
        self._heartbeat = LoopingCall(self._next_request)
        self._heartbeat.clock = reactor
        self._heartbeat_interval = crawler.settings.getfloat("ENGINE_HEARTBEAT")

    # 1. opening

    def open_spider(self, spider, start_requests=()):
        """
        Open the scheduler and begin the loop.

        @return: a Deferred firing with None once the scheduler is open and the first
            turn is scheduled.
        """
        self.spider = spider
        self._start_requests = StartRequests(start_requests, spider, self.crawler.stats)
        d = maybeDeferred(self.scheduler.open, spider)
        d.addCallback(self._cb_scheduler_opened)
        return d

    def _cb_scheduler_opened(self, _):
        self._heartbeat.start(self._heartbeat_interval, now=False)
        self.crawler.signals.send(signals.engine_started, spider=self.spider)
        self._wakeup = self.reactor.callLater(0, self._next_request)

    def start(self):
        """@return: the C{_close} Deferred, fired with the finish reason when the crawl ends."""
        return self._close

    # 2. the loop

    def _next_request(self):
        """One turn: fill the free places with downloads, or notice the crawl is over."""
        self._wakeup = None
        if self.closing_reason is None:
            while self._has_room():
                request = self._next_from_frontier()
                if request is None:
                    self._wake_when_a_slot_is_ready()
                    break
                self._download(request)
            if self._is_exhausted() and self._idle_signal_allows_close():
                self.closing_reason = "finished"
        self.crawler.signals.send(signals.engine_turn, spider=self.spider)
        if self.closing_reason is not None and not self.in_flight:
            self._close_spider()

    def _has_room(self):
        return len(self.in_flight) < self.max

    def _is_exhausted(self):
        return (not self.in_flight and self._start_requests.exhausted
                and not self.scheduler.has_pending_requests())

    def _next_from_frontier(self):
        """The scheduler's next request; when it has none ready, feed it start requests."""
        request = self.scheduler.next_request()
        pulled = 0
        while request is None and not self._start_requests.exhausted:
            if pulled == self._start_batch:  # a million duplicate start URLs: yield now
                self._wake()
                break
            self._start_requests.feed(self.crawl)
            pulled += 1
            request = self.scheduler.next_request()
        return request

    def _idle_signal_allows_close(self):
        """Send C{spider_idle}; a receiver may schedule more work or raise DontCloseSpider."""
        results = self.crawler.signals.send(signals.spider_idle, spider=self.spider)
        kept_open = any(isinstance(result, DontCloseSpider) for _, result in results)
        return not kept_open and not self.scheduler.has_pending_requests()

    def _wake(self):
        """Schedule a turn of the loop, unless one is already pending."""
        if self._wakeup is None and not self._close.called:
            self._wakeup = self.reactor.callLater(0, self._next_request)

    def _wake_when_a_slot_is_ready(self):
        """Nothing can start now: one turn for when the scheduler says one can."""
        next_ready_time = getattr(self.scheduler, "next_ready_time", None)
        at = next_ready_time() if next_ready_time is not None else None
        call = self._ready_call
        if at is None or call is not None and call.active() and call.getTime() <= at:
            return
        if call is not None and call.active():
            call.cancel()
        self._ready_call = self.reactor.callLater(max(0.0, at - self.reactor.seconds()),
                                                  self._wake)

    # admitting new requests

    def crawl(self, request, parent=None):
        """
        Offer C{request} to the frontier: scope rules, then the scheduler's duplicate filter.

        @param parent: the request this one continues (a redirect or a retry): the ledger
            keeps one entry for both.
        @return: True if the request was scheduled.
        """
        ledger = self.crawler.ledger
        if parent is None:
            ledger.open(request)
        try:
            self.scraper.scope.admit(request, self.spider, parent)
            if not self.scheduler.enqueue_request(request):
                raise DuplicateRequest(request.url)
        except IgnoreRequest as decision:
            self.scraper.count_dropped(request, decision)
            return False
        self.crawler.signals.send(signals.request_scheduled, request=request, spider=self.spider)
        self._wake()
        return True

    # 3.-5. one download

    def _download(self, request):
        """Start downloading C{request}; see hops 3 to 5 in the module docstring."""
        self.in_flight.add(request)
        d = self.downloader.fetch(request, self.spider)
        d.addBoth(self._cb_download_finished)
        d.addCallbacks(self._cb_downloaded, self._eb_download_failed,
                       callbackArgs=(request,), errbackArgs=(request,))
        d.addErrback(self.scraper.log_unexpected, request)
        d.addBoth(self._cb_request_done, request)

    def _cb_download_finished(self, result):
        """The transfer is over and its slot free: turn the loop (its place stays taken)."""
        self._wake()
        return result

    def _cb_downloaded(self, result, request):
        """The download fired: a response to scrape, or a request that continues this one."""
        if isinstance(result, Request):  # from a middleware: a redirect, a retry
            self.crawl(result, parent=request)
            return None
        return self.scraper.scrape(result, request, self.spider)

    def _eb_download_failed(self, failure, request):
        """The download failed: the spider's errback gets it, counted and logged once."""
        return self.scraper.scrape_failure(failure, request, self.spider)

    def _cb_request_done(self, _, request):
        """Out of flight and acknowledged (a persistent frontier forgets it only now);
        schedule the next turn (the faithful C{callLater})."""
        self.in_flight.discard(request)
        if self.acknowledging:
            self.scheduler.request_done(request)
        self.crawler.signals.send(signals.request_done, request=request, spider=self.spider)
        self._wake()

    # 6. closing

    def close_spider(self, reason):
        """
        Stop taking new requests; close once the requests in flight are done.

        @return: the C{_close} Deferred.
        """
        if self.closing_reason is None:
            self.closing_reason = reason
            logger.info("closing %s (%s)", self.spider, reason)
        self._wake()
        return self._close

    def stop_for_error(self, reason):
        """
        A part the crawl's results depend on failed (a feed or the frontier cannot be
        written): acknowledge no request from now on, so that a persistent frontier keeps
        them for the next run, and close with C{reason} (an C{_error} reason, which
        replaces one that is not, even while the crawl is closing).
        """
        self.acknowledging = False
        if not (self.closing_reason or "").endswith("_error"):
            logger.info("closing %s (%s)", self.spider, reason)
            self.closing_reason = reason
        if not self._closing_started:
            self._wake()

    def _close_spider(self):
        """Nothing in flight and closing: close each part in turn, then fire C{_close}."""
        self._stop_timers()
        if self._closing_started:
            return
        self._closing_started = True
        self.crawler.ledger.reconcile(self.scheduler.size(), len(self.in_flight))
        d = close_parts(self)
        d.addCallback(self._cb_closed)

    def _stop_timers(self):
        if self._heartbeat.running:
            self._heartbeat.stop()
        for call in (self._wakeup, self._ready_call):
            if call is not None and call.active():
                call.cancel()
        self._wakeup = self._ready_call = None

    def _cb_closed(self, _):
        reason = self.closing_reason  # an error while closing may have changed it
        logger.info("spider %s closed (%s)", self.spider, reason)
        self._close.callback(reason)

    def statistics(self):
        return EngineStatistics(in_flight=len(self.in_flight), max=self.max,
                                closing_reason=self.closing_reason)


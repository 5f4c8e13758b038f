"""
L{ExecutionEngine}: TinyScrapy's loop, read top to bottom in the order things happen.

The map of every Deferred hop of one request (tests/test_docs.py checks each name;
docs/walkthrough.md follows it with you):

    0. L{tinyscrapy.crawler.Crawler.crawl} (C{inlineCallbacks}) opens the pipelines, sends
       C{spider_opened} and waits for its receivers' Deferreds, then
       L{ExecutionEngine.open_spider}, then waits on L{ExecutionEngine.start}: C{_close}.
    1. L{ExecutionEngine.open_spider} opens the scheduler (C{maybeDeferred}: a remote one
       connects), keeps the start requests lazy (L{tinyscrapy.core.startrequests.StartRequests};
       an C{async def start()} that awaits wakes the loop when it yields again), starts
       the heartbeat and wakes the loop; it fires with None.
    2. L{ExecutionEngine._next_request}, one turn, runs from the one C{callLater(0)} that
       L{ExecutionEngine.wake} keeps pending; every wake source (the heartbeat and the
       slot-ready timer too) goes through C{wake}. While fewer than C{max} requests are
       in flight (downloading or scraping) it takes the scheduler's next one, feeding it
       start requests (L{tinyscrapy.core.startrequests.StartRequests.feed}) when none is ready;
       when none may start now, one C{callLater} waits for C{next_ready_time()}.
    3. L{ExecutionEngine._download}: L{tinyscrapy.core.downloader.Downloader.fetch}
       takes the slot; L{tinyscrapy.core.downloader.middleware.DownloaderMiddlewareChain.download}
       (C{async def} under C{ensureDeferred}) runs the middlewares around the slot's gate
       (C{deferLater}) and L{tinyscrapy.core.downloader.handlers.http11.HttpFetcher.fetch}, whose
       Deferred L{tinyscrapy.core.downloader.handlers.http11.Transfer.cb_done} fires with an
       C{HttpResponse} or a failure (canceller:
       L{tinyscrapy.core.downloader.handlers.http11.Transfer.cancel}). It fires with a response or
       a C{Request} that continues this one (redirect, retry), or errbacks; the slot was freed as
       the raw transfer ended (L{tinyscrapy.core.downloader.Downloader._cb_release_slot}, before
       the middlewares' C{process_response}), and L{ExecutionEngine._cb_download_finished} wakes
       the loop.
    4. L{ExecutionEngine._cb_downloaded} returns L{tinyscrapy.core.scraper.Scraper.scrape}'s
       Deferred, fired once the callback's output is handled: requests to
       L{ExecutionEngine.crawl}, items through
       L{tinyscrapy.pipelines.ItemPipelineManager.process_item} (a pipeline's Deferred
       pauses the callback's generator), then a feed line
       (L{tinyscrapy.extensions.feedexport.FeedExporter.item_scraped}). A failure goes to
       L{ExecutionEngine._eb_download_failed} and the spider's errback the same way.
    5. L{ExecutionEngine._cb_request_done} (C{addBoth}): out of flight, acknowledged to
       the scheduler, the loop woken.
    6. L{ExecutionEngine._close_spider}, closing with nothing in flight:
       L{tinyscrapy.core.closing.close_parts} closes pipelines, feeds (before the frontier's
       last acknowledgements), scheduler and downloader, sends
       C{spider_closed}, calls C{spider.closed(reason)}, closes the stats, sends
       C{engine_stopped}, each waited for; C{_close} fires with the reason and
       C{Crawler.crawl} returns it. Once every crawl has,
       L{tinyscrapy.crawler.CrawlerProcess.start}'s C{DeferredList} calls
       L{tinyscrapy.crawler.CrawlerProcess._stop_reactor}.
"""

import logging
from dataclasses import dataclass

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.task import LoopingCall

from tinyscrapy import signals
from tinyscrapy.core.closing import close_parts
from tinyscrapy.core.startrequests import StartRequests
from tinyscrapy.exceptions import CloseSpider, DontCloseSpider, DuplicateRequest, IgnoreRequest
from tinyscrapy.http.request import Request

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

    @ivar max: the most requests in flight at once (C{CONCURRENT_REQUESTS}): a request
        counts from the moment it is taken from the scheduler until its callback's output
        is handled, so C{max} bounds downloads and scraping together, as in TinyScrapy.
    @ivar in_flight: the requests being downloaded or scraped now.
    @ivar wake_causes: None, or (while C{--trace} listens) the set of causes asked of
        L{wake} since the last turn.
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
        self.wake_causes = None  # a set while someone traces the turns (observe/trace.py)
        self._heartbeat = LoopingCall(self._beat)
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
        self._start_requests = StartRequests(start_requests, self)
        d = maybeDeferred(self.scheduler.open, spider)
        d.addCallback(self._cb_scheduler_opened)
        return d

    def _cb_scheduler_opened(self, _):
        self._heartbeat.start(self._heartbeat_interval, now=False)
        self.crawler.signals.send(signals.engine_started, spider=self.spider)
        self.wake("open")

    def start(self):
        """@return: the C{_close} Deferred, fired with the finish reason when the crawl ends."""
        return self._close

    # 2. the loop

    def _next_request(self):
        """One turn: fill the free places with downloads, or notice the crawl is over."""
        self._wakeup = None
        causes = self._take_causes()
        if self.closing_reason is None:
            while self._has_room():
                request = self._next_from_frontier()
                if request is None:
                    self._wake_when_a_slot_is_ready()
                    break
                self._download(request)
            if self._is_exhausted() and self._idle_signal_allows_close():
                self.closing_reason = "finished"
        self.crawler.signals.send(signals.engine_turn, spider=self.spider, causes=causes)
        if self.closing_reason is not None and not self.in_flight:
            self._close_spider()

    def _has_room(self):
        return len(self.in_flight) < self.max

    def _is_exhausted(self):
        return (not self.in_flight and self._start_requests.exhausted
                and not self.scheduler.has_pending_requests())

    def _next_from_frontier(self):
        """The scheduler's next request; when it has none ready, feed it start requests;
        when there is still none, send C{scheduler_empty} (as Scrapy does)."""
        request = self.scheduler.next_request()
        pulled = 0
        while request is None and self._start_requests.ready():
            if pulled == self._start_batch:  # a million duplicate start URLs: yield now
                self.wake("start batch")
                break
            self._start_requests.feed(self.crawl)
            pulled += 1
            request = self.scheduler.next_request()
        if request is None:
            self.crawler.signals.send(signals.scheduler_empty)
        return request

    def _idle_signal_allows_close(self):
        """Send C{spider_idle}; a receiver may schedule more work, raise DontCloseSpider,
        or raise CloseSpider to close with its reason (as in Scrapy)."""
        results = [r for _, r in self.crawler.signals.send(signals.spider_idle,
                                                             spider=self.spider)]
        if any(isinstance(r, DontCloseSpider) for r in results) \
                or self.scheduler.has_pending_requests():
            return False
        reasons = [r.reason for r in results if isinstance(r, CloseSpider)]
        if reasons:
            self.close_spider(reasons[0])
        return not reasons

    def wake(self, cause="frontier"):
        """The engine's public wake hook: schedule a turn unless one is pending. Every wake
        source comes through here (the start requests, a shared frontier's prefetch, the
        timers), so at most one turn is queued. C{cause} names the source for
        C{--trace}."""
        if self.wake_causes is not None:
            self.wake_causes.add(cause)
        if self._wakeup is None and not self._close.called:
            self._wakeup = self.reactor.callLater(0, self._next_request)

    def _beat(self):
        """The heartbeat: forget the download slots gone idle, and turn the loop."""
        sweep = getattr(getattr(self.downloader, "slots", None), "sweep", None)
        if sweep is not None:  # a downloader of the project's own may have none
            sweep()
        self.wake("heartbeat")

    def _take_causes(self):
        """The causes of the turn starting now (None unless traced)."""
        causes = self.wake_causes
        if causes is not None:
            self.wake_causes = set()
        return causes

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
                                                  self.wake, "slot ready")

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
        self.wake("enqueue")
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
        self.wake("download finished")
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
        self.wake("request done")

    # 6. closing

    def close_spider(self, reason):
        """
        Stop taking new requests; close once the requests in flight are done.

        @return: the C{_close} Deferred.
        """
        if self.closing_reason is None:
            self.closing_reason = reason
            logger.info("closing %s (%s)", self.spider, reason)
        self.wake("close")
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
            self.wake("error")

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

"""
L{ExecutionEngine}: TinyScrapy's loop, read top to bottom in the order things happen.

The map of every Deferred hop of one request (tests/test_docs.py checks each name;
docs/walkthrough.md follows it with you):

    0. L{tinyscrapy.crawler.Crawler._crawl} (C{inlineCallbacks}) opens the pipelines, sends
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
       takes the slot; L{tinyscrapy.core.downloader.middleware.DownloaderMiddlewareManager.download}
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
    6. L{ExecutionEngine.close_spider} (or L{ExecutionEngine.stop_for_error}) starts a
       C{callLater} of C{CLOSE_GRACE_PERIOD}: L{ExecutionEngine._cancel_in_flight} then
       cancels each download's Deferred still in flight (its entry ends as cancelled, or
       saved by a persistent frontier) and wakes the loop.
    7. L{ExecutionEngine._close_spider}, closing with nothing in flight:
       L{tinyscrapy.core.closing.close_parts} closes pipelines, feeds (before the frontier's
       last acknowledgements), scheduler and downloader, calls
       C{spider.closed(reason)}, sends C{spider_closed}, closes the stats, sends
       C{engine_stopped}, each waited for (at most C{CLOSE_GRACE_PERIOD} for them all: a
       part still closing then is cancelled); C{_close} fires with the reason and
       C{Crawler.crawl} returns it. Once every crawl has,
       L{tinyscrapy.crawler.CrawlerProcess.start}'s C{DeferredList} calls
       L{tinyscrapy.crawler.CrawlerProcess._stop_reactor}.
"""

import logging
from dataclasses import dataclass

from twisted.internet.defer import Deferred, maybeDeferred, succeed
from twisted.internet.task import LoopingCall

from tinyscrapy import signals
from tinyscrapy.core.closing import close_parts
from tinyscrapy.core.startrequests import StartRequests, start_of
from tinyscrapy.exceptions import CloseSpider, DontCloseSpider, DuplicateRequest, IgnoreRequest
from tinyscrapy.http.request import Request
from tinyscrapy.utils.defer import maybe_deferred_to_future

logger = logging.getLogger(__name__)

_CANCELLED = object()  # what a request cancelled at close has in place of its Deferred


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
    @ivar in_flight: the requests being downloaded or scraped now, each with the Deferred of
        its download (cancelled when the close's grace period is over).
    @ivar wake_causes: None, or (while C{--trace} listens) the set of causes asked of
        L{wake} since the last turn.
    @ivar closes_spider: whether the close calls the spider's C{closed(reason)} (False
        in a worker of C{--workers}: the parent calls it, once for the whole crawl).
    """

    #: How often an idle engine looks for work, in seconds, unless C{ENGINE_HEARTBEAT} is
    #: set: Scrapy's name (its test suite shortens it on the class).
    _SLOT_HEARTBEAT_INTERVAL = 5.0

    def __init__(self, crawler, spider_closed_callback=None, *, reactor=None, scheduler=None,
                 downloader=None, scraper=None):
        """
        @param spider_closed_callback: called with the spider once the crawl has closed
            (Scrapy's argument), or None.
        @param reactor: the reactor or a C{task.Clock}; None: the crawler's.
        @param scheduler: the frontier; None: the one the crawler's settings name.
        @param downloader: None: C{DOWNLOADER}'s, built for the crawler.
        @param scraper: None: a L{tinyscrapy.core.scraper.Scraper} for the crawler.
        """
        self.crawler = crawler
        self.reactor = reactor if reactor is not None else crawler.reactor
        self.downloader, self.scheduler, self.scraper = _parts(crawler, downloader,
                                                               scheduler, scraper)
        self.scraper.engine = self
        self._spider_closed_callback = spider_closed_callback
        self._request_done = getattr(self.scheduler, "request_done", None)
        self.max = crawler.settings.getint("CONCURRENT_REQUESTS")
        self.paused = False
        self._close_if_idle = True
        self.in_flight = {}
        self.acknowledging = True  # False once output was lost (stop_for_error)
        self.closes_spider = True
        self.spider = None
        self.closing_reason = None
        self._closing_started = False
        self._opened = False  # True once the scheduler is open and the loop runs
        self._close = Deferred()
        self._start_requests = None
        self._start_batch = crawler.settings.getint("START_REQUESTS_BATCH")
        self._wakeup = None
        self._ready_call = None
        self.wake_causes = None  # a set while someone traces the turns (tinyscrapy.trace)
        self._heartbeat = LoopingCall(self._beat)
        self._heartbeat.clock = self.reactor
        self._heartbeat_interval = (
            crawler.settings.getfloat("ENGINE_HEARTBEAT")
            if (crawler.settings.getpriority("ENGINE_HEARTBEAT") or 0) > 0
            else self._SLOT_HEARTBEAT_INTERVAL)
        self.grace_period = crawler.settings.getfloat("CLOSE_GRACE_PERIOD")
        self._grace_call = None

    # 1. opening

    def open_spider(self, spider, start_requests=()):
        """
        Open the scheduler and begin the loop.

        @return: a Deferred firing with None once the scheduler is open and the first
            turn is scheduled.
        """
        self.spider = spider
        self._start_requests = StartRequests(start_requests, self)
        open_scheduler = getattr(self.scheduler, "open", None)  # optional in Scrapy's interface
        d = maybeDeferred(open_scheduler, spider) if open_scheduler else succeed(None)
        d.addCallback(self._cb_scheduler_opened)
        return d

    def _cb_scheduler_opened(self, _):
        self._opened = True
        logger.info("Spider opened: %s", self.spider)
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
            if self._is_exhausted() and self._close_if_idle \
                    and self._idle_signal_allows_close():
                self.closing_reason = "finished"
        self.crawler.signals.send(signals.engine_turn, spider=self.spider, causes=causes)
        if self.closing_reason is not None and not self.in_flight:
            self._close_spider()

    def _has_room(self):
        return len(self.in_flight) < self.max and not self.paused

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
        self.in_flight[request] = None  # its place, taken before the fetch signals it
        d = self.in_flight[request] = self.downloader.fetch(request, self.spider)
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
        if request not in self.in_flight:  # cancelled at close, and came back all the same
            return None
        if isinstance(result, Request):  # from a middleware: a redirect, a retry
            self.crawl(result, parent=request)
            return None
        return self.scraper.scrape(result, request, self.spider)

    def _eb_download_failed(self, failure, request):
        """The download failed: the spider's errback gets it, counted and logged once (but
        not a download cancelled at close: counted there)."""
        if request not in self.in_flight:
            return None
        return self.scraper.scrape_failure(failure, request, self.spider)

    def _cb_request_done(self, _, request):
        """Out of flight and acknowledged (a persistent frontier forgets it only now);
        schedule the next turn (the faithful C{callLater}). A request cancelled at close is
        not acknowledged: a persistent frontier keeps it for the next run."""
        if self.in_flight.pop(request, _CANCELLED) is _CANCELLED:
            return
        if self.acknowledging and self._request_done is not None:
            self._request_done(request)
        self.crawler.signals.send(signals.request_done, request=request, spider=self.spider)
        self.wake("request done")

    # 6. closing

    def close_spider(self, spider=None, reason=None):
        """
        Stop taking new requests; close once the requests in flight are done, or once
        C{CLOSE_GRACE_PERIOD} is over (L{_cancel_in_flight}).

        Called as C{close_spider(reason)}, or in Scrapy's form C{close_spider(spider,
        reason="cancelled")} (which Scrapy 2.19 deprecates, with a warning, for
        L{close_spider_async}).

        @return: the C{_close} Deferred.
        """
        reason = _close_reason(spider, reason)
        if not self._opened and getattr(self.crawler, "crawling", False):
            self.crawler.stop(reason)  # still opening: it closes once open (bounded too)
            return self._close
        if self.closing_reason is None:
            self.closing_reason = reason
            logger.info("Closing spider (%s): %s", reason, self.spider)
        self._start_grace_period()
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
            logger.info("Closing spider (%s): %s", reason, self.spider)
            self.closing_reason = reason
        if not self._closing_started:
            self._start_grace_period()
            self.wake("error")

    def _start_grace_period(self):
        """The close began: what is still in flight C{CLOSE_GRACE_PERIOD} seconds from now
        is cancelled then (0: it is waited for however long it takes)."""
        if self._grace_call is None and self.grace_period > 0 and not self._closing_started:
            self._grace_call = self.reactor.callLater(self.grace_period,
                                                      self._cancel_in_flight)

    def _cancel_in_flight(self):
        """
        The grace period is over: each request still in flight leaves it now (its ledger
        entry ends as C{cancelled}, or C{saved} when a persistent frontier keeps it, since
        it is never acknowledged), then its download's Deferred is cancelled, which
        cancels what it waits for (the transfer, a middleware's or a callback's Deferred,
        a pipeline's); whatever the chain does after that is ignored. Then the close goes
        on.
        """
        self._grace_call = None
        if self.in_flight:
            shown = ", ".join(repr(request) for request in list(self.in_flight)[:5])
            logger.warning("closing %s: %d request(s) still in flight %g s after the close "
                           "began (CLOSE_GRACE_PERIOD), cancelled: %s%s", self.spider,
                           len(self.in_flight), self.grace_period, shown,
                           ", ..." if len(self.in_flight) > 5 else "")
        for request, d in list(self.in_flight.items()):
            del self.in_flight[request]
            self._count_cancelled(request)
            if d is not None:  # None: its fetch raised before it had a Deferred
                d.cancel()
        self.wake("grace period over")

    def _count_cancelled(self, request):
        """C{request}, cancelled at the end of the grace period, ends in the ledger as
        C{cancelled} (or C{saved}, when a persistent frontier keeps it)."""
        self.crawler.ledger.cancel(request)

    def _close_spider(self):
        """Nothing in flight and closing: close each part in turn, then fire C{_close}."""
        self._stop_timers()
        if self._closing_started:
            return
        self._closing_started = True
        if self._start_requests is not None:
            self._start_requests.close()
        self.crawler.ledger.reconcile(pending_count(self.scheduler), len(self.in_flight))
        d = close_parts(self, self.grace_period)
        d.addCallback(self._cb_closed)

    def _stop_timers(self):
        if self._heartbeat.running:
            self._heartbeat.stop()
        for call in (self._wakeup, self._ready_call, self._grace_call):
            if call is not None and call.active():
                call.cancel()
        self._wakeup = self._ready_call = self._grace_call = None

    def _cb_closed(self, _):
        reason = self.closing_reason  # an error while closing may have changed it
        logger.info("Spider closed (%s): %s", reason, self.spider)
        if self._spider_closed_callback is not None:
            self._spider_closed_callback(self.spider)
        self._close.callback(reason)

    def statistics(self):
        return EngineStatistics(in_flight=len(self.in_flight), max=self.max,
                                closing_reason=self.closing_reason)

    # Scrapy's API: what scripts, extensions and plugins call, over the chapter's steps

    @property
    def running(self):
        """True from L{open_spider} until the crawl has closed."""
        return self.spider is not None and not self._close.called

    @property
    def slot(self):
        """Scrapy's engine slot (C{engine.slot.scheduler}, C{engine.slot.inprogress})."""
        return _Slot(self)

    def pause(self):
        """Start no new download until L{unpause}; those in flight go on."""
        self.paused = True

    def unpause(self):
        self.paused = False
        self.wake("unpause")

    def spider_is_idle(self):
        """True when nothing is in flight, no start request is left and nothing waits."""
        if self.spider is None:
            raise RuntimeError("Engine slot not assigned")
        return self._is_exhausted()

    def needs_backout(self):
        """True when no more requests can start now (the engine's C{max} is reached, it
        is paused, closing or not running)."""
        return not self.running or self.closing_reason is not None or not self._has_room()

    def download(self, request):
        """
        Download C{request} outside the scheduler (a media pipeline's file): the scope
        rules, then the downloader middlewares, so it takes a place in its per-host slot
        (waiting for one), its delays, retries, robots.txt and stats, but no place under
        C{max} (so a callback waiting on it cannot deadlock the crawl). What continues it
        (a redirect, a retry after its wait) is downloaded in turn. It is an entry of its
        own in the ledger.

        @return: a Deferred firing with the response; it errbacks with the failure (an
            L{IgnoreRequest} when a rule or a middleware refused it). Cancelling it cancels
            the transfer, or the wait before a retry.
        @raise RuntimeError: no spider is open.
        """
        if self.spider is None:
            raise RuntimeError(f"No open spider to crawl: {request}")
        from tinyscrapy.core.downloader import fetch_through
        self.crawler.ledger.open(request)
        d = fetch_through(self.downloader, request, self.spider, self.reactor, self._admit)
        d.addCallbacks(self._cb_outside_done, self._eb_outside_failed,
                       callbackArgs=(request,), errbackArgs=(request,))
        return d

    def _admit(self, request, parent):
        self.scraper.scope.admit(request, self.spider, parent)

    def _cb_outside_done(self, response, request):
        if getattr(response, "request", None) is None:
            response.request = request
        self.crawler.ledger.close(request, "handled")
        self.scraper.received(response, request, self.spider)
        return response

    def _eb_outside_failed(self, failure, request):
        """Counted in the ledger (a refusal as dropped); the caller logs it."""
        if failure.check(IgnoreRequest):
            self.scraper.count_dropped(request, failure.value)
        else:
            self.crawler.ledger.close(request, "failed", failure.type.__name__)
        return failure

    async def download_async(self, request):
        """L{download} as a coroutine. @return: the response."""
        return await maybe_deferred_to_future(self.download(request))

    async def close_spider_async(self, *, reason="cancelled"):
        """L{close_spider} as a coroutine: returns once the crawl has closed."""
        await maybe_deferred_to_future(self.close_spider(reason))

    async def open_spider_async(self, *, close_if_idle=True):
        """Open the crawler's spider, with its start requests (through the spider
        middlewares); C{close_if_idle=False} keeps the crawl open when it runs out of
        requests (until L{close_spider})."""
        spider = self.crawler.spider
        self._close_if_idle = close_if_idle
        await maybe_deferred_to_future(
            self.open_spider(spider, start_of(spider, self.scraper.spidermw)))

    async def start_async(self):
        """Returns once the crawl has closed (the C{_close} Deferred, awaited)."""
        await maybe_deferred_to_future(self._close)

    async def stop_async(self):
        """Close the crawl gracefully (reason C{shutdown}); returns once it has closed."""
        if self.spider is None:
            raise RuntimeError("Engine not running")
        await maybe_deferred_to_future(self.close_spider("shutdown"))

    async def close_async(self, *, reason="shutdown"):
        """Close the crawl if it runs, else the downloader."""
        if self.spider is not None and not self._close.called:
            await maybe_deferred_to_future(self.close_spider(reason))
        elif self.spider is None:
            await maybe_deferred_to_future(self.downloader.close())


def _close_reason(spider, reason):
    """The reason of C{close_spider(reason)} or of Scrapy's C{close_spider(spider,
    reason)} (which warns, as Scrapy 2.19 deprecates it)."""
    if isinstance(spider, str):
        return spider
    if spider is not None:
        import warnings

        from tinyscrapy.exceptions import ScrapyDeprecationWarning
        warnings.warn("ExecutionEngine.close_spider(spider, reason) is deprecated, use "
                      "close_spider_async(reason=...) instead", ScrapyDeprecationWarning,
                      stacklevel=3)
    return reason if reason is not None else "cancelled"


class _Slot:
    """Scrapy's engine slot, as plugins read it: the scheduler, and what is in flight."""

    def __init__(self, engine):
        self.scheduler = engine.scheduler
        self.inprogress = engine.in_flight
        self.closing = engine._close if engine.closing_reason is not None else None


def _parts(crawler, downloader, scheduler, scraper):
    """The engine's downloader, scheduler and scraper: those given, else the ones the
    crawler's settings name (C{DOWNLOADER}, C{SCHEDULER} or the frontier C{JOBDIR} and
    C{SCHEDULER_URL} ask for)."""
    from tinyscrapy.utils.misc import build, build_from_crawler, load_object
    if downloader is None:
        downloader = getattr(crawler, "downloader", None) or build_from_crawler(
            load_object(crawler.settings["DOWNLOADER"]), crawler)
        crawler.downloader, crawler.slots = downloader, downloader.slots
    if scheduler is None:
        scheduler = build(crawler.scheduler_class(), crawler)
    if scraper is None:
        from tinyscrapy.core.scraper import Scraper
        scraper = Scraper(crawler)
    return downloader, scheduler, scraper


def pending_count(scheduler):
    """
    How many requests a scheduler holds, asked the way it can answer: C{len()}, then
    Scrapy 1.x's C{size()}.

    @return: the count, or None for a scheduler of Scrapy's bare interface, which need
        not count.
    """
    for ask in (getattr(scheduler, "__len__", None), getattr(scheduler, "size", None)):
        if ask is not None:
            return ask()
    return None

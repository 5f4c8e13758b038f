"""
L{Downloader}: the downloader middleware chain around the download handlers
(L{tinyscrapy.core.downloader.handlers}: treq for http and https), with its counters.

The engine calls L{Downloader.fetch} and gets back one Deferred per request. The
downloader holds the per-host L{Slots} (the scheduler consults them): a request takes a
place in its slot for the whole of L{Downloader.fetch}, waits at the slot's gate just
before its transfer if a delay is not over, and frees the place when the transfer ends.
"""

from dataclasses import dataclass

from twisted.internet.defer import fail
from twisted.internet.task import deferLater
from twisted.python.failure import Failure

from tinyscrapy import signals
from tinyscrapy.core.downloader.handlers import DownloadHandlers
from tinyscrapy.core.downloader.middleware import DownloaderMiddlewareManager
from tinyscrapy.core.downloader.slots import Slot, Slots  # noqa: F401 - Scrapy's Slot here
from tinyscrapy.exceptions import scrapy_download_error
from tinyscrapy.http.request import Request

MAX_HOPS = 30  # redirects and retries of one request fetched through; the middlewares' own
#                limits come first


@dataclass(frozen=True)
class DownloaderStatistics:
    """What the downloader did so far."""

    active: int
    requests: int
    responses: int
    failures: int
    bytes: int
    decoded_bytes: int


class Downloader:
    """
    Downloads requests through the middlewares.

    @ivar middleware: the L{DownloaderMiddlewareManager}.
    @ivar handlers: the L{DownloadHandlers}, by scheme.
    @ivar fetcher: the http handler (treq and its pool), whose byte counts the statistics
        report.
    @ivar slots: the per-host L{Slots}.
    """

    def __init__(self, crawler, reactor=None):
        self.stats = crawler.stats
        self.signals = crawler.signals
        self.reactor = reactor if reactor is not None else crawler.reactor
        self.slots = crawler.slots = Slots.from_crawler(crawler, self.reactor)
        # the handlers time politeness delays from the moment a request goes out on the
        # wire, through crawler.slots
        self.handlers = DownloadHandlers(crawler)
        self.fetcher = self.handlers.handler_for("http")
        self.middleware = DownloaderMiddlewareManager.from_crawler(crawler)
        self.active = 0
        self._requests = self._responses = self._failures = 0

    def fetch(self, request, spider):
        """
        Download C{request} through the middleware chain.

        @return: a Deferred firing with an L{HttpResponse}, or with a L{Request} that
            continues this one (a redirect or a retry); it errbacks with the failure.
        """
        self.slots.acquire(request)
        self.signals.send(signals.request_reached_downloader, request=request, spider=spider)
        d = self.middleware.download(request, spider, self._fetch_counted)
        d.addBoth(self._cb_left, request, spider)
        return d

    def _cb_left(self, result, request, spider):
        """
        The request left the downloader: free its place in its slot (a second call does
        nothing), then send C{request_left_downloader} with the result (a response, a
        request that continues this one, or the failure), which passes on unchanged.
        """
        self.slots.release(request, result)
        self.signals.send(signals.request_left_downloader, request=request, result=result,
                          spider=spider)
        return result

    def _fetch_counted(self, request, spider):
        """
        One real transfer, counted in and out (the middlewares see it as C{fetch}). It
        waits (C{callLater}) while its slot's delay is not over or the slot is full, which
        only happens to requests that did not come through the scheduler (robots.txt,
        L{tinyscrapy.core.engine.ExecutionEngine.download}), and frees the slot as it
        ends, with the raw response for AutoThrottle.
        """
        wait = self.slots.gate(request)
        if wait > 0:
            return deferLater(self.reactor, wait, self._fetch_counted, request, spider)
        self.active += 1
        self._requests += 1
        self.stats.inc_value("downloader/request_count")
        d = self.handlers.download_request(request, spider)
        d.addBoth(self._cb_release_slot, request, spider)
        return d

    def _cb_release_slot(self, result, request, spider):
        """Free C{request}'s place in its slot as the transfer ends (with the raw response,
        for AutoThrottle), then count the response or the failure."""
        self.slots.release(request, result)
        if isinstance(result, Failure):
            return self._eb_failure(result)
        return self._cb_response(result, spider)

    def _cb_response(self, response, spider):
        self.active -= 1
        self._responses += 1
        stats = self.stats
        stats.inc_value("downloader/response_count")
        stats.inc_value(f"downloader/response_status_count/{response.status}")
        if self.signals.listened(signals.response_downloaded):
            self.signals.send(signals.response_downloaded, response=response,
                              request=response.request, spider=spider)
        return response

    def _eb_failure(self, failure):
        """Count the failure, as Scrapy 2.19's exception (L{scrapy_download_error}:
        C{CannotResolveHostError} for twisted's C{DNSLookupError}, ...), and pass it on."""
        converted = scrapy_download_error(failure.value)
        if converted is not failure.value:
            failure = Failure(converted)
        self.active -= 1
        self._failures += 1
        self.stats.inc_value("downloader/exception_count")
        self.stats.inc_value(
            f"downloader/exception_type_count/{failure.type.__module__}.{failure.type.__name__}")
        return failure

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def close(self):
        """Close every handler (the pooled connections). @return: a Deferred."""
        return self.handlers.close()

    def statistics(self):
        fetcher = self.fetcher
        return DownloaderStatistics(self.active, self._requests, self._responses,
                                    self._failures, getattr(fetcher, "wire_bytes", 0),
                                    getattr(fetcher, "decoded_bytes", 0))


def fetch_through(downloader, request, spider, clock, admit=None, parent=None, hops=0):
    """
    Download C{request} outside the scheduler, then each request that continues it (a
    redirect; a retry, once its C{meta["not_before"]} wait is over), up to L{MAX_HOPS}.

    @param downloader: anything with the L{Downloader.fetch} of a L{Downloader}.
    @param clock: the reactor the waits are scheduled on.
    @param admit: called as C{admit(request, parent)} before each download (the scope
        rules); what it raises is the failure.
    @return: a Deferred firing with the response; it errbacks with the failure (a
        C{RuntimeError} after L{MAX_HOPS} continuations). Cancelling it cancels the
        transfer, or the wait before a retry.
    """
    try:
        if admit is not None:
            admit(request, parent)
        d = downloader.fetch(request, spider)
    except Exception:
        return fail()
    d.addCallback(_cb_fetched_through, request, downloader, spider, clock, admit, hops)
    return d


def _cb_fetched_through(result, request, downloader, spider, clock, admit, hops):
    """A response, or the request that continues C{request}: fetched after its wait."""
    if not isinstance(result, Request):
        return result
    if hops >= MAX_HOPS:
        raise RuntimeError(f"gave up after {hops} redirects or retries: {result.url}")
    wait = max(0.0, (result.meta.get("not_before") or 0) - clock.seconds())
    return deferLater(clock, wait, fetch_through, downloader, result, spider, clock, admit,
                      request, hops + 1)

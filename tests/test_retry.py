"""
Retries: what the server sees (how many attempts, and when), and that a waiting retry holds
no engine place: other requests keep flowing while it waits.
"""

from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

from twisted.internet import defer, error, reactor
from twisted.trial import unittest
from twisted.web.client import ResponseFailed, ResponseNeverReceived

from tinyscrapy import Request, Spider
from tinyscrapy.core.scheduler import Scheduler
from tinyscrapy.downloadermiddlewares.retry import (
    RetryMiddleware,
    exception_classes,
    retry_after_seconds,
)
from tinyscrapy.exceptions import (
    CannotResolveHostError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeout,
    DownloadTimeoutError,
    HttpError,
    ResponseDataLossError,
    TunnelError,
    UsageError,
)
from tinyscrapy.http import HttpResponse
from tinyscrapy.settings import Settings
from tinyscrapy.statscollectors import StatsCollector

from .helpers import crawl, make_engine, serve
from .recording import Recorder
from .servers import (
    Delay,
    Drop,
    Page,
    Sequence,
    StallAfterHeaders,
    Status,
    _Leaf,
    _respond,
)

FAST = {"RETRY_BACKOFF_BASE": 0.05}

RETRYING = Spider("retry")


class RetryAfter(_Leaf):
    """A 503 with a C{Retry-After} header."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def render(self, request):
        return _respond(request, b"busy", 503, headers={"retry-after": self.value})


def arrivals(server, path):
    return [r.time for r in server.requests if r.path == path]


class RetryCrawlTests(unittest.TestCase):
    """Whole crawls against servers that fail."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_500_then_200(self):
        """A 500 is retried after the backoff; the 200 reaches the callback."""
        start = self.server.add("/flaky", Sequence([Status(500), Page("<p>ok</p>")]))
        crawler = yield crawl(Recorder, {"RETRY_BACKOFF_BASE": 0.2}, start_urls=[start])
        self.assertEqual([r.status for r in crawler.spider.responses], [200])
        first, second = arrivals(self.server, "/flaky")
        self.assertGreaterEqual(second - first, 0.2)
        stats = crawler.stats
        self.assertEqual(stats.get_value("retry/count"), 1)
        self.assertEqual(stats.get_value("retry/reason_count/500 Internal Server Error"), 1)
        self.assertEqual(stats.get_value("ledger/handled"), 1)
        self.assertEqual(stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_gives_up_after_retry_times_with_growing_waits(self):
        """Always 503: 1 + RETRY_TIMES attempts, waits doubling; the errback gets it."""
        start = self.server.add("/down", Status(503))
        crawler = yield crawl(Recorder, {"RETRY_BACKOFF_BASE": 0.1}, start_urls=[start])
        times = arrivals(self.server, "/down")
        self.assertEqual(len(times), 3)
        self.assertGreaterEqual(times[1] - times[0], 0.1)
        self.assertGreaterEqual(times[2] - times[1], 0.2)
        failure, = crawler.spider.failures
        self.assertTrue(failure.check(HttpError))
        self.assertEqual(failure.value.response.status, 503)
        stats = crawler.stats
        self.assertEqual(stats.get_value("retry/count"), 2)
        self.assertEqual(stats.get_value("retry/max_reached"), 1)
        self.assertEqual(stats.get_value("ledger/failed/HttpError"), 1)

    @defer.inlineCallbacks
    def test_retry_after_is_honoured(self):
        """503 with Retry-After: 1: the server sees the retry at least a second later."""
        start = self.server.add("/busy", Sequence([RetryAfter("1"), Page("<p>ok</p>")]))
        crawler = yield crawl(Recorder, FAST, start_urls=[start])
        first, second = arrivals(self.server, "/busy")
        self.assertGreaterEqual(second - first, 1.0)
        self.assertEqual(len(crawler.spider.responses), 1)

    @defer.inlineCallbacks
    def test_retry_after_over_the_cap_is_not_retried(self):
        """A Retry-After longer than RETRY_AFTER_MAX: no early retry, the errback gets it."""
        start = self.server.add("/later", RetryAfter("3600"))
        crawler = yield crawl(Recorder, FAST, start_urls=[start])
        self.assertEqual(self.server.hits["/later"], 1)
        self.assertTrue(crawler.spider.failures[0].check(HttpError))
        self.assertEqual(crawler.stats.get_value("retry/retry_after_too_long"), 1)

    @defer.inlineCallbacks
    def test_waiting_retry_leaves_other_requests_flowing(self):
        """CONCURRENT_REQUESTS=1: three pages are fetched while a retry waits its second."""
        server = self.server
        flaky = server.add("/flaky", Sequence([RetryAfter("1"), Page("<p>ok</p>")]))
        others = [server.add(f"/p{i}", Delay(0.05, b"<p>page</p>")) for i in range(3)]
        crawler = yield crawl(Recorder, {**FAST, "CONCURRENT_REQUESTS": 1},
                              start_urls=[flaky, *others])
        first, retried = arrivals(server, "/flaky")
        for i in range(3):
            arrived, = arrivals(server, f"/p{i}")
            self.assertTrue(first < arrived < retried, f"/p{i} waited for the retry")
        self.assertEqual(server.max_in_flight, 1)
        self.assertEqual(len(crawler.spider.responses), 4)

    @defer.inlineCallbacks
    def test_dropped_connection_is_retried(self):
        """A connection closed without an answer is retried on a new one."""
        start = self.server.add("/drop", Sequence([Drop(), Page("<p>ok</p>")]))
        crawler = yield crawl(Recorder, FAST, start_urls=[start])
        self.assertEqual(len(crawler.spider.responses), 1)
        self.assertEqual(self.server.hits["/drop"], 2)
        reasons = [k for k in crawler.stats.get_stats() if k.startswith("retry/reason_count/")]
        # Scrapy 2.19's DownloadFailedError, as the downloader raises twisted's failure
        self.assertEqual(reasons, ["retry/reason_count/"
                                   "tinyscrapy.exceptions.DownloadFailedError"])

    @defer.inlineCallbacks
    def test_timeouts_are_retried(self):
        """Downloads slower than DOWNLOAD_TIMEOUT, before or after the headers, are retried."""
        slow = self.server.add("/slow", Sequence([Delay(5, b"late"), Page("<p>ok</p>")]))
        stall = self.server.add("/stall", Sequence([StallAfterHeaders(), Page("<p>ok</p>")]))
        crawler = yield crawl(Recorder, {**FAST, "DOWNLOAD_TIMEOUT": 0.3},
                              start_urls=[slow, stall])
        self.assertEqual(len(crawler.spider.responses), 2)
        self.assertEqual((self.server.hits["/slow"], self.server.hits["/stall"]), (2, 2))
        # before the headers or after them, the fetcher's timeout is a DownloadTimeout
        name = f"{DownloadTimeout.__module__}.DownloadTimeout"
        self.assertEqual(crawler.stats.get_value(f"retry/reason_count/{name}"), 2)
        self.assertEqual(crawler.stats.get_value("retry/count"), 2)

    @defer.inlineCallbacks
    def test_refused_connection_reaches_the_errback_after_retries(self):
        """A port nobody listens on: three attempts, then the errback and the stats."""
        port = reactor.listenTCP(0, self.server._factory, interface="127.0.0.1")
        number = port.getHost().port
        yield port.stopListening()
        crawler = yield crawl(Recorder, FAST, start_urls=[f"http://127.0.0.1:{number}/"])
        failure, = crawler.spider.failures
        self.assertTrue(failure.check(DownloadConnectionRefusedError))
        self.assertTrue(failure.check(error.ConnectionRefusedError))  # twisted's, too
        stats = crawler.stats
        self.assertEqual(stats.get_value("downloader/exception_count"), 3)
        self.assertEqual(stats.get_value("retry/max_reached"), 1)
        self.assertEqual(stats.get_value("ledger/failed/DownloadConnectionRefusedError"), 1)

    @defer.inlineCallbacks
    def test_retry_exceptions_narrowed(self):
        """RETRY_EXCEPTIONS without ResponseNeverReceived: a dropped connection is tried
        once and reaches the errback."""
        start = self.server.add("/drop", Sequence([Drop(), Page("<p>ok</p>")]))
        crawler = yield crawl(Recorder, {**FAST, "RETRY_EXCEPTIONS": [
            "tinyscrapy.exceptions.DownloadTimeout"]}, start_urls=[start])
        self.assertEqual(self.server.hits["/drop"], 1)
        failure, = crawler.spider.failures
        self.assertTrue(failure.check(DownloadFailedError))
        self.assertIsInstance(failure.value.reasons[0].value, error.ConnectionLost)
        self.assertIsNone(crawler.stats.get_value("retry/count"))

    @defer.inlineCallbacks
    def test_dont_retry_and_disabled(self):
        """meta dont_retry, or RETRY_ENABLED=False: one attempt only."""
        self.server.add("/down", Status(503))

        def make(spider):
            return [Request(self.server.url("/down"), meta={"dont_retry": True},
                            errback=spider.errback)]

        yield crawl(Recorder, FAST, make=make)
        yield crawl(Recorder, {"RETRY_ENABLED": False}, start_urls=[self.server.url("/down")])
        self.assertEqual(self.server.hits["/down"], 2)


class RetryUnitTests(unittest.TestCase):
    """The middleware alone, on a fake clock."""

    def setUp(self):
        from twisted.internet.task import Clock
        self.clock = Clock()
        self.clock.advance(1000)
        self.stats = StatsCollector()
        self.mw = RetryMiddleware(Settings(), self.stats, self.clock)

    def test_backoff_doubles_up_to_the_cap(self):
        """1, 2, 4, ... seconds, never more than RETRY_BACKOFF_MAX."""
        self.assertEqual([self.mw.backoff(n) for n in (1, 2, 3)], [1.0, 2.0, 4.0])
        self.assertEqual(self.mw.backoff(30), 60.0)

    def test_retry_request(self):
        """The retry is dont_filter, counted in meta, lower priority, not before now + wait."""
        request = Request("http://a.example/", priority=5)
        response = HttpResponse(request.url, 502, {}, b"", request)
        retry = self.mw.process_response(request, response, RETRYING)
        self.assertTrue(retry.dont_filter)
        self.assertEqual(retry.meta["retry_times"], 1)
        self.assertEqual(retry.priority, 4)
        self.assertEqual(retry.meta["not_before"], 1001.0)
        second = self.mw.process_response(retry, response, RETRYING)
        self.assertEqual(second.meta["not_before"], 1002.0)
        self.assertIs(self.mw.process_response(second, response, RETRYING), response)

    def test_max_retry_times_in_meta(self):
        """meta max_retry_times replaces RETRY_TIMES."""
        request = Request("http://a.example/", meta={"max_retry_times": 0})
        self.assertIsNone(self.mw.process_exception(request, error.ConnectionLost(), RETRYING))

    def test_not_retried(self):
        """404 and a non-network exception are not retried."""
        request = Request("http://a.example/")
        response = HttpResponse(request.url, 404, {}, b"", request)
        self.assertIs(self.mw.process_response(request, response, RETRYING), response)
        self.assertIsNone(self.mw.process_exception(request, KeyError("x"), RETRYING))

    def test_retry_exceptions_default(self):
        """The default RETRY_EXCEPTIONS, dotted paths, imports as Scrapy 2.19's classes, then
        the classes retried before the setting existed."""
        self.assertEqual(exception_classes(Settings()), (
            CannotResolveHostError, DownloadConnectionRefusedError, DownloadFailedError,
            DownloadTimeoutError, ResponseDataLossError, defer.TimeoutError, TimeoutError,
            DownloadTimeout, error.DNSLookupError, error.ConnectError, error.ConnectionLost,
            error.ConnectionDone, ResponseFailed, ResponseNeverReceived, TunnelError, OSError))
        self.assertEqual(self.mw.exceptions, exception_classes(Settings()))

    def test_retry_exceptions_setting(self):
        """Paths and classes are accepted; only what they name is retried."""
        settings = Settings({"RETRY_EXCEPTIONS": ["builtins.KeyError", LookupError]})
        self.assertEqual(exception_classes(settings), (KeyError, LookupError))
        mw = RetryMiddleware(settings, self.stats, self.clock)
        request = Request("http://a.example/")
        self.assertEqual(mw.process_exception(request, KeyError("x"), RETRYING).url,
                         request.url)
        self.assertIsNone(mw.process_exception(request, error.ConnectionLost(), RETRYING))
        text = Settings({"RETRY_EXCEPTIONS": "builtins.KeyError, builtins.OSError"})
        self.assertEqual(exception_classes(text), (KeyError, OSError))

    def test_retry_exceptions_bad_entries(self):
        """An entry that does not import, or is no exception class, is a UsageError
        naming the setting."""
        for entry, message in (("nosuch.Error", "cannot import 'nosuch.Error'"),
                               ("os.sep", "'os.sep' is not an exception class")):
            settings = Settings({"RETRY_EXCEPTIONS": [entry]})
            e = self.assertRaises(UsageError, exception_classes, settings)
            self.assertIn("RETRY_EXCEPTIONS", str(e))
            self.assertIn(message, str(e))

    def test_retry_after_forms(self):
        """Seconds, an HTTP date (read against the Date header), or garbage."""
        self.assertEqual(retry_after_seconds(" 120 "), 120.0)
        now = datetime(2024, 1, 1, tzinfo=timezone.utc)
        later = format_datetime(now + timedelta(seconds=30), usegmt=True)
        self.assertEqual(retry_after_seconds(later, format_datetime(now, usegmt=True)), 30.0)
        self.assertEqual(retry_after_seconds("Mon, 01 Jan 2001 00:00:00 GMT"), 0.0)
        self.assertIsNone(retry_after_seconds("soon"))


class WaitingRequestTests(unittest.TestCase):
    """A request with meta not_before waits in the scheduler, not in the engine."""

    def test_scheduler_holds_it_until_due(self):
        """next_request skips it until its time; next_ready_time says when."""
        from twisted.internet.task import Clock
        clock = Clock()
        scheduler = Scheduler(clock=clock)
        scheduler.enqueue_request(Request("http://a.example/later", meta={"not_before": 5.0}))
        scheduler.enqueue_request(Request("http://a.example/now"))
        self.assertEqual(scheduler.next_request().url, "http://a.example/now")
        self.assertIsNone(scheduler.next_request())
        self.assertTrue(scheduler.has_pending_requests())
        self.assertEqual(scheduler.next_ready_time(), 5.0)
        clock.advance(5)
        self.assertEqual(scheduler.next_request().url, "http://a.example/later")
        self.assertIsNone(scheduler.next_ready_time())
        self.assertFalse(scheduler.has_pending_requests())

    def test_engine_fetches_others_then_wakes_when_due(self):
        """With one engine place, a waiting retry lets the next request start at once."""

        class Two(Spider):
            name = "two"
            start_urls = ["http://a.example/1", "http://a.example/2"]

            def parse(self, response):
                return None

        scheduler = Scheduler()
        engine, clock, downloader, crawler = make_engine(
            Two, {"CONCURRENT_REQUESTS": 1}, scheduler=scheduler)
        scheduler.clock = clock
        clock.advance(0)
        request, d = downloader.pending.pop(0)
        d.callback(request.replace(dont_filter=True, meta={"not_before": clock.seconds() + 10}))
        clock.advance(0)
        self.assertEqual(downloader.fetched, ["http://a.example/1", "http://a.example/2"])
        downloader.answer()
        clock.advance(9)
        self.assertEqual(len(downloader.fetched), 2)
        clock.advance(1)
        self.assertEqual(downloader.fetched[-1], "http://a.example/1")
        downloader.answer()
        clock.advance(0)
        self.assertEqual(crawler.stats.get_value("ledger/handled"), 2)

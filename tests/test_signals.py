"""
Signals: the bus itself, and the order in which a real crawl sends them.
"""

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import CloseSpider, DropItem, Request, Spider, signals
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import DontCloseSpider, StopDownload
from tinyscrapy.settings import Settings
from tinyscrapy.signalmanager import SignalBus

from .helpers import serve
from .logs import capture_logs

ALL = ("engine_started", "request_scheduled", "request_dropped", "response_received",
       "item_scraped", "item_dropped", "spider_error", "spider_idle", "spider_closed")


class BusTests(unittest.TestCase):
    """SignalBus on its own."""

    def test_receivers_in_connection_order_with_keywords(self):
        """Receivers run in the order they connected, with the signal's keywords."""
        bus = SignalBus()
        calls = []
        bus.connect(lambda item, spider: calls.append(("first", item)), signals.item_scraped)
        bus.connect(lambda **kwargs: calls.append(("second", kwargs)), signals.item_scraped)
        results = bus.send(signals.item_scraped, item=1, spider=None)
        self.assertEqual(calls, [("first", 1), ("second", {"item": 1, "spider": None})])
        self.assertEqual(len(results), 2)

    def test_nobody_listening(self):
        """A signal without receivers answers an empty list; listened() is False."""
        bus = SignalBus()
        self.assertFalse(bus.listened(signals.request_dropped))
        self.assertEqual(bus.send(signals.request_dropped, request=None), [])

    def test_raising_receiver_logged_others_still_called(self):
        """A receiver that raises is logged; the next one still runs."""
        logs = capture_logs(self, "tinyscrapy.signalmanager")
        bus = SignalBus()
        calls = []

        def broken(**kwargs):
            raise ValueError("receiver bug")

        bus.connect(broken, signals.spider_idle)
        bus.connect(lambda **kwargs: calls.append("ok"), signals.spider_idle)
        results = bus.send(signals.spider_idle, spider=None)
        self.assertEqual(calls, ["ok"])
        self.assertIsInstance(results[0][1], ValueError)
        self.assertIn("signal spider_idle: receiver", logs.text())

    def test_dont_close_spider_is_returned_not_logged(self):
        """DontCloseSpider comes back as a result, without an error in the log."""
        logs = capture_logs(self, "tinyscrapy.signalmanager")
        bus = SignalBus()

        def keep_open(**kwargs):
            raise DontCloseSpider()

        bus.connect(keep_open, signals.spider_idle)
        self.assertIsInstance(bus.send(signals.spider_idle, spider=None)[0][1], DontCloseSpider)
        self.assertEqual(logs.messages(), [])

    def test_disconnect(self):
        """A disconnected receiver is not called again."""
        bus = SignalBus()
        calls = []

        def receiver(**kwargs):
            calls.append(1)

        bus.connect(receiver, signals.item_scraped)
        bus.disconnect(receiver, signals.item_scraped)
        bus.send(signals.item_scraped, item=None)
        self.assertEqual(calls, [])

    def test_send_deferred_waits_and_swallows_failures(self):
        """send_deferred fires once every receiver's Deferred has, with each receiver's
        result; a failure is logged and its exception is the result."""
        logs = capture_logs(self, "tinyscrapy.signalmanager")
        bus = SignalBus()
        later = defer.Deferred()
        bus.connect(lambda **kwargs: later, signals.spider_closed)
        bus.connect(lambda **kwargs: defer.fail(ValueError("x")), signals.spider_closed)
        d = bus.send_deferred(signals.spider_closed, spider=None, reason="finished")
        self.assertNoResult(d)
        later.callback("done")
        results = self.successResultOf(d)
        self.assertEqual([type(value) for _, value in results], [str, ValueError])
        self.assertIn("signal spider_closed: a receiver failed", logs.text())


class Recorder(Spider):
    """Connects to every signal and records (signal, detail) in C{events}."""

    name = "recorder"
    events = None

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.events = []
        for name in ALL:
            crawler.signals.connect(spider._receiver(name), getattr(signals, name))
        return spider

    def _receiver(self, name):
        def receive(**kwargs):
            detail = None
            if "request" in kwargs:
                detail = kwargs["request"].url.rsplit("/", 1)[-1]
            if "item" in kwargs:
                detail = kwargs["item"]["page"]
            self.events.append((name, detail))
        return receive

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        page = response.url.rsplit("/", 1)[-1]
        yield {"page": page}
        if page == "bad":
            raise ValueError("bad page")
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


class DropBad:
    """Drops the item of the page /bad."""

    def process_item(self, item, spider):
        if item["page"] == "bad":
            raise DropItem("bad")
        return item


class CrawlOrderTests(unittest.TestCase):
    """Signals of a real crawl arrive in the order things happen."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_signals_in_order(self):
        """engine_started first; per request: scheduled, response, item; a duplicate is
        dropped; an item dropped; a callback error; idle then closed, last."""
        start = self.server.add_page("/start", links=["/bad", "/start"])
        self.server.add_page("/bad")
        capture_logs(self, "tinyscrapy")
        crawler = Crawler(Recorder, Settings({"ITEM_PIPELINES": {DropBad: 1}}), reactor)
        yield crawler.crawl(start=start)
        events = crawler.spider.events
        self.assertEqual(events, [
            ("engine_started", None),
            ("request_scheduled", "start"),
            ("response_received", "start"),
            ("item_scraped", "start"),
            ("request_scheduled", "bad"),
            ("request_dropped", "start"),
            ("response_received", "bad"),
            ("item_dropped", "bad"),
            ("spider_error", None),
            ("spider_idle", None),
            ("spider_closed", None),
        ])


class ReceiverArgumentsTests(unittest.TestCase):
    """Receivers get only the arguments they accept, as with Scrapy's dispatcher."""

    def test_receiver_takes_fewer_arguments_than_sent(self):
        """def spider_closed(self, spider) works although reason is sent too."""
        seen = []

        class Extension:
            def spider_closed(self, spider):
                seen.append(spider)

        bus = SignalBus()
        bus.connect(Extension().spider_closed, signal=signals.spider_closed)
        results = bus.send(signals.spider_closed, spider="s", reason="finished")
        self.assertEqual(seen, ["s"])
        self.assertIsNone(results[0][1])

    def test_signal_and_sender_on_request(self):
        """A receiver naming signal and sender gets the signal and the crawler."""
        crawler = object()
        bus = SignalBus(crawler)
        seen = []
        bus.connect(lambda signal, sender, item: seen.append((signal, sender, item)),
                    signals.item_scraped)
        bus.send(signals.item_scraped, item=1, response=None, spider=None)
        self.assertEqual(seen, [(signals.item_scraped, crawler, 1)])

    def test_async_receiver_awaited_by_send_deferred(self):
        """An async def receiver of a deferred signal is waited for."""
        bus = SignalBus()
        later = defer.Deferred()

        async def spider_opened(spider):
            return await later

        bus.connect(spider_opened, signals.spider_opened)
        d = bus.send_deferred(signals.spider_opened, spider=None)
        self.assertNoResult(d)
        later.callback("ready")
        self.assertEqual(self.successResultOf(d)[0][1], "ready")

    def test_disconnect_one_and_all(self):
        """A disconnected receiver is not called; disconnect_all forgets them all."""
        bus = SignalBus()
        calls = []

        def receiver():
            calls.append(1)

        bus.connect(receiver, signals.engine_stopped)
        bus.disconnect(receiver, signals.engine_stopped)
        bus.send(signals.engine_stopped)
        bus.connect(receiver, signals.engine_stopped)
        bus.disconnect_all(signals.engine_stopped)
        bus.send(signals.engine_stopped)
        self.assertEqual(calls, [])


class Lifecycle(Spider):
    """Records the moments Scrapy's users connect to, each with the arguments it names."""

    name = "lifecycle"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.events = []
        bus = crawler.signals
        bus.connect(spider.spider_opened, signals.spider_opened)
        bus.connect(spider.engine_started, signals.engine_started)
        bus.connect(spider.reached, signals.request_reached_downloader)
        bus.connect(spider.downloaded, signals.response_downloaded)
        bus.connect(spider.item_error, signals.item_error)
        bus.connect(spider.spider_closed, signals.spider_closed)
        bus.connect(spider.engine_stopped, signals.engine_stopped)
        return spider

    def spider_opened(self, spider):
        self.events.append(("spider_opened", spider is self))

    def engine_started(self):
        self.events.append(("engine_started",))

    def reached(self, request):
        self.events.append(("request_reached_downloader", request.url == self.start))

    def downloaded(self, response, request):
        self.events.append(("response_downloaded", response.request is request))

    def item_error(self, item, failure, response):
        self.events.append(("item_error", item["n"], failure.type.__name__,
                            response.url == self.start))

    def spider_closed(self, spider):
        self.events.append(("spider_closed",))

    def closed(self, reason):
        self.events.append(("closed", reason))

    def engine_stopped(self):
        self.events.append(("engine_stopped",))

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        yield {"n": 1}


class BrokenPipeline:
    def process_item(self, item):
        raise ValueError("pipeline bug")


class LifecycleTests(unittest.TestCase):
    """The signals Scrapy users connect to arrive, at Scrapy's moments."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_lifecycle_signals_in_order(self):
        """spider_opened, engine_started, the download's signals, item_error, the
        spider's closed() before spider_closed (as in Scrapy), then engine_stopped."""
        start = self.server.add_page("/")
        capture_logs(self, "tinyscrapy")
        crawler = Crawler(Lifecycle, Settings({"ITEM_PIPELINES": {BrokenPipeline: 1}}),
                          reactor)
        yield crawler.crawl(start=start)
        self.assertEqual(crawler.spider.events, [
            ("spider_opened", True),
            ("engine_started",),
            ("request_reached_downloader", True),
            ("response_downloaded", True),
            ("item_error", 1, "ValueError", True),
            ("closed", "finished"),
            ("spider_closed",),
            ("engine_stopped",),
        ])


class Stopper(Spider):
    """Stops every download from a headers_received or bytes_received receiver."""

    name = "stopper"
    signal = "headers_received"
    fail = False

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.seen = []
        spider.failures = []
        crawler.signals.connect(spider.stop, getattr(signals, cls.signal))
        return spider

    def stop(self, request, spider, **kwargs):
        self.seen.append(sorted(kwargs))
        raise StopDownload(fail=self.fail)

    def start_requests(self):
        yield Request(self.start, errback=self.failed)

    def parse(self, response):
        self.seen.append((response.body, response.flags))

    def failed(self, failure):
        self.failures.append(failure)


class StopDownloadTests(unittest.TestCase):
    """A receiver of headers_received or bytes_received raises StopDownload."""

    def setUp(self):
        self.server = serve(self)
        self.body = b"x" * 300000
        self.start = self.server.add_page("/big", body=self.body)

    @defer.inlineCallbacks
    def test_stop_at_headers_gives_an_empty_response(self):
        """fail=False at the headers: the callback gets the response with no body."""
        crawler = Crawler(Stopper, Settings({"LOG_LEVEL": "WARNING"}), reactor)
        yield crawler.crawl(start=self.start)
        self.assertEqual(crawler.spider.seen, [["body_length", "headers"],
                                               (b"", ["download_stopped"])])

    @defer.inlineCallbacks
    def test_stop_at_first_bytes_fails_with_the_partial_response(self):
        """fail=True on the first chunk: the errback gets StopDownload with the part
        received so far."""
        stopper = type("FailingStopper", (Stopper,), {"signal": "bytes_received",
                                                      "fail": True})
        capture_logs(self, "tinyscrapy")
        crawler = Crawler(stopper, Settings(), reactor)
        yield crawler.crawl(start=self.start)
        self.assertEqual(crawler.spider.seen, [["data"]])
        [failure] = crawler.spider.failures
        partial = failure.value.response.body
        self.assertTrue(failure.check(StopDownload))
        self.assertTrue(0 < len(partial) < len(self.body))
        self.assertIn(b"xxxx", partial)


class IdleCloser(Spider):
    """Closes with its own reason from spider_idle, once its one page is done."""

    name = "idlecloser"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.idle, signals.spider_idle)
        return spider

    def idle(self):
        raise CloseSpider("nothing_left")

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        yield {"url": response.url}


class IdleCloseTests(unittest.TestCase):
    """A spider_idle receiver raising CloseSpider names the finish reason."""

    @defer.inlineCallbacks
    def test_close_spider_from_idle(self):
        """The crawl ends with CloseSpider's reason, and nothing is logged as an error."""
        server = serve(self)
        logs = capture_logs(self, "tinyscrapy.signalmanager")
        crawler = Crawler(IdleCloser, Settings({"LOG_LEVEL": "WARNING"}), reactor)
        reason = yield crawler.crawl(start=server.add_page("/"))
        self.assertEqual(reason, "nothing_left")
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 1)
        self.assertNotIn("raised", logs.text())


class Refiller(Spider):
    """Schedules a second page from scheduler_empty, once."""

    name = "refiller"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.crawler_ = crawler
        spider.refilled = False
        crawler.signals.connect(spider.refill, signals.scheduler_empty)
        return spider

    def refill(self):
        if not self.refilled:
            self.refilled = True
            self.crawler_.engine.crawl(Request(self.second))

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        yield {"url": response.url}


class SchedulerEmptyTests(unittest.TestCase):
    """scheduler_empty lets a receiver feed the frontier, as Scrapy's lazy start does."""

    @defer.inlineCallbacks
    def test_receiver_schedules_more(self):
        """A request scheduled from scheduler_empty is crawled before the crawl ends."""
        server = serve(self)
        crawler = Crawler(Refiller, Settings({"LOG_LEVEL": "WARNING"}), reactor)
        yield crawler.crawl(start=server.add_page("/"), second=server.add_page("/2"))
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 2)
        self.assertEqual(server.hits["/2"], 1)


class SlowExporter(Spider):
    """An item_scraped receiver that answers with a Deferred, fired by the test."""

    name = "slowexporter"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.pending = []
        crawler.signals.connect(spider.item_scraped, signals.item_scraped)
        return spider

    def item_scraped(self, item):
        d = defer.Deferred()
        self.pending.append(d)
        return d

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        yield {"n": 1}
        yield {"n": 2}


class WaitedReceiverTests(unittest.TestCase):
    """item_scraped receivers that return Deferreds are waited for, as in Scrapy."""

    def test_next_item_waits_for_the_receiver(self):
        """The page's next item is not routed, nor the crawl closed, until it fires."""
        from .helpers import make_engine
        engine, clock, downloader, crawler = make_engine(SlowExporter, start="http://a/")
        clock.advance(0)
        downloader.answer()
        spider = crawler.spider
        self.assertEqual(len(spider.pending), 1)
        spider.pending[0].callback(None)
        self.assertEqual(len(spider.pending), 2)
        clock.advance(0)
        self.assertFalse(engine.start().called)
        spider.pending[1].callback(None)
        for _ in range(5):
            clock.advance(1)
        self.assertTrue(engine.start().called)

"""
Signals: the bus itself, and the order in which a real crawl sends them.
"""

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import DropItem, Request, Spider, signals
from tinyscrapy.crawler import Crawler
from tinyscrapy.errors import DontCloseSpider
from tinyscrapy.settings import Settings
from tinyscrapy.signals import SignalBus

from .logs import capture_logs
from .servers import TestServer

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
        logs = capture_logs(self, "tinyscrapy.signals")
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
        logs = capture_logs(self, "tinyscrapy.signals")
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
        logs = capture_logs(self, "tinyscrapy.signals")
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
        self.server = TestServer().start()
        self.addCleanup(self.server.stop)

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

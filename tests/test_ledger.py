"""
The request ledger: every request ends in exactly one terminal state, and a request that
went missing is a logged error.
"""

import dataclasses
import logging

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.core.scheduler import Scheduler
from tinyscrapy.ledger import RequestLedger
from tinyscrapy.statscollectors import StatsCollector

from .helpers import crawl, serve
from .logs import capture_logs
from .servers import Drop, Status


class LinkSpider(Spider):
    """From C{start}, follows every link; one item per page."""

    name = "links"
    allowed_domains = ["127.0.0.1"]

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


class Leaky(Scheduler):
    """A broken frontier: it says it queued /lost, and keeps nothing."""

    def enqueue_request(self, request):
        if request.url.endswith("/lost"):
            return True
        return super().enqueue_request(request)


class LedgerCrawlTests(unittest.TestCase):
    """The books of real crawls."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_balances_with_duplicates_failures_and_drops(self):
        """Each request ends once: handled, duplicate, dropped (by rule), failed (by
        cause); the books balance."""
        self.start = self.server.add_page("/", links=[
            "/a", "/a#again", "/b", "/500", "/drop", "mailto:someone@example.com",
            "http://elsewhere.example/", "http://127.0.0.1:1/refused"])
        self.server.add_page("/a")
        self.server.add_page("/b", links=["/", "/a"])
        self.server.add("/500", Status(500))
        self.server.add("/drop", Drop())
        logs = capture_logs(self, "tinyscrapy.ledger")
        crawler = yield crawl(LinkSpider, start=self.start)
        stats = crawler.stats
        ledger = crawler.ledger.statistics()
        self.assertEqual(ledger, type(ledger)(opened=11, handled=3, duplicate=3, dropped=2,
                                              failed=3, cancelled=0, open=0))
        self.assertEqual(stats.get_value("ledger/dropped/InvalidUrl"), 1)
        self.assertEqual(stats.get_value("ledger/dropped/OffsiteRequest"), 1)
        self.assertEqual(stats.get_value("ledger/failed/HttpError"), 1)
        self.assertEqual(stats.get_value("ledger/failed/DownloadConnectionRefusedError"), 1)
        self.assertEqual(stats.get_value("ledger/failed/DownloadFailedError"), 1)
        self.assertEqual(stats.get_value("ledger/missing"), 0)
        self.assertEqual(logs.messages(logging.ERROR), [])

    @defer.inlineCallbacks
    def test_lost_request_is_reported(self):
        """A frontier that loses a request: the crawl ends, and the loss is a logged error
        with its count, and in the stats."""
        start = self.server.add_page("/", links=["/a", "/lost"])
        self.server.add_page("/a")
        self.server.add_page("/lost")
        logs = capture_logs(self, "tinyscrapy.ledger")
        crawler = yield crawl(LinkSpider, {"SCHEDULER": Leaky}, start=start)
        self.assertEqual(self.server.hits["/lost"], 0)
        self.assertEqual(crawler.stats.get_value("ledger/missing"), 1)
        errors = logs.messages(logging.ERROR)
        self.assertEqual(len(errors), 1)
        self.assertIn("1 request(s) went missing (3 opened; ended: handled 2", errors[0])

    @defer.inlineCallbacks
    def test_requests_waiting_at_an_early_close_are_cancelled(self):
        """Closing early (CLOSESPIDER_PAGECOUNT) ends the waiting requests as cancelled."""
        links = [f"/{i}" for i in range(5)]
        start = self.server.add_page("/", links=links)
        for path in links:
            self.server.add_page(path)
        crawler = yield crawl(LinkSpider, {"CLOSESPIDER_PAGECOUNT": 1}, start=start)
        stats = crawler.stats
        self.assertEqual(stats.get_value("finish_reason"), "closespider_pagecount")
        self.assertEqual(stats.get_value("ledger/handled"), 1)
        self.assertEqual(stats.get_value("ledger/cancelled"), 5)
        self.assertEqual(stats.get_value("ledger/missing"), 0)


class LedgerUnitTests(unittest.TestCase):
    """The ledger's arithmetic on its own."""

    def test_ended_twice_is_reported(self):
        """An entry closed twice is an error too, not a silent balance."""
        logs = capture_logs(self, "tinyscrapy.ledger")
        ledger = RequestLedger(StatsCollector())
        request = Request("http://127.0.0.1/")
        ledger.open(request)
        ledger.close(request, "handled")
        ledger.close(request, "failed", "Oops")
        self.assertEqual(ledger.reconcile(pending=0), -1)
        self.assertIn("1 request(s) ended twice", logs.text())

    def test_pending_at_close_cancelled(self):
        """Requests still in the frontier at close count as cancelled."""
        stats = StatsCollector()
        ledger = RequestLedger(stats)
        for i in range(3):
            ledger.open(Request(f"http://127.0.0.1/{i}"))
        ledger.close(None, "handled")
        self.assertEqual(ledger.statistics().open, 2)
        self.assertEqual(ledger.reconcile(pending=2), 0)
        self.assertEqual(stats.get_value("ledger/cancelled"), 2)

    def test_unknown_state_refused(self):
        """A state that is not terminal is a programming error."""
        ledger = RequestLedger(StatsCollector())
        self.assertRaises(ValueError, ledger.close, None, "lost")

    def test_statistics_are_frozen(self):
        """statistics() is a frozen record."""
        record = RequestLedger(StatsCollector()).statistics()
        self.assertRaises(dataclasses.FrozenInstanceError, setattr, record, "opened", 9)

"""
Close conditions: CLOSESPIDER_PAGECOUNT, _ITEMCOUNT, _TIMEOUT, _ERRORCOUNT and CloseSpider
raised from a callback. Each stops the crawl cleanly: feeds closed, ledger balanced, the
finish reason saying why.
"""

import json
import os

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import CloseSpider, Spider
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import NotConfigured
from tinyscrapy.extensions.closespider import CloseSpider as CloseSpiderExtension
from tinyscrapy.settings import Settings

from .helpers import crawl, serve
from .logs import capture_logs
from .servers import Delay, Drop
from .test_scope import LinkSpider


class CloseSpiderTests(unittest.TestCase):
    """Each close condition against a site larger than the limit."""

    def setUp(self):
        self.server = serve(self)
        self.pages = [f"/p{i}" for i in range(30)]
        self.start = self.server.add_page("/", links=self.pages)
        for path in self.pages:
            self.server.add_page(path)

    def _check_clean(self, crawler, reason):
        stats = crawler.stats
        self.assertEqual(stats.get_value("finish_reason"), reason)
        self.assertEqual(stats.get_value("ledger/missing"), 0)
        self.assertGreater(stats.get_value("ledger/cancelled"), 0)

    @defer.inlineCallbacks
    def test_pagecount(self):
        """CLOSESPIDER_PAGECOUNT=5 with one download at a time: five pages."""
        settings = {"CLOSESPIDER_PAGECOUNT": 5, "CONCURRENT_REQUESTS": 1}
        crawler = yield crawl(LinkSpider, settings, start_urls=[self.start])
        self.assertEqual(sum(self.server.hits.values()), 5)
        self.assertEqual(crawler.stats.get_value("response_received_count"), 5)
        self._check_clean(crawler, "closespider_pagecount")

    @defer.inlineCallbacks
    def test_pagecount_lets_in_flight_downloads_finish(self):
        """With four in flight, the pages already asked for are still scraped."""
        settings = {"CLOSESPIDER_PAGECOUNT": 5, "CONCURRENT_REQUESTS": 4}
        crawler = yield crawl(LinkSpider, settings, start_urls=[self.start])
        received = crawler.stats.get_value("response_received_count")
        self.assertGreaterEqual(received, 5)
        self.assertLessEqual(received, 5 + 3)
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), received)
        self._check_clean(crawler, "closespider_pagecount")

    @defer.inlineCallbacks
    def test_itemcount_with_feed_closed(self):
        """CLOSESPIDER_ITEMCOUNT=3: the crawl stops and the JSON feed is complete."""
        path = os.path.abspath(self.mktemp()) + ".json"
        settings = {"CLOSESPIDER_ITEMCOUNT": 3, "CONCURRENT_REQUESTS": 1,
                    "FEEDS": {path: {"format": "json", "overwrite": True}}}
        crawler = yield crawl(LinkSpider, settings, start_urls=[self.start])
        with open(path, encoding="utf-8") as f:
            items = json.load(f)
        self.assertEqual(len(items), 3)
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 3)
        self._check_clean(crawler, "closespider_itemcount")

    @defer.inlineCallbacks
    def test_timeout(self):
        """CLOSESPIDER_TIMEOUT=0.5 on slow pages: closed by the timer, not the site."""
        for path in self.pages:
            self.server.add(path, Delay(0.2, b"<html>slow</html>"))
        settings = {"CLOSESPIDER_TIMEOUT": 0.5, "CONCURRENT_REQUESTS": 2}
        crawler = yield crawl(LinkSpider, settings, start_urls=[self.start])
        self.assertLess(sum(self.server.hits.values()), 31)
        self._check_clean(crawler, "closespider_timeout")

    @defer.inlineCallbacks
    def test_errorcount_download_failures(self):
        """CLOSESPIDER_ERRORCOUNT=3 counts downloads that failed for good."""
        for path in self.pages:
            self.server.add(path, Drop())
        settings = {"CLOSESPIDER_ERRORCOUNT": 3, "CONCURRENT_REQUESTS": 1}
        crawler = yield crawl(LinkSpider, settings, start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("ledger/failed"), 3)
        self._check_clean(crawler, "closespider_errorcount")

    @defer.inlineCallbacks
    def test_errorcount_spider_exceptions(self):
        """CLOSESPIDER_ERRORCOUNT=2 counts exceptions raised by callbacks."""

        class Broken(LinkSpider):
            def parse(self, response):
                if response.url.endswith("/"):
                    return super().parse(response)
                raise KeyError(response.url)

        settings = {"CLOSESPIDER_ERRORCOUNT": 2, "CONCURRENT_REQUESTS": 1}
        crawler = yield crawl(Broken, settings, start_urls=[self.start])
        self.flushLoggedErrors(KeyError)
        self.assertEqual(crawler.stats.get_value("spider_exceptions/KeyError"), 2)
        self._check_clean(crawler, "closespider_errorcount")

    @defer.inlineCallbacks
    def test_close_spider_raised_from_a_callback(self):
        """CloseSpider("enough") stops the crawl with that reason."""

        class Enough(LinkSpider):
            def parse(self, response):
                if response.url.endswith("/p2"):
                    raise CloseSpider("enough")
                return super().parse(response)

        crawler = yield crawl(Enough, {"CONCURRENT_REQUESTS": 1}, start_urls=[self.start])
        self.assertEqual(self.server.hits["/p3"], 0)
        self._check_clean(crawler, "enough")

    @defer.inlineCallbacks
    def test_pagecount_no_item(self):
        """CLOSESPIDER_PAGECOUNT_NO_ITEM=3: three pages in a row without an item close it."""

        class FirstPageOnly(LinkSpider):
            def parse(self, response):
                for output in super().parse(response):
                    if response.url.endswith("/") or not isinstance(output, dict):
                        yield output

        settings = {"CLOSESPIDER_PAGECOUNT_NO_ITEM": 3, "CONCURRENT_REQUESTS": 1}
        crawler = yield crawl(FirstPageOnly, settings, start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 1)
        self.assertEqual(crawler.stats.get_value("response_received_count"), 4)
        self._check_clean(crawler, "closespider_pagecount_no_item")

    @defer.inlineCallbacks
    def test_timeout_no_item(self):
        """CLOSESPIDER_TIMEOUT_NO_ITEM=1 on a site that takes six seconds and yields no
        item: closed after a second, with Scrapy's log lines."""
        for path in self.pages:
            self.server.add(path, Delay(0.2, b"<html>slow</html>"))

        class NoItems(LinkSpider):
            def parse(self, response):
                return [each for each in super().parse(response) if not isinstance(each, dict)]

        logs = capture_logs(self)
        settings = {"CLOSESPIDER_TIMEOUT_NO_ITEM": 1, "CONCURRENT_REQUESTS": 1,
                    "LOG_LEVEL": "INFO"}
        crawler = yield crawl(NoItems, settings, start_urls=[self.start])
        self._check_clean(crawler, "closespider_timeout_no_item")
        self.assertGreaterEqual(crawler.stats.get_value("elapsed_time_seconds"), 1)
        messages = logs.messages()
        self.assertIn("Spider will stop when no items are produced after 1 seconds.", messages)
        self.assertIn("Closing spider since no items were produced in the last 1 seconds.",
                      messages)

    @defer.inlineCallbacks
    def test_switched_off_by_scrapy_path(self):
        """EXTENSIONS {"scrapy.extensions.closespider.CloseSpider": None}: no limit."""
        settings = {"CLOSESPIDER_PAGECOUNT": 2, "EXTENSIONS": {
            "scrapy.extensions.closespider.CloseSpider": None}}
        crawler = yield crawl(LinkSpider, settings, start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        self.assertEqual(crawler.stats.get_value("response_received_count"), 31)

    @defer.inlineCallbacks
    def test_finished_when_the_site_ends_first(self):
        """A limit larger than the site: finish reason "finished", no timer left."""
        settings = {"CLOSESPIDER_PAGECOUNT": 100, "CLOSESPIDER_TIMEOUT": 60}
        crawler = yield crawl(LinkSpider, settings, start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        self.assertEqual(crawler.stats.get_value("response_received_count"), 31)


class CloseSpiderExtensionTests(unittest.TestCase):
    """Configuration of the extension."""

    def test_off_without_settings(self):
        """No CLOSESPIDER_* setting: the extension switches itself off."""
        self.assertRaises(NotConfigured, CloseSpiderExtension.from_crawler,
                          Crawler(Spider, Settings()))

    def test_bad_value_is_a_usage_error(self):
        """A word where a number belongs names the setting."""
        from tinyscrapy.exceptions import UsageError

        error = self.assertRaises(UsageError, Crawler, Spider,
                                  Settings({"CLOSESPIDER_PAGECOUNT": "many"}))
        self.assertIn("CLOSESPIDER_PAGECOUNT", str(error))

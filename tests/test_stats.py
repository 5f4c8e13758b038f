"""
Stats: the final summary, STATS_FILE, the parts' statistics() records, and the
CLOSESPIDER_* limits.
"""

import dataclasses
import json
import os

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import DropItem, Request, Spider
from tinyscrapy.crawler import Crawler
from tinyscrapy.settings import Settings
from tinyscrapy.statscollectors import crawl_statistics

from .helpers import crawl, serve
from .logs import capture_logs
from .servers import Delay, Drop, Status


class LinkSpider(Spider):
    """From C{start}, follows every link; one item per page; /boom raises."""

    name = "links"

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        if response.url.endswith("/boom"):
            raise KeyError("boom")
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


class DropB:
    def process_item(self, item, spider):
        if item["url"].endswith("/b"):
            raise DropItem("no b")
        return item


class SummaryTests(unittest.TestCase):
    """What the stats say at the end of a crawl."""

    def setUp(self):
        self.server = serve(self)
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    @defer.inlineCallbacks
    def test_stats_file_holds_the_summary(self):
        """STATS_FILE (with %(name)s) holds pages by status, items, dropped items, errors
        by class, bytes, elapsed time, the finish reason and the parts' records."""
        start = self.server.add_page("/", links=["/a", "/b", "/404", "/boom", "/drop"])
        self.server.add_page("/a")
        self.server.add_page("/b")
        self.server.add_page("/boom")
        self.server.add("/404", Status(404))
        self.server.add("/drop", Drop())
        logs = capture_logs(self, "tinyscrapy")
        path = os.path.join(self.tmp, "stats", "%(name)s.json")
        yield crawl(LinkSpider, {"STATS_FILE": path, "ITEM_PIPELINES": {DropB: 1},
                              "RETRY_ENABLED": False},
                    start=start)
        with open(os.path.join(self.tmp, "stats", "links.json")) as f:
            stats = json.load(f)
        self.assertEqual(stats["downloader/response_status_count/200"], 4)
        self.assertEqual(stats["downloader/response_status_count/404"], 1)
        self.assertEqual(stats["item_scraped_count"], 2)
        self.assertEqual(stats["item_dropped_count"], 1)
        self.assertEqual(stats["spider_exceptions/KeyError"], 1)
        self.assertEqual(stats["downloader/exception_count"], 1)
        self.assertGreater(stats["downloader/response_bytes"], 0)
        self.assertIsInstance(stats["elapsed_time_seconds"], float)
        self.assertEqual(stats["finish_reason"], "finished")
        self.assertEqual(stats["scheduler/enqueued"], 6)
        self.assertEqual(stats["scheduler/dequeued"], 6)
        self.assertEqual(stats["downloader/response_count"], 5)
        self.assertNotIn("downloader/responses", stats)  # counted once, as in Scrapy
        self.assertIn("T", stats["start_time"])  # ISO 8601
        self.assertIn("Dumping stats for links", logs.text())

    @defer.inlineCallbacks
    def test_two_spiders_one_stats_file_warned(self):
        """Two crawlers of one process sharing a STATS_FILE without %(name)s: warned."""

        class Other(LinkSpider):
            name = "other"

        start = self.server.add_page("/")
        logs = capture_logs(self, "tinyscrapy.statscollectors")
        settings = Settings({"STATS_FILE": os.path.join(self.tmp, "both.json")})
        yield defer.gatherResults([Crawler(LinkSpider, settings).crawl(start=start),
                                   Crawler(Other, settings).crawl(start=start)])
        self.assertIn("is also another spider's", logs.text())


class StatisticsTests(unittest.TestCase):
    """statistics() on each stateful part: frozen records that say what is going on."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_records_during_and_after_a_crawl(self):
        """Read from a pipeline mid-crawl, and again at the end."""
        during = []
        slow = [f"/slow{i}" for i in range(3)]
        start = self.server.add_page("/", links=slow)
        for path in slow:
            self.server.add(path, Delay(0.1, b"<html>slow</html>"))

        class Peek:
            @classmethod
            def from_crawler(cls, crawler):
                peek = cls()
                peek.crawler = crawler
                return peek

            def process_item(self, item, spider):
                during.append(crawl_statistics(self.crawler))
                return item

        crawler = yield crawl(LinkSpider, {"ITEM_PIPELINES": {Peek: 1}}, start=start)
        first = during[0]
        self.assertEqual(sorted(first), ["downloader", "engine", "ledger", "pipelines",
                                         "scheduler"])
        self.assertEqual(first["engine"].in_flight, 1)
        self.assertEqual(first["scheduler"].pending, 0)
        self.assertEqual(first["ledger"].opened, 1)
        after = crawl_statistics(crawler)
        self.assertEqual(after["engine"].in_flight, 0)
        self.assertEqual(after["engine"].closing_reason, "finished")
        self.assertEqual((after["scheduler"].enqueued, after["scheduler"].dequeued), (4, 4))
        self.assertEqual((after["downloader"].requests, after["downloader"].responses), (4, 4))
        self.assertEqual(after["downloader"].active, 0)
        self.assertEqual(after["pipelines"].scraped, 4)
        for record in after.values():
            field = dataclasses.fields(record)[0].name
            self.assertRaises(dataclasses.FrozenInstanceError, setattr, record, field, 0)


class CloseSpiderTests(unittest.TestCase):
    """CLOSESPIDER_* limits close the crawl with a reason that names them."""

    def setUp(self):
        self.server = serve(self)
        links = [f"/{i}" for i in range(6)]
        self.start = self.server.add_page("/", links=links + ["/boom"])
        for path in links:
            self.server.add(path, Delay(0.05, b"<html>page</html>"))
        self.server.add_page("/boom")

    @defer.inlineCallbacks
    def test_itemcount(self):
        """CLOSESPIDER_ITEMCOUNT: the crawl closes after that many items (those in flight
        finish)."""
        crawler = yield crawl(LinkSpider, {"CLOSESPIDER_ITEMCOUNT": 2,
                                           "CONCURRENT_REQUESTS": 1}, start=self.start)
        stats = crawler.stats
        self.assertEqual(stats.get_value("finish_reason"), "closespider_itemcount")
        self.assertLess(stats.get_value("downloader/response_count"), 8)
        self.assertEqual(stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_errorcount(self):
        """CLOSESPIDER_ERRORCOUNT counts callback errors."""
        crawler = yield crawl(LinkSpider, {"CLOSESPIDER_ERRORCOUNT": 1}, start=self.start)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "closespider_errorcount")

    @defer.inlineCallbacks
    def test_timeout(self):
        """CLOSESPIDER_TIMEOUT closes a crawl that runs too long; its timer is cleaned up
        when the crawl ends first."""
        self.server.add("/forever", Delay(30, b""))
        start = self.server.add_page("/t", links=["/forever"])
        crawler = yield crawl(LinkSpider, {"CLOSESPIDER_TIMEOUT": 0.3,
                                           "DOWNLOAD_TIMEOUT": 1}, start=start)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "closespider_timeout")
        crawler = yield crawl(LinkSpider, {"CLOSESPIDER_TIMEOUT": 30}, start=self.start)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        timers = [call for call in reactor.getDelayedCalls()
                  if getattr(call.func, "__name__", None) == "_timed_out"]
        self.assertEqual(timers, [])


class _PlainCollector:
    """A STATS_CLASS of a project's own, as Scrapy's tests write one: no from_crawler,
    the crawler as its one argument, open_spider and close_spider requiring the spider."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.values = {}
        self.calls = []

    def open_spider(self, spider):
        self.calls.append(("open", spider.name))

    def close_spider(self, spider, reason):
        self.calls.append(("close", spider.name, reason))

    def get_stats(self, spider=None):
        return dict(self.values)

    def get_value(self, key, default=None, spider=None):
        return self.values.get(key, default)

    def set_value(self, key, value, spider=None):
        self.values[key] = value

    def inc_value(self, key, count=1, start=0, spider=None):
        self.values[key] = self.values.get(key, start) + count

    def max_value(self, key, value, spider=None):
        self.values[key] = max(self.values.get(key, value), value)

    def min_value(self, key, value, spider=None):
        self.values[key] = min(self.values.get(key, value), value)


class CollectorContractTests(unittest.TestCase):
    """STATS_CLASS and the spider argument, as Scrapy 2.14+ has them."""

    @defer.inlineCallbacks
    def test_collector_of_ones_own(self):
        """A collector without from_crawler is called with the crawler; one whose
        open_spider/close_spider require the spider gets it, with a deprecation warning."""
        from tinyscrapy.exceptions import ScrapyDeprecationWarning
        server = serve(self)
        start = server.add_page("/")
        capture_logs(self, "tinyscrapy")
        crawler = Crawler(LinkSpider, Settings({"STATS_CLASS": _PlainCollector}), reactor)
        self.assertIs(crawler.stats.crawler, crawler)
        yield crawler.crawl(start=start)
        warned = [str(w["message"]) for w in self.flushWarnings()
                  if w["category"] is ScrapyDeprecationWarning]
        self.assertEqual(crawler.stats.calls, [("open", "links"), ("close", "links",
                                                                   "finished")])
        self.assertTrue(any("open_spider() method of" in m and "requires a spider argument"
                            in m for m in warned), warned)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")

    def test_spider_argument_is_deprecated(self):
        """Passing spider= to a stats method warns and is ignored."""
        from tinyscrapy.exceptions import ScrapyDeprecationWarning
        from tinyscrapy.statscollectors import StatsCollector
        stats = StatsCollector()
        stats.set_value("k", 1, spider=object())
        stats.inc_value("k")
        (warning,) = self.flushWarnings()
        self.assertIs(warning["category"], ScrapyDeprecationWarning)
        self.assertIn("'spider' argument to StatsCollector.set_value()", warning["message"])
        self.assertEqual(stats.get_stats(), {"k": 2})

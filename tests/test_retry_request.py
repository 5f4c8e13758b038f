"""
L{get_retry_request}: a callback asks for a page again, as with Scrapy's function; and the
give-up log level (C{RETRY_GIVE_UP_LOG_LEVEL}, C{meta["give_up_log_level"]}).
"""

import logging

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.crawler import Crawler
from tinyscrapy.downloadermiddlewares.retry import RetryMiddleware, get_retry_request
from tinyscrapy.exceptions import IgnoreRequest
from tinyscrapy.http import HttpResponse
from tinyscrapy.settings import Settings

from .helpers import crawl, serve
from .logs import capture_logs
from .servers import Page, Sequence, Status


class EmptyRetrier(Spider):
    """Asks again, with get_retry_request, for a page that came back empty."""

    name = "empty"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.texts = []

    def parse(self, response):
        if not response.css("p"):
            return get_retry_request(response.request, spider=self, reason="empty")
        self.texts.append(response.css("p::text").get())
        return None


def _spider(settings=None):
    """A spider on a crawler of its own (settings and stats), not crawling."""
    crawler = Crawler(Spider, Settings(settings or {}))
    spider = Spider.from_crawler(crawler, name="s")
    crawler.spider = spider
    return spider


class GetRetryRequestCrawlTests(unittest.TestCase):
    """A callback's retry in a real crawl."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_empty_page_fetched_again(self):
        """The retry goes past the duplicate filter, is fetched, and counts its reason."""
        start = self.server.add("/flaky", Sequence([Page(""), Page("<p>full</p>")]))
        crawler = yield crawl(EmptyRetrier, start_urls=[start])
        self.assertEqual(crawler.spider.texts, ["full"])
        self.assertEqual(self.server.hits["/flaky"], 2)
        self.assertEqual(crawler.stats.get_value("retry/count"), 1)
        self.assertEqual(crawler.stats.get_value("retry/reason_count/empty"), 1)


class GetRetryRequestTests(unittest.TestCase):
    """Scrapy's signature and results."""

    def test_copy_with_retry_times(self):
        """The retry counts its tries, skips the duplicate filter, has its priority lowered."""
        spider = _spider()
        request = Request("https://example.com/", priority=5, meta={"keep": 1})
        retry = get_retry_request(request, spider=spider)
        self.assertEqual((retry.url, retry.meta["retry_times"], retry.meta["keep"]),
                         (request.url, 1, 1))
        self.assertTrue(retry.dont_filter)
        self.assertEqual(retry.priority, 4)
        again = get_retry_request(retry, spider=spider, priority_adjust=10)
        self.assertEqual((again.meta["retry_times"], again.priority), (2, 14))
        self.assertIsNone(get_retry_request(again, spider=spider))
        stats = spider.crawler.stats
        self.assertEqual(stats.get_value("retry/count"), 2)
        self.assertEqual(stats.get_value("retry/reason_count/unspecified"), 2)
        self.assertEqual(stats.get_value("retry/max_reached"), 1)

    def test_max_retry_times(self):
        """The argument, else meta['max_retry_times'], else RETRY_TIMES."""
        spider = _spider({"RETRY_TIMES": 0})
        self.assertIsNone(get_retry_request(Request("https://e.com/"), spider=spider))
        meta = Request("https://e.com/", meta={"max_retry_times": 1})
        self.assertIsNotNone(get_retry_request(meta, spider=spider))
        self.assertIsNone(get_retry_request(meta, spider=spider, max_retry_times=0))

    def test_spider_required(self):
        """spider is a required keyword argument."""
        self.assertRaises(TypeError, get_retry_request, Request("https://e.com/"))

    def test_exception_reasons(self):
        """An exception or its class counts under the class's dotted name."""
        spider = _spider()
        for reason in (IgnoreRequest(), IgnoreRequest, NotImplementedError):
            get_retry_request(Request("https://e.com/"), spider=spider, reason=reason)
        stats = spider.crawler.stats
        self.assertEqual(stats.get_value("retry/reason_count/tinyscrapy.exceptions.IgnoreRequest"),
                         2)
        self.assertEqual(stats.get_value("retry/reason_count/builtins.NotImplementedError"), 1)

    def test_logger_and_stats_key(self):
        """Lines go to the given logger; stats under the given base key."""
        logs = capture_logs(self, "custom-logger")
        spider = _spider()
        request = Request("https://e.com/")
        get_retry_request(request, spider=spider, reason="because", stats_base_key="mine",
                          logger=logging.getLogger("custom-logger"))
        self.assertEqual(logs.messages(),
                         ["Retrying <GET https://e.com/> (failed 1 times): because"])
        self.assertEqual(spider.crawler.stats.get_value("mine/reason_count/because"), 1)
        self.assertIsNone(spider.crawler.stats.get_value("retry/count"))

    def test_give_up_log_level(self):
        """The argument (a name or number), else RETRY_GIVE_UP_LOG_LEVEL; bad names fail."""
        logs = capture_logs(self, "tinyscrapy.downloadermiddlewares.retry")
        spider = _spider({"RETRY_GIVE_UP_LOG_LEVEL": "WARNING"})
        request = Request("https://e.com/")
        get_retry_request(request, spider=spider, max_retry_times=0)
        get_retry_request(request, spider=spider, max_retry_times=0, give_up_log_level="info")
        get_retry_request(request, spider=spider, max_retry_times=0,
                          give_up_log_level=logging.CRITICAL)
        self.assertEqual([r.levelno for r in logs.records],
                         [logging.WARNING, logging.INFO, logging.CRITICAL])
        self.assertEqual(logs.records[0].getMessage(),
                         "Gave up retrying <GET https://e.com/> (failed 1 times): unspecified")
        with self.assertRaisesRegex(ValueError, "Invalid give-up log level"):
            get_retry_request(request, spider=spider, max_retry_times=0,
                              give_up_log_level="NOT_A_LEVEL")


class GiveUpLevelMiddlewareTests(unittest.TestCase):
    """The middleware's give-up line."""

    def test_setting_and_meta(self):
        """RETRY_GIVE_UP_LOG_LEVEL for the crawl, meta['give_up_log_level'] per request."""
        from twisted.internet.task import Clock

        from tinyscrapy.statscollectors import StatsCollector
        logs = capture_logs(self, "tinyscrapy.downloadermiddlewares.retry")
        mw = RetryMiddleware(Settings({"RETRY_GIVE_UP_LOG_LEVEL": "ERROR", "RETRY_TIMES": 0}),
                             StatsCollector(), Clock())
        for meta in ({}, {"give_up_log_level": "WARNING"}):
            request = Request("https://e.com/", meta=meta)
            response = HttpResponse(request.url, 503, {}, b"", request)
            self.assertIs(mw.process_response(request, response), response)
        self.assertEqual([r.levelno for r in logs.records], [logging.ERROR, logging.WARNING])


class GiveUpCrawlTests(unittest.TestCase):
    """The default give-up level keeps one ERROR line per failure."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_default_is_debug(self):
        """By default the give-up line is DEBUG."""
        logs = capture_logs(self, "tinyscrapy.downloadermiddlewares.retry")
        start = self.server.add("/down", Status(503))
        yield crawl(EmptyRetrier, {"RETRY_TIMES": 0}, start_urls=[start])
        gave_up = [r for r in logs.records if r.getMessage().startswith("Gave up")]
        self.assertEqual([r.levelno for r in gave_up], [logging.DEBUG])

"""
C{log_count/<LEVEL>}: every log record of a crawl at or above C{LOG_LEVEL}, counted in its
stats by level (Scrapy's C{LogCount} extension).
"""

import logging

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Spider

from .helpers import crawl, serve
from .logs import capture_logs


class OneErrorSpider(Spider):
    """Logs one error and one warning for its one page, and says so at INFO."""

    name = "one_error"

    def parse(self, response):
        logging.getLogger("someones.code").error("bad page: %s", response.url)
        self.logger.warning("and a warning")
        self.logger.info("parsed %s", response.url)
        self.logger.debug("below the level")
        yield {"url": response.url}


class LogCountTests(unittest.TestCase):
    """A crawl counts its log records by level, and stops counting when it closes."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")
        capture_logs(self, level=logging.DEBUG)
        capture_logs(self, name="one_error", level=logging.DEBUG)

    @defer.inlineCallbacks
    def test_counts_by_level(self):
        """One error logged: log_count/ERROR 1; INFO counted; DEBUG (below the level) not."""
        crawler = yield crawl(OneErrorSpider, {"LOG_LEVEL": "INFO"}, start_urls=[self.start])
        stats = crawler.stats.get_stats()
        self.assertEqual(stats.get("log_count/ERROR"), 1, stats)
        self.assertEqual(stats.get("log_count/WARNING"), 1, stats)
        self.assertGreaterEqual(stats.get("log_count/INFO", 0), 1, stats)
        self.assertNotIn("log_count/DEBUG", stats)

    @defer.inlineCallbacks
    def test_handler_removed_at_close(self):
        """After the close, the root logger has no counter left and nothing more counts."""
        root = logging.getLogger()
        before = list(root.handlers)
        crawler = yield crawl(OneErrorSpider, {"LOG_LEVEL": "INFO"}, start_urls=[self.start])
        self.assertEqual(root.handlers, before)
        logging.getLogger("someones.code").error("after the crawl")
        self.assertEqual(crawler.stats.get_value("log_count/ERROR"), 1)

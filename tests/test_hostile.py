"""
Hostile servers: what they send is bounded, and what goes wrong is said once, by name.
"""

import logging

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy.download.transfer import HeaderLineTooLong

from .helpers import crawl
from .logs import capture_logs
from .recording import Recorder
from .servers import Page, TestServer


class LongHeaderLineTests(unittest.TestCase):
    """A response header line longer than twisted reads."""

    def setUp(self):
        self.server = TestServer().start()
        self.addCleanup(self.server.stop)

    @defer.inlineCallbacks
    def test_named_and_not_retried(self):
        """A 20,000-byte header line fails once, as HeaderLineTooLong naming the limit."""
        start = self.server.add("/big", Page(b"x", headers={"x-big": "a" * 20000}))
        self.server.add_page("/fine")
        logs = capture_logs(self)
        crawler = yield crawl(Recorder, start_urls=[start, self.server.url("/fine")])
        spider = crawler.spider
        self.assertEqual(self.server.hits["/big"], 1)
        failure, = spider.failures
        self.assertTrue(failure.check(HeaderLineTooLong))
        self.assertIn("longer than 16384 bytes", failure.getErrorMessage())
        self.assertEqual([r.url for r in spider.responses], [self.server.url("/fine")])
        self.assertIsNone(crawler.stats.get_value("retry/count"))
        self.assertEqual(crawler.stats.get_value(
            "downloader/exception_type_count/tinyscrapy.download.transfer.HeaderLineTooLong"), 1)
        errors = [m for m in logs.messages(logging.WARNING) if "HeaderLineTooLong" in m]
        self.assertEqual(len(errors), 1)
        self.assertIn(start, errors[0])

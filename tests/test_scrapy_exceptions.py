"""
Scrapy 2.19's public exceptions: the download failures a Scrapy errback catches
(C{CannotResolveHostError}, C{DownloadConnectionRefusedError}, C{DownloadTimeoutError},
C{DownloadFailedError}) come out of tinyscrapy's downloader, and the names Scrapy code
imports (C{ScrapyDeprecationWarning}, C{RETRY_EXCEPTIONS}) exist at Scrapy's paths.
"""

import warnings

from twisted.internet import defer, error, reactor
from twisted.trial import unittest

from tinyscrapy.exceptions import (
    CannotResolveHostError,
    DnsLookupTimeout,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    ScrapyDeprecationWarning,
    scrapy_download_error,
)

from .helpers import crawl, serve
from .recording import Recorder
from .servers import Delay, Drop


class DownloadExceptionCrawlTests(unittest.TestCase):
    """Real downloads fail with Scrapy 2.19's classes."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_refused_connection(self):
        """A closed port: the errback gets DownloadConnectionRefusedError, twisted's too."""
        port = reactor.listenTCP(0, self.server._factory, interface="127.0.0.1")
        number = port.getHost().port
        yield port.stopListening()
        crawler = yield crawl(Recorder, {"RETRY_ENABLED": False},
                              start_urls=[f"http://127.0.0.1:{number}/"])
        failure, = crawler.spider.failures
        self.assertIs(failure.type, DownloadConnectionRefusedError)
        self.assertTrue(failure.check(error.ConnectionRefusedError))
        self.assertIn("refused", failure.getErrorMessage())
        self.assertEqual(crawler.stats.get_value(
            "downloader/exception_type_count/"
            "tinyscrapy.exceptions.DownloadConnectionRefusedError"), 1)

    @defer.inlineCallbacks
    def test_timeout(self):
        """A page slower than DOWNLOAD_TIMEOUT: the errback gets a DownloadTimeoutError."""
        start = self.server.add("/slow", Delay(5, b"late"))
        crawler = yield crawl(Recorder, {"RETRY_ENABLED": False, "DOWNLOAD_TIMEOUT": 0.2},
                              start_urls=[start])
        failure, = crawler.spider.failures
        self.assertTrue(failure.check(DownloadTimeoutError))

    @defer.inlineCallbacks
    def test_dropped_connection(self):
        """A connection closed without an answer: DownloadFailedError, with its reasons."""
        start = self.server.add("/drop", Drop())
        crawler = yield crawl(Recorder, {"RETRY_ENABLED": False}, start_urls=[start])
        failure, = crawler.spider.failures
        self.assertIs(failure.type, DownloadFailedError)
        self.assertTrue(failure.value.reasons[0].check(error.ConnectionLost))

    @defer.inlineCallbacks
    def test_scrapy_classes_retried_by_default(self):
        """The default RETRY_EXCEPTIONS retries a refused connection (Scrapy's list)."""
        port = reactor.listenTCP(0, self.server._factory, interface="127.0.0.1")
        number = port.getHost().port
        yield port.stopListening()
        crawler = yield crawl(Recorder, {"RETRY_BACKOFF_BASE": 0.01, "RETRY_TIMES": 1},
                              start_urls=[f"http://127.0.0.1:{number}/"])
        self.assertEqual(crawler.stats.get_value(
            "retry/reason_count/tinyscrapy.exceptions.DownloadConnectionRefusedError"), 1)


class ConversionTests(unittest.TestCase):
    """scrapy_download_error keeps twisted's message and kind."""

    def test_dns(self):
        """twisted's DNSLookupError becomes CannotResolveHostError, same message."""
        original = error.DNSLookupError("nowhere.invalid")
        converted = scrapy_download_error(original)
        self.assertIsInstance(converted, CannotResolveHostError)
        self.assertIsInstance(converted, error.DNSLookupError)
        self.assertEqual(str(converted), str(original))
        self.assertIs(converted.__cause__, original)

    def test_dns_timeout_is_one(self):
        """The DNS cache's own timeout is a CannotResolveHostError as it stands."""
        timeout = DnsLookupTimeout("slow.example")
        self.assertIs(scrapy_download_error(timeout), timeout)
        self.assertIsInstance(timeout, CannotResolveHostError)

    def test_connect_timeout(self):
        """twisted's TimeoutError becomes a DownloadTimeoutError that is still twisted's."""
        converted = scrapy_download_error(error.TimeoutError(string="connect"))
        self.assertIsInstance(converted, DownloadTimeoutError)
        self.assertIsInstance(converted, error.TimeoutError)

    def test_others_unchanged(self):
        """Any other exception is returned as it is."""
        other = KeyError("x")
        self.assertIs(scrapy_download_error(other), other)


class PublicNamesTests(unittest.TestCase):
    """Names Scrapy code imports."""

    def test_deprecation_warning_category(self):
        """ScrapyDeprecationWarning is a Warning a filter can name by its path."""
        self.assertTrue(issubclass(ScrapyDeprecationWarning, Warning))
        with warnings.catch_warnings(record=True) as caught:
            warnings.filterwarnings("ignore", category=ScrapyDeprecationWarning)
            warnings.warn("old", ScrapyDeprecationWarning, stacklevel=1)
        self.assertEqual(caught, [])

    def test_default_settings_module_names(self):
        """scrapy.settings.default_settings: each default is a module-level name."""
        from tinyscrapy.settings.default_settings import DOWNLOAD_TIMEOUT, RETRY_EXCEPTIONS
        self.assertEqual(DOWNLOAD_TIMEOUT, 180.0)
        self.assertIn("tinyscrapy.exceptions.CannotResolveHostError", RETRY_EXCEPTIONS)

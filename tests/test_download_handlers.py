"""
Download handlers by scheme, as Scrapy 2.19 has them: C{data:} answered in process,
C{file:} refused unless a project enables it, a project's own handler in Scrapy's
coroutine form or the older Deferred form, lazy or not, and closed at the end.
"""

import os
import warnings

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy.core.downloader.handlers.base import BaseDownloadHandler
from tinyscrapy.exceptions import NotConfigured, NotSupported
from tinyscrapy.http import HtmlResponse, Request, TextResponse

from .helpers import crawl
from .recording import Recorder

FILE_HANDLER = "tinyscrapy.core.downloader.handlers.file.FileDownloadHandler"


class DataTests(unittest.TestCase):
    """C{data:} URLs, answered without a network."""

    @defer.inlineCallbacks
    def test_data_urls_answered(self):
        """An HTML data: URL is an HtmlResponse (its links followed); a text one is decoded
        by its charset; both with status 200, nothing on the network."""
        html = ("data:text/html,<html><body><a href='data:text/plain;charset=iso-8859-1,"
                "%25E9t%25E9'>x</a></body></html>")
        crawler = yield crawl(Recorder, start_urls=[html], follow=True)
        spider = crawler.spider
        self.assertEqual(spider.failures, [])
        first, second = spider.responses
        self.assertIsInstance(first, HtmlResponse)
        self.assertEqual(first.status, 200)
        self.assertEqual(first.css("a::text").get(), "x")
        self.assertIsInstance(second, TextResponse)
        self.assertEqual(second.text, "\u00e9t\u00e9")
        self.assertEqual(crawler.stats.get_value("downloader/response_count"), 2)

    @defer.inlineCallbacks
    def test_offsite_as_in_scrapy(self):
        """With allowed_domains, a data: URL has no host in them: dropped as off-site, as
        Scrapy's offsite middleware drops it."""
        crawler = yield crawl(Recorder, start_urls=["data:,hello"],
                              allowed_domains=["example.com"])
        self.assertEqual(crawler.spider.responses, [])
        self.assertEqual(crawler.stats.get_value("offsite/filtered"), 1)


class FileTests(unittest.TestCase):
    """C{file:} URLs: refused by default, read when a project enables the handler."""

    def setUp(self):
        self.path = os.path.abspath(self.mktemp())
        with open(self.path, "wb") as f:
            f.write(b"<html><title>local</title></html>")
        self.url = "file://" + self.path

    @defer.inlineCallbacks
    def test_refused_by_default(self):
        """A file: start URL is dropped before anything reads the disk, as InvalidUrl
        naming the setting that enables it."""
        crawler = yield crawl(Recorder, start_urls=[self.url])
        self.assertEqual(crawler.spider.responses, [])
        self.assertEqual(crawler.stats.get_value("ledger/dropped/InvalidUrl"), 1)

    @defer.inlineCallbacks
    def test_enabled_by_a_project(self):
        """With FileDownloadHandler in DOWNLOAD_HANDLERS the file is read (status 200, its
        class from its body); a missing one fails with FileNotFoundError."""
        missing = "file://" + os.path.abspath(self.mktemp())
        crawler = yield crawl(Recorder, {"DOWNLOAD_HANDLERS": {"file": FILE_HANDLER}},
                              start_urls=[self.url, missing])
        spider = crawler.spider
        response, = spider.responses
        self.assertEqual((response.url, response.status), (self.url, 200))
        self.assertEqual(response.css("title::text").get(), "local")
        failure, = spider.failures
        self.assertTrue(failure.check(FileNotFoundError))

    @defer.inlineCallbacks
    def test_no_handler_no_download(self):
        """A download of a scheme with no handler (a request given to the downloader
        directly) fails with NotSupported saying how file: is enabled."""
        from tinyscrapy.core.downloader.handlers import DownloadHandlers
        crawler = _crawler({})
        handlers = DownloadHandlers(crawler)
        self.addCleanup(handlers.close)
        try:
            yield handlers.download_request(Request(self.url), None)
        except NotSupported as e:
            self.assertIn("DOWNLOAD_HANDLERS", str(e))
        else:
            self.fail("a file: URL was downloaded without its handler")


def _crawler(settings):
    from tinyscrapy.crawler import Crawler
    from tinyscrapy.settings import Settings
    return Crawler(Recorder, Settings(settings))


class Recording:
    """What the handlers of one test did."""

    built = []
    closed = []
    downloaded = []


class CoroutineHandler(BaseDownloadHandler):
    """Scrapy 2.19's form: async download_request(request), async close()."""

    lazy = True

    def __init__(self, crawler):
        super().__init__(crawler)
        Recording.built.append(type(self).__name__)

    async def download_request(self, request):
        Recording.downloaded.append(request.url)
        from tinyscrapy.responsetypes import response_for
        return response_for(request.url, 200, {"Content-Type": "text/html"},
                            b"<html><title>mock</title></html>", request)

    async def close(self):
        Recording.closed.append(type(self).__name__)


class OldStyleHandler:
    """The older form: download_request(request, spider) returning a Deferred; no lazy
    attribute (lazy, as in Scrapy); a close that returns nothing."""

    def __init__(self, settings):
        self.settings = settings
        Recording.built.append("OldStyleHandler")

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings)

    def download_request(self, request, spider):
        Recording.downloaded.append((request.url, spider.name))
        from tinyscrapy.responsetypes import response_for
        return defer.succeed(response_for(request.url, 203, {}, b"old", request))

    def close(self):
        Recording.closed.append("OldStyleHandler")


class Unconfigured(BaseDownloadHandler):
    def __init__(self, crawler):
        raise NotConfigured("this handler needs SOMETHING_ENABLED")

    async def download_request(self, request):
        raise AssertionError("never built")


class ProjectHandlerTests(unittest.TestCase):
    """A project's own handlers through DOWNLOAD_HANDLERS."""

    def setUp(self):
        Recording.built, Recording.closed, Recording.downloaded = [], [], []

    @defer.inlineCallbacks
    def test_both_forms_built_lazily_and_closed(self):
        """A coroutine handler and an old-style one each serve their scheme: built at the
        first request of their scheme (not at all when unused), closed at the end."""
        handlers = {"mock": f"{__name__}.CoroutineHandler",
                    "old": f"{__name__}.OldStyleHandler",
                    "unused": f"{__name__}.CoroutineHandler"}
        crawler = yield crawl(Recorder, {"DOWNLOAD_HANDLERS": handlers},
                              start_urls=["mock://a/1", "old://b/2"])
        statuses = sorted(r.status for r in crawler.spider.responses)
        self.assertEqual(statuses, [200, 203])
        self.assertEqual(sorted(Recording.built), ["CoroutineHandler", "OldStyleHandler"])
        self.assertEqual(sorted(Recording.closed), ["CoroutineHandler", "OldStyleHandler"])
        self.assertIn(("old://b/2", "recorder"), Recording.downloaded)

    @defer.inlineCallbacks
    def test_not_configured_leaves_the_scheme_unsupported(self):
        """A handler raising NotConfigured: its scheme's requests fail with NotSupported
        giving the handler's reason; the crawl goes on."""
        crawler = yield crawl(Recorder, {"DOWNLOAD_HANDLERS": {
            "mock": f"{__name__}.Unconfigured"}}, start_urls=["mock://a/1"])
        failure, = crawler.spider.failures
        self.assertTrue(failure.check(NotSupported))
        self.assertIn("SOMETHING_ENABLED", failure.getErrorMessage())


class ScrapyNamesTests(unittest.TestCase):
    """The handlers at Scrapy's paths, with Scrapy's names."""

    def test_http11_handler(self):
        """HTTP11DownloadHandler is the http(s) handler, a BaseDownloadHandler built at the
        start (lazy False); the old http module's alias warns that it is deprecated."""
        import importlib
        import sys

        from tinyscrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler, HttpFetcher
        from tinyscrapy.exceptions import ScrapyDeprecationWarning
        from tinyscrapy.settings.default_settings import DEFAULTS
        self.assertTrue(issubclass(HTTP11DownloadHandler, BaseDownloadHandler))
        self.assertTrue(issubclass(HTTP11DownloadHandler, HttpFetcher))
        self.assertFalse(HTTP11DownloadHandler.lazy)
        self.assertEqual(DEFAULTS["DOWNLOAD_HANDLERS_BASE"]["https"],
                         "tinyscrapy.core.downloader.handlers.http11.HTTP11DownloadHandler")
        self.assertIsNone(DEFAULTS["DOWNLOAD_HANDLERS_BASE"]["file"])
        sys.modules.pop("tinyscrapy.core.downloader.handlers.http", None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module("tinyscrapy.core.downloader.handlers.http")
        self.assertIs(module.HTTPDownloadHandler, HTTP11DownloadHandler)
        self.assertTrue(any(issubclass(w.category, ScrapyDeprecationWarning) for w in caught))

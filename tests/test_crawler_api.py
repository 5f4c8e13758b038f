"""
The crawler's Scrapy API for components: C{request_fingerprinter} (and
C{REQUEST_FINGERPRINTER_CLASS}, which also decides the duplicate filter), the lookups of
running components (C{get_downloader_middleware}, ...), and the test helpers
C{get_crawler} and C{build_from_crawler} at Scrapy's paths.
"""

import hashlib

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider, signals
from tinyscrapy.downloadermiddlewares.retry import RetryMiddleware
from tinyscrapy.exceptions import NotConfigured
from tinyscrapy.spidermiddlewares.referer import RefererMiddleware
from tinyscrapy.utils.misc import build_from_crawler
from tinyscrapy.utils.request import RequestFingerprinter, fingerprint
from tinyscrapy.utils.test import get_crawler

from .helpers import crawl, serve
from .servers import Page


class ByHeader:
    """A project's fingerprinter: the URL and the X-ID header."""

    def fingerprint(self, request):
        return hashlib.sha1(request.url.encode() + (request.headers.get("X-ID") or b"")).digest()


class TwoIds(Spider):
    """Requests one URL twice, with two X-ID values, and notes the running components."""

    name = "two-ids"
    url = None

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.found = {}

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.opened, signal=signals.spider_opened)
        return spider

    def opened(self, spider):
        crawler = self.crawler
        self.found = {"retry": crawler.get_downloader_middleware(RetryMiddleware),
                      "referer": crawler.get_spider_middleware(RefererMiddleware),
                      "none": crawler.get_downloader_middleware(ByHeader)}

    def start_requests(self):
        for value in ("1", "2"):
            yield Request(self.url, headers={"X-ID": value})

    def parse(self, response):
        return None


class FingerprinterTests(unittest.TestCase):
    """crawler.request_fingerprinter."""

    def setUp(self):
        self.server = serve(self)

    def test_default(self):
        """The default returns fingerprint(request), bytes."""
        crawler = get_crawler()
        request = Request("https://example.com/")
        self.assertIsInstance(crawler.request_fingerprinter, RequestFingerprinter)
        self.assertEqual(crawler.request_fingerprinter.fingerprint(request),
                         fingerprint(request))

    @defer.inlineCallbacks
    def test_default_dedups_by_url(self):
        """Two requests for one URL that differ in a header: the second is a duplicate."""
        url = self.server.add("/p", Page("<p>x</p>"))
        yield crawl(TwoIds, url=url)
        self.assertEqual(self.server.hits["/p"], 1)

    @defer.inlineCallbacks
    def test_project_fingerprinter_decides_duplicates(self):
        """REQUEST_FINGERPRINTER_CLASS names a class that tells the two apart: both go."""
        url = self.server.add("/p", Page("<p>x</p>"))
        crawler = yield crawl(TwoIds, {"REQUEST_FINGERPRINTER_CLASS": ByHeader}, url=url)
        self.assertIsInstance(crawler.request_fingerprinter, ByHeader)
        self.assertEqual(self.server.hits["/p"], 2)


class RunningComponentTests(unittest.TestCase):
    """get_downloader_middleware and its kin."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_found_while_crawling(self):
        """At spider_opened the running instances are found; an absent class is None."""
        url = self.server.add("/p", Page("<p>x</p>"))
        crawler = yield crawl(TwoIds, url=url)
        found = crawler.spider.found
        self.assertIsInstance(found["retry"], RetryMiddleware)
        self.assertIsInstance(found["referer"], RefererMiddleware)
        self.assertIsNone(found["none"])
        self.assertIsNone(crawler.get_item_pipeline(ByHeader))

    def test_before_the_engine(self):
        """Before the crawl starts, the lookups raise RuntimeError, as in Scrapy."""
        crawler = get_crawler()
        for lookup in (crawler.get_downloader_middleware, crawler.get_spider_middleware,
                       crawler.get_item_pipeline, crawler.get_extension):
            self.assertRaises(RuntimeError, lookup, RetryMiddleware)


class TestHelperTests(unittest.TestCase):
    """get_crawler and build_from_crawler, for a project's own component tests."""

    def test_component_from_settings(self):
        """A middleware built from get_crawler's settings reads them."""
        crawler = get_crawler(settings_dict={"RETRY_TIMES": 7})
        self.assertEqual(build_from_crawler(RetryMiddleware, crawler).max_retry_times, 7)

    def test_not_configured_reaches_the_caller(self):
        """A component that switches itself off raises NotConfigured to the test."""
        crawler = get_crawler(settings_dict={"RETRY_ENABLED": False})
        self.assertRaises(NotConfigured, build_from_crawler, RetryMiddleware, crawler)

    def test_spider_from_get_crawler(self):
        """crawler._create_spider() makes the spider as the crawl would (from_crawler)."""
        crawler = get_crawler(TwoIds, {"RETRY_TIMES": 3})
        spider = crawler._create_spider(url="http://a.example/")
        self.assertIsInstance(spider, TwoIds)
        self.assertIs(spider.crawler, crawler)
        self.assertEqual((spider.url, spider.settings.getint("RETRY_TIMES")),
                         ("http://a.example/", 3))

    def test_text_helpers(self):
        """to_bytes and to_unicode convert str and bytes, refuse anything else."""
        from tinyscrapy.utils.python import to_bytes, to_unicode
        self.assertEqual(to_bytes("pas£", "latin-1"), b"pas\xa3")
        self.assertEqual(to_bytes(b"x"), b"x")
        self.assertEqual(to_unicode(b"pas\xc2\xa3"), "pas£")
        self.assertEqual(to_unicode(b"\xff", errors="replace"), "\ufffd")
        self.assertRaises(TypeError, to_bytes, 1)
        self.assertRaises(TypeError, to_unicode, None)

    def test_urlparse_cached(self):
        """urlparse_cached parses a request's URL, once for one URL."""
        from tinyscrapy.utils.httpobj import urlparse_cached
        request = Request("https://example.com:8080/a?b=1")
        parsed = urlparse_cached(request)
        self.assertEqual((parsed.hostname, parsed.port, parsed.query), ("example.com", 8080,
                                                                         "b=1"))
        self.assertIs(urlparse_cached(Request(request.url)), parsed)

    def test_set_environ(self):
        """set_environ sets variables inside the block and restores them after it."""
        import os

        from tinyscrapy.utils.misc import set_environ
        os.environ.pop("TINYSCRAPY_TEST_A", None)
        with set_environ(TINYSCRAPY_TEST_A="1", PATH="/nowhere"):
            self.assertEqual(os.environ["TINYSCRAPY_TEST_A"], "1")
            self.assertEqual(os.environ["PATH"], "/nowhere")
        self.assertNotIn("TINYSCRAPY_TEST_A", os.environ)
        self.assertNotEqual(os.environ["PATH"], "/nowhere")

    def test_reactor_helpers(self):
        """Under trial a reactor is installed, and get_reactor_settings names it."""
        from twisted.internet import reactor

        from tinyscrapy.utils.reactor import is_reactor_installed
        from tinyscrapy.utils.spider import DefaultSpider
        from tinyscrapy.utils.test import get_reactor_settings
        self.assertTrue(is_reactor_installed())
        cls = type(reactor)
        self.assertEqual(get_reactor_settings(),
                         {"TWISTED_REACTOR": f"{cls.__module__}.{cls.__qualname__}"})
        crawler = get_crawler(settings_dict=get_reactor_settings())
        self.assertIs(crawler.spidercls, DefaultSpider)
        self.assertEqual(DefaultSpider.name, "default")


class RequestHttpreprTests(unittest.TestCase):
    """tinyscrapy.utils.request.request_httprepr, as Scrapy users log request sizes."""

    def test_message_of_a_request(self):
        """Request line with path and query, Host, each header value, blank line, body."""
        from tinyscrapy.utils.request import request_httprepr
        post = Request("http://u:p@example.com:8080/a;p?q=1#frag", method="POST",
                       headers={"X-Many": ["1", "2"]}, body=b"data")
        self.assertEqual(request_httprepr(post),
                         b"POST /a;p?q=1 HTTP/1.1\r\nHost: example.com\r\nX-Many: 1\r\n"
                         b"X-Many: 2\r\n\r\ndata")
        self.assertEqual(request_httprepr(Request("http://example.com")),
                         b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
        self.assertEqual(request_httprepr(Request("file:///tmp/f.txt")),
                         b"GET /tmp/f.txt HTTP/1.1\r\nHost: \r\n\r\n")

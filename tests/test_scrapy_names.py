"""
Scrapy names a ported project relies on: C{BaseRedirectMiddleware} as the base of a
user's own redirect middleware, and C{ContractFail}.
"""

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Spider
from tinyscrapy.downloadermiddlewares.redirect import (
    BaseRedirectMiddleware,
    MetaRefreshMiddleware,
    RedirectMiddleware,
)
from tinyscrapy.exceptions import ContractFail, NotConfigured
from tinyscrapy.utils.test import get_crawler

from .helpers import crawl, serve
from .logs import capture_logs


class HeaderRedirect(BaseRedirectMiddleware):
    """A user's redirect middleware: a 200 with an C{X-Go} header goes there."""

    enabled_setting = "HEADER_REDIRECT_ENABLED"

    def __init__(self, settings):  # Scrapy's constructor: settings only
        super().__init__(settings)

    def process_response(self, request, response, spider=None):
        target = response.headers.get("X-Go")
        if not target:
            return response
        return self._redirect(request, response, response.urljoin(target.decode()), "x-go",
                              to_get=False)


class PagesSpider(Spider):
    name = "pages"

    def parse(self, response):
        yield {"url": response.url}


class BaseRedirectMiddlewareTests(unittest.TestCase):
    """A subclass of BaseRedirectMiddleware in a real crawl."""

    def test_base_of_both(self):
        """Both built-in redirect middlewares are BaseRedirectMiddleware subclasses."""
        self.assertTrue(issubclass(RedirectMiddleware, BaseRedirectMiddleware))
        self.assertTrue(issubclass(MetaRefreshMiddleware, BaseRedirectMiddleware))

    @defer.inlineCallbacks
    def test_user_subclass_redirects(self):
        """The hop is fetched once, with a Referer, and counted in redirect/count."""
        server = serve(self)
        start = server.add_page("/", headers={"X-Go": "/there"})
        server.add_page("/there")
        capture_logs(self)
        crawler = yield crawl(PagesSpider, {
            "HEADER_REDIRECT_ENABLED": True,
            "DOWNLOADER_MIDDLEWARES": {HeaderRedirect: 650}}, start_urls=[start])
        there = [r for r in server.requests if r.path == "/there"]
        self.assertEqual(len(there), 1)
        self.assertEqual(there[0].headers.get("referer"), start)
        self.assertEqual(crawler.stats.get_value("redirect/count"), 1)
        self.assertEqual(crawler.stats.get_value("redirect/reason_count/x-go"), 1)

    def test_enabled_setting(self):
        """Off by its own enabled_setting: NotConfigured, as in Scrapy."""
        crawler = get_crawler(settings_dict={"HEADER_REDIRECT_ENABLED": False})
        with self.assertRaises(NotConfigured):
            HeaderRedirect.from_crawler(crawler)


class ContractFailTests(unittest.TestCase):
    """Scrapy's ContractFail."""

    def test_is_an_assertion_error(self):
        """ContractFail is an AssertionError, so a contract's assert-style check fits."""
        self.assertTrue(issubclass(ContractFail, AssertionError))
        with self.assertRaises(AssertionError):
            raise ContractFail("expected 1 item")

"""
The built-in middlewares called as Scrapy 2.19 calls them (and as code written for it does):
without the C{spider} argument, which Scrapy deprecates. The crawler's spider is used.
"""

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.crawler import Crawler
from tinyscrapy.downloadermiddlewares.cookies import CookiesMiddleware
from tinyscrapy.downloadermiddlewares.defaultheaders import DefaultHeadersMiddleware
from tinyscrapy.downloadermiddlewares.httpauth import HttpAuthMiddleware
from tinyscrapy.downloadermiddlewares.httpproxy import HttpProxyMiddleware
from tinyscrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from tinyscrapy.downloadermiddlewares.retry import RetryMiddleware
from tinyscrapy.downloadermiddlewares.useragent import UserAgentMiddleware
from tinyscrapy.http import HttpResponse
from tinyscrapy.http.headers import header_text
from tinyscrapy.settings import Settings
from tinyscrapy.spidermiddlewares.referer import RefererMiddleware
from tinyscrapy.utils.misc import build

from .helpers import crawl, serve


class Polite(Spider):
    name = "polite"
    user_agent = "polite-bot/1.0"
    handle_httpstatus_list = [302]


def crawler_with_spider(settings=None):
    """A L{Crawler} whose spider is made, as middlewares see it once the crawl runs."""
    crawler = Crawler(Polite, Settings(settings or {}))
    crawler.spider = Polite.from_crawler(crawler)
    return crawler


class SpiderlessCallTests(unittest.TestCase):
    """process_request(request), process_response(request, response), ... work."""

    def setUp(self):
        self.crawler = crawler_with_spider({"HTTPAUTH_USER": "u", "HTTPAUTH_PASS": "p",
                                            "HTTPAUTH_DOMAIN": "example.com"})

    def build(self, cls):
        return build(cls, self.crawler)

    def test_request_hooks(self):
        """Headers, User-Agent (the crawler's spider's), auth, cookies and proxy."""
        request = Request("http://example.com/", meta={"proxy": "http://u:p@proxy:3128"},
                          headers={"Cookie": "a=1"})
        for cls in (HttpAuthMiddleware, DefaultHeadersMiddleware, UserAgentMiddleware,
                    CookiesMiddleware, HttpProxyMiddleware):
            self.assertIsNone(self.build(cls).process_request(request))
        headers = request.headers
        self.assertEqual(header_text(headers.get("User-Agent")), "polite-bot/1.0")
        self.assertTrue(header_text(headers.get("Authorization")).startswith("Basic "))
        self.assertEqual(header_text(headers.get("Cookie")), "a=1")
        self.assertEqual(request.meta["proxy"], "http://proxy:3128")

    def test_response_hooks(self):
        """Redirect (the crawler's spider handles 302), meta refresh and retry."""
        request = Request("http://example.com/")
        moved = HttpResponse(request.url, 302, {"Location": "/x"}, b"", request)
        self.assertIs(self.build(RedirectMiddleware).process_response(request, moved), moved)
        moved = HttpResponse(request.url, 301, {"Location": "/x"}, b"", request)
        hop = self.build(RedirectMiddleware).process_response(request, moved)
        self.assertEqual(hop.url, "http://example.com/x")
        page = HttpResponse(request.url, 200, {"Content-Type": "text/html"}, b"<p>", request)
        self.assertIs(self.build(MetaRefreshMiddleware).process_response(request, page), page)
        busy = HttpResponse(request.url, 503, {}, b"", request)
        retry = self.build(RetryMiddleware).process_response(request, busy)
        self.assertEqual(retry.meta["retry_times"], 1)
        self.assertIsNone(self.build(RetryMiddleware).process_exception(request,
                                                                        ValueError()))

    def test_spider_output_hook(self):
        """The referer middleware's process_spider_output(response, result)."""
        request = Request("http://example.com/page")
        response = HttpResponse(request.url, 200, {}, b"", request)
        link = Request("http://example.com/next")
        out = list(self.build(RefererMiddleware).process_spider_output(response, [link]))
        self.assertEqual(header_text(out[0].headers.get("Referer")), request.url)


class UserAgentCrawlTests(unittest.TestCase):
    """The User-Agent a server sees, as Scrapy decides it."""

    def setUp(self):
        from .servers import Echo
        self.server = serve(self)
        self.echo = self.server.add("/echo", Echo())

    def seen(self):
        return [r.headers.get("user-agent") for r in self.server.requests]

    @defer.inlineCallbacks
    def test_spider_setting_and_empty(self):
        """The spider's user_agent wins over USER_AGENT; USER_AGENT="" sends none."""
        from .recording import Recorder

        class Named(Recorder):
            user_agent = "named-bot/2"

        yield crawl(Named, {"USER_AGENT": "setting-bot/1"}, start_urls=[self.echo + "?a"])
        yield crawl(Recorder, {"USER_AGENT": "setting-bot/1"}, start_urls=[self.echo + "?b"])
        yield crawl(Recorder, {"USER_AGENT": ""}, start_urls=[self.echo + "?c"])
        self.assertEqual(self.seen(), ["named-bot/2", "setting-bot/1", None])

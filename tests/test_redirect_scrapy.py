"""
Redirect details where tinyscrapy does what Scrapy 2.19 does: the hop's Referer, a GET's
body on a 303, meta refresh only from http(s) pages, the hop limit's message, and a hop
back into the chain returned like any hop.
"""

import json

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request
from tinyscrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from tinyscrapy.exceptions import TooManyRedirects
from tinyscrapy.http import HtmlResponse, HttpResponse
from tinyscrapy.settings import Settings
from tinyscrapy.statscollectors import StatsCollector

from .helpers import crawl, serve
from .recording import Recorder
from .servers import Echo, Redirect


class RedirectScrapyCrawlTests(unittest.TestCase):
    """What a server sees on a hop, in whole crawls."""

    def setUp(self):
        self.server = serve(self)
        self.server.add("/echo", Echo())

    def echoes(self, crawler):
        return [json.loads(r.body) for r in crawler.spider.responses]

    @defer.inlineCallbacks
    def test_hop_referer_is_the_redirecting_url(self):
        """A hop carries Referer: the URL that redirected, replacing the one it had."""
        start = self.server.add("/from", Redirect("/echo"))

        def make(spider):
            return [Request(start, headers={"Referer": "http://127.0.0.1/old"})]

        crawler = yield crawl(Recorder, make=make)
        echo, = self.echoes(crawler)
        self.assertEqual(echo["headers"]["referer"], [start])

    @defer.inlineCallbacks
    def test_no_referer_on_a_hop_with_the_referer_middleware_off(self):
        """REFERER_ENABLED=False: a hop carries no Referer, as in Scrapy."""
        start = self.server.add("/from", Redirect("/echo"))

        def make(spider):
            return [Request(start, headers={"Referer": "http://127.0.0.1/old"})]

        crawler = yield crawl(Recorder, {"REFERER_ENABLED": False}, make=make)
        echo, = self.echoes(crawler)
        self.assertNotIn("referer", echo["headers"])

    @defer.inlineCallbacks
    def test_no_referer_without_the_referer_spider_middleware(self):
        """The RefererMiddleware taken out of SPIDER_MIDDLEWARES: no Referer, one warning."""
        start = self.server.add("/from", Redirect("/echo"))
        off = {"SPIDER_MIDDLEWARES": {
            "tinyscrapy.spidermiddlewares.referer.RefererMiddleware": None}}
        with self.assertLogs("tinyscrapy.downloadermiddlewares.redirect", "WARNING") as logs:
            crawler = yield crawl(Recorder, off, start_urls=[start])
        echo, = self.echoes(crawler)
        self.assertNotIn("referer", echo["headers"])
        self.assertIn("RedirectMiddleware found no RefererMiddleware", logs.output[-1])

    @defer.inlineCallbacks
    def test_303_keeps_a_get_body(self):
        """A GET with a body redirected by a 303 stays a GET with its body, as in Scrapy."""
        start = self.server.add("/see", Redirect("/echo", 303))

        def make(spider):
            return [Request(start, body=b"q=1")]

        crawler = yield crawl(Recorder, make=make)
        echo, = self.echoes(crawler)
        self.assertEqual((echo["method"], echo["body"]), ("GET", "q=1"))


class RedirectScrapyUnitTests(unittest.TestCase):
    """The middlewares called as Scrapy's tests call them."""

    def setUp(self):
        self.stats = StatsCollector()

    def test_referrer_policy_header_of_the_redirecting_response(self):
        """The redirecting response's Referrer-Policy decides the hop's Referer."""
        mw = RedirectMiddleware(Settings(), self.stats)
        request = Request("http://a.example/deep/page")
        response = HttpResponse(request.url, 302, {"Location": "/to",
                                                   "Referrer-Policy": "origin"}, b"", request)
        hop = mw.process_response(request, response)
        self.assertEqual(hop.headers["Referer"], b"http://a.example/")

    def test_hop_back_is_returned_and_counted(self):
        """A redirect back to a URL of the chain is a hop (the duplicate filter drops it)."""
        mw = RedirectMiddleware(Settings(), self.stats)
        first = Request("http://a.example/a")
        hop = mw.process_response(first, HttpResponse(first.url, 302, {"Location": "/b"}, b"",
                                                      first))
        back = mw.process_response(hop, HttpResponse(hop.url, 302, {"Location": "/a"}, b"",
                                                     hop))
        self.assertEqual(back.url, first.url)
        self.assertFalse(back.dont_filter)
        self.assertEqual(self.stats.get_value("redirect/loop"), 1)
        again = back  # without a duplicate filter (fetch, shell) the chain goes on
        for location in ("/b", "/a", "/b"):
            again = mw.process_response(again, HttpResponse(again.url, 302,
                                                            {"Location": location}, b"", again))
        self.assertEqual(self.stats.get_value("redirect/loop"), 1)  # once a chain
        self.assertEqual(again.meta["redirect_times"], 5)

    def test_max_redirections_message(self):
        """One hop more than REDIRECT_MAX_TIMES says so, in Scrapy's words."""
        mw = RedirectMiddleware(Settings({"REDIRECT_MAX_TIMES": 0}), self.stats)
        request = Request("http://a.example/a")
        with self.assertRaisesRegex(TooManyRedirects, "max redirections reached"):
            mw.process_response(request, HttpResponse(request.url, 302, {"Location": "/b"},
                                                      b"", request))

    def test_meta_refresh_only_from_http_pages(self):
        """A refresh in a data:, file: or ftp: page is not followed: the page is kept."""
        mw = MetaRefreshMiddleware(Settings(), self.stats)
        body = b'<html><head><meta http-equiv="refresh" content="0; url=http://a.example/b">'
        for url in ("data:,a", "file:///tmp/a.html", "ftp://a.example/a", "foo://a/b"):
            request = Request(url)
            response = HtmlResponse(url, 200, {"Content-Type": "text/html"}, body, request)
            self.assertIs(mw.process_response(request, response), response, url)
        request = Request("https://a.example/a")
        response = HtmlResponse(request.url, 200, {"Content-Type": "text/html"}, body, request)
        self.assertEqual(mw.process_response(request, response).url, "http://a.example/b")

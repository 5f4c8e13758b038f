"""
What Scrapy users rely on without thinking about it, in real crawls: a response's URL has
no fragment, and a C{dont_filter} request (every default start request) does not mark its
URL as seen, so the page can be asked for again.
"""

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider

from .helpers import crawl, serve


class UrlRecorder(Spider):
    name = "urls"

    def start_requests(self):
        for url in self.start:
            yield Request(url, dont_filter=self.start_dont_filter)

    def parse(self, response):
        self.seen_urls.append((response.url, response.request.url))
        for url in self.then.pop(0) if self.then else ():
            yield response.follow(url, self.parse)


class ScrapyHabitsTests(unittest.TestCase):
    def setUp(self):
        self.server = serve(self)
        self.server.add_page("/a")
        self.server.add_page("/b")

    def _crawl(self, start, then=(), start_dont_filter=False):
        UrlRecorder.seen_urls = []
        return crawl(UrlRecorder, start=start, then=[list(urls) for urls in then],
                     start_dont_filter=start_dont_filter)

    @defer.inlineCallbacks
    def test_response_url_has_no_fragment(self):
        """The response's URL is the request's without its #fragment; the request keeps it."""
        start = self.server.url("/a") + "#top"
        yield self._crawl([start], then=[["/b#reviews"]])
        self.assertEqual(UrlRecorder.seen_urls, [
            (self.server.url("/a"), start),
            (self.server.url("/b"), self.server.url("/b") + "#reviews")])

    @defer.inlineCallbacks
    def test_dont_filter_request_leaves_its_url_unseen(self):
        """A dont_filter start request does not make a later plain request for the same
        URL a duplicate (as in Scrapy: log in, then ask for the start page again); the
        second one is remembered."""
        start = self.server.url("/a")
        crawler = yield self._crawl([start], then=[["/a"], ["/a"]], start_dont_filter=True)
        self.assertEqual([url for url, _ in UrlRecorder.seen_urls], [start, start])
        self.assertEqual(crawler.stats.get_value("dupefilter/filtered", 0)
                         + crawler.stats.get_value("dupefilter/skipped_early", 0), 1)

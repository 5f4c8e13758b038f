"""
Integration tests: real crawls against twisted.web servers on 127.0.0.1.
"""

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider

from .helpers import LinkSpider, crawl, serve
from .servers import Delay, Drop, Status, TestServer


class CrawlTests(unittest.TestCase):
    """A whole crawl through treq, the engine and the scraper."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_concurrency_reaches_max_never_more(self):
        """Counted at the server: exactly CONCURRENT_REQUESTS requests at once, no more."""
        slow = [f"/slow/{i}" for i in range(12)]
        start = self.server.add_page("/", links=slow)
        for path in slow:
            self.server.add(path, Delay(0.2, b"<html>slow</html>"))
        crawler = yield crawl(LinkSpider, {"CONCURRENT_REQUESTS": 4,
                                           "CONCURRENT_REQUESTS_PER_DOMAIN": 4},
                              start_urls=[start])
        self.assertEqual(self.server.max_in_flight, 4)
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 13)

    @defer.inlineCallbacks
    def test_each_page_once_and_closes(self):
        """A site with cycles and duplicate links: each page fetched once, crawl ends. The
        start page is fetched twice, as in Scrapy: its default start request is
        dont_filter, which leaves no trace, so the first link back to it is new."""
        start = self.server.add_page("/", links=["/a", "/b", "/a#x", "/b?"])
        self.server.add_page("/a", links=["/", "/b"])
        self.server.add_page("/b", links=["/a", "/"])
        crawler = yield crawl(LinkSpider, start_urls=[start])
        self.assertEqual(dict(self.server.hits), {"/": 2, "/a": 1, "/b": 1})
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        self.assertEqual(crawler.stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_bad_input_does_not_stop_the_crawl(self):
        """A bad start URL, a dropped connection, a 500 and a broken callback are each
        counted; the good page is still scraped."""

        class Picky(LinkSpider):
            def parse(self, response):
                if response.url.endswith("/broken"):
                    raise KeyError("broken page")
                return super().parse(response)

        start = self.server.add_page("/", links=["/drop", "/500", "/broken", "/good"])
        self.server.add("/drop", Drop())
        self.server.add("/500", Status(500))
        self.server.add_page("/broken")
        self.server.add_page("/good")
        crawler = yield crawl(Picky, {"RETRY_ENABLED": False},  # retries: test_retry.py
                              start_urls=["http://[bad-url", "no-scheme.html", start])
        self.flushLoggedErrors(KeyError)
        stats = crawler.stats
        self.assertEqual(stats.get_value("item_scraped_count"), 2)  # / and /good
        self.assertEqual(stats.get_value("spider_exceptions/KeyError"), 1)
        self.assertEqual(stats.get_value("httperror/response_ignored_status_count/500"), 1)
        self.assertEqual(stats.get_value("downloader/exception_count"), 1)
        self.assertEqual(stats.get_value("ledger/dropped/InvalidUrl"), 2)
        self.assertEqual(stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_spider_arguments_and_request_attributes(self):
        """C{-a} arguments become attributes; meta and cb_kwargs reach the callback."""
        seen = []

        class Args(Spider):
            name = "args"

            def start_requests(self):
                yield Request(self.url, callback=self.got, meta={"m": 1},
                              cb_kwargs={"label": self.label})

            def got(self, response, label):
                seen.append((label, response.meta["m"], response.status, "héllo" in response.text))

        url = self.server.add_page("/", body="<html>héllo</html>")
        yield crawl(Args, url=url, label="L")
        self.assertEqual(seen, [("L", 1, 200, True)])


class Ipv6LoopbackTests(unittest.TestCase):
    """The `crawl` command's spider on http://[::1]:PORT/: its own start URL is on-site."""

    @defer.inlineCallbacks
    def test_site_crawl_over_ipv6_loopback(self):
        from twisted.internet.error import CannotListenError

        from tinyscrapy.commands.crawl import SiteCrawler
        try:
            server = TestServer(interface="::1").start()
        except CannotListenError:
            raise unittest.SkipTest("no IPv6 loopback on this machine") from None
        self.addCleanup(server.stop)
        start = server.add_page("/", links=["/a"])
        server.add_page("/a")
        crawler = yield crawl(SiteCrawler, start_urls=[start])
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 2)
        self.assertEqual(server.hits["/a"], 1)

"""
C{engine.download(request)}, Scrapy's: a request outside the scheduler, through the
downloader middlewares, with its per-host slot, delays, retries, robots.txt and stats, no
place under C{max}, and an entry of its own in the ledger; against a local site.
"""

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.exceptions import IgnoreRequest, OffsiteRequest, RobotsDisallowed

from .helpers import crawl_and_collect, serve
from .servers import Delay, Page, Redirect, Robots, Sequence, Status


class DownloadingSpider(Spider):
    """Fetches C{start}; its callback downloads each of C{urls} with engine.download and
    yields one item with what came back (a status, or the failure's class)."""

    name = "downloading"
    urls = ()

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        downloads = [self.crawler.engine.download(Request(url)) for url in self.urls]
        d = defer.DeferredList(downloads, consumeErrors=True)
        d.addCallback(self._cb_all_done)
        return d

    def _cb_all_done(self, results):
        outcome = [result.status if ok else result.type.__name__ for ok, result in results]
        return [{"outcome": outcome}]


class EngineDownloadTests(unittest.TestCase):
    """What engine.download goes through, measured at the server and in the stats."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")

    @defer.inlineCallbacks
    def crawl_downloads(self, urls, **settings):
        """@return: a Deferred firing with the crawler and the outcome of each download."""
        crawler, items = yield crawl_and_collect(DownloadingSpider, settings,
                                                 start=self.start, urls=urls)
        return crawler, items[0]["outcome"]

    @defer.inlineCallbacks
    def test_no_place_under_max_and_an_entry_in_the_ledger(self):
        """With CONCURRENT_REQUESTS=1 the page's callback still gets its downloads (no
        deadlock); each is a ledger entry of its own, and the books balance."""
        urls = [self.server.add(f"/f{i}", Page(b"x" * i or b"0")) for i in range(3)]
        crawler, outcome = yield self.crawl_downloads(urls, CONCURRENT_REQUESTS=1)
        self.assertEqual(outcome, [200, 200, 200])
        stats = crawler.stats.get_stats()
        self.assertEqual(stats["ledger/opened"], 4)
        self.assertEqual(stats["ledger/handled"], 4)
        self.assertEqual(stats["ledger/missing"], 0)
        self.assertEqual(stats["downloader/request_count"], 4)
        self.assertEqual(stats["response_received_count"], 4)

    @defer.inlineCallbacks
    def test_per_host_slot_and_delay(self):
        """Ten downloads at once from one host with CONCURRENT_REQUESTS_PER_DOMAIN=2: at
        most two at the server at a time; with DOWNLOAD_DELAY, sends are spaced."""
        urls = [self.server.add(f"/slow{i}", Delay(0.05, b"slow")) for i in range(10)]
        _, outcome = yield self.crawl_downloads(urls, CONCURRENT_REQUESTS_PER_DOMAIN=2)
        self.assertEqual(outcome, [200] * 10)
        self.assertEqual(self.server.max_in_flight, 2)
        spaced = [self.server.add(f"/d{i}", Page(b"d")) for i in range(3)]
        yield self.crawl_downloads(spaced, DOWNLOAD_DELAY=0.2, RANDOMIZE_DOWNLOAD_DELAY=False)
        times = [r.time for r in self.server.requests if r.path.startswith("/d")]
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        self.assertEqual(len(gaps), 2)
        self.assertTrue(all(gap >= 0.18 for gap in gaps), gaps)

    @defer.inlineCallbacks
    def test_retries_and_redirects_are_followed(self):
        """A 503 is retried (after its backoff), a redirect followed; both continue the
        same ledger entry."""
        flaky = self.server.add("/flaky", Sequence([Status(503), Page(b"ok")]))
        self.server.add("/target", Page(b"there"))
        moved = self.server.add("/moved", Redirect("/target"))
        crawler, outcome = yield self.crawl_downloads([flaky, moved], RETRY_BACKOFF_BASE=0.01)
        self.assertEqual(outcome, [200, 200])
        self.assertEqual(self.server.hits["/flaky"], 2)
        self.assertEqual(self.server.hits["/target"], 1)
        stats = crawler.stats.get_stats()
        self.assertEqual(stats["retry/count"], 1)
        self.assertEqual((stats["ledger/opened"], stats["ledger/missing"]), (3, 0))

    @defer.inlineCallbacks
    def test_robots_and_offsite_refuse_it(self):
        """robots.txt and allowed_domains refuse a download as they refuse a page: the
        Deferred errbacks with the IgnoreRequest, the ledger counts it as dropped."""
        self.server.add("/robots.txt", Robots("User-agent: *\nDisallow: /private\n"))
        private = self.server.add("/private", Page(b"secret"))
        other = "http://localhost:1/elsewhere"
        DownloadingSpider.allowed_domains = ["127.0.0.1"]
        self.addCleanup(delattr, DownloadingSpider, "allowed_domains")
        crawler, outcome = yield self.crawl_downloads([private, other], ROBOTSTXT_OBEY=True)
        self.assertEqual(outcome, [RobotsDisallowed.__name__, OffsiteRequest.__name__])
        self.assertTrue(issubclass(RobotsDisallowed, IgnoreRequest))
        self.assertEqual(self.server.hits["/private"], 0)
        stats = crawler.stats.get_stats()
        self.assertEqual(stats["ledger/dropped"], 2)
        self.assertEqual(stats["ledger/missing"], 0)

    @defer.inlineCallbacks
    def test_a_failed_download(self):
        """A connection refused: the errback gets the failure, counted as failed."""
        crawler, outcome = yield self.crawl_downloads(["http://127.0.0.1:1/none"],
                                                      RETRY_ENABLED=False)
        self.assertEqual(len(outcome), 1)
        self.assertNotEqual(outcome[0], 200)
        stats = crawler.stats.get_stats()
        self.assertEqual((stats["ledger/failed"], stats["ledger/missing"]), (1, 0))

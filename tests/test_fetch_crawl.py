"""
The fetch path inside whole crawls: a hostile site's failures are each counted by kind,
logged once with their URL, and never stop the crawl.
"""

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Spider
from tinyscrapy.downloadermiddlewares import httpcompression as brzstd

from .fetchutil import CapturedLogs
from .helpers import crawl, serve
from .servers import (
    CheapGzipBomb,
    DeclaredLength,
    Drop,
    EndlessChunked,
    Gzip,
    NoAnswer,
    Page,
    Partial,
    StallAfterHeaders,
    Status,
    Trickle,
)


class PagesSpider(Spider):
    """One item per HTML page with its title; follows every link."""

    name = "pages"

    def parse(self, response):
        if not response.is_text:
            return
        yield {"url": response.url, "title": response.css("title::text").get()}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


def count(stats, kind):
    return stats.get_value(f"downloader/exception_type_count/{kind}")


class HostileSiteTests(unittest.TestCase):
    """One crawl of a site where most links misbehave."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_every_failure_counted_and_logged_once(self):
        """Each bad page fails with its own kind, is logged once with its URL, and the good
        pages are all scraped."""
        server = self.server
        bad = {
            "/stall": StallAfterHeaders(),
            "/trickle": Trickle(1000, 0.1),
            "/silent": NoAnswer(),
            "/drop": Drop(),
            "/partial": Partial(b"x" * 10, 100),
            "/bomb": CheapGzipBomb(8 << 30),
            "/huge": DeclaredLength(10 ** 10),
            "/endless": EndlessChunked(),
            "/liar": Page(b"<html>plain</html>", headers={"content-encoding": "gzip"}),
            "/missing": Status(404),
        }
        for path, resource in bad.items():
            server.add(path, resource)
        good = [f"/ok/{i}" for i in range(5)]
        for path in good:
            server.add_page(path, title=path)
        start = server.add_page("/", links=[*bad, *good])
        logs = CapturedLogs(self)
        crawler = yield crawl(PagesSpider, {"DOWNLOAD_TIMEOUT": 1.0,
                                            "DOWNLOAD_MAXSIZE": 4 << 20,
                                            "RETRY_ENABLED": False},
                              start_urls=[start])
        stats = crawler.stats
        self.assertEqual(stats.get_value("finish_reason"), "finished")
        self.assertEqual(stats.get_value("item_scraped_count"), 6)
        self.assertEqual(count(stats, "tinyscrapy.exceptions.DownloadTimeout"), 3)
        self.assertEqual(count(stats, "tinyscrapy.exceptions.ResponseTooLarge"), 2)
        self.assertEqual(count(stats, "tinyscrapy.exceptions.DecompressionBomb"), 1)
        self.assertEqual(count(stats, "tinyscrapy.exceptions.ContentDecodingError"), 1)
        # twisted's ResponseNeverReceived and ResponseFailed, as Scrapy 2.19 raises them
        self.assertEqual(count(stats, "tinyscrapy.exceptions.DownloadFailedError"), 1)
        self.assertEqual(count(stats, "tinyscrapy.exceptions.ResponseDataLossError"), 1)
        self.assertEqual(stats.get_value("downloader/exception_count"), 9)
        self.assertEqual(stats.get_value("downloader/response_status_count/404"), 1)
        self.assertEqual(stats.get_value("downloader/response_status_count/200"), 6)
        for path in bad:
            self.assertEqual(server.hits[path], 1, path)
            if path == "/missing":  # an HTTP error is logged at INFO, as in Scrapy
                continue
            url = server.url(path)
            mentions = [m for _, m in logs.messages if url + ">" in m or url + " " in m]
            self.assertEqual(len(mentions), 1, (path, mentions))

    @defer.inlineCallbacks
    def test_bad_urls_are_errbacks_not_crashes(self):
        """Start URLs with bad hosts or ports fail one by one; the crawl goes on."""
        start = self.server.add_page("/", title="good")
        bad = ["http://exa mple.com/", "http://a..b/", "http://127.0.0.1:99999/",
               "http://[::1/", "http://-bad-.example/"]
        crawler = yield crawl(PagesSpider, start_urls=[*bad, start])
        stats = crawler.stats
        self.assertEqual(stats.get_value("item_scraped_count"), 1)
        # each is dropped once: by the scope (which refuses a host it cannot parse) or
        # by the fetcher (which checks host names and ports strictly)
        self.assertEqual(stats.get_value("ledger/dropped/InvalidUrl"), len(bad))
        self.assertGreaterEqual(count(stats, "tinyscrapy.exceptions.InvalidUrl"), 1)
        self.assertEqual(stats.get_value("finish_reason"), "finished")
        self.assertIsNone(stats.get_value("engine/unexpected_errors/ValueError"))

    @defer.inlineCallbacks
    def test_bytes_on_the_wire_and_decoded(self):
        """The stats keep compressed and decoded bytes apart."""
        body = b"<html><title>z</title>" + b"<p>repeat</p>" * 5000 + b"</html>"
        start = self.server.add("/", Gzip(body))
        crawler = yield crawl(PagesSpider, start_urls=[start])
        stats = crawler.stats
        self.assertEqual(stats.get_value("downloader/response_bytes_decoded"), len(body))
        self.assertLess(stats.get_value("downloader/response_bytes"), len(body) // 10)
        self.assertEqual(crawler.engine.downloader.statistics().decoded_bytes, len(body))


class BrokenEncodingCrawlTests(unittest.TestCase):
    """A body whose encoding is broken, in a whole crawl."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_truncated_zstd_counted_and_logged_once(self):
        """A zstd body cut short is one ContentDecodingError: counted, logged once with its
        URL, not retried; the other pages are scraped."""
        if brzstd.zstandard is None:
            raise unittest.SkipTest("zstandard is not installed (pip install '.[compression]')")
        body = b"<html><title>cut</title>" + b"<p>words</p>" * 5000 + b"</html>"
        cut = brzstd.zstandard.ZstdCompressor().compress(body)[:-8]
        self.server.add("/cut", Page(cut, headers={"content-encoding": "zstd"}))
        self.server.add_page("/ok", title="ok")
        start = self.server.add_page("/", links=["/cut", "/ok"])
        logs = CapturedLogs(self)
        crawler = yield crawl(PagesSpider, start_urls=[start])
        stats = crawler.stats
        self.assertEqual(count(stats, "tinyscrapy.exceptions.ContentDecodingError"), 1)
        self.assertEqual(stats.get_value("downloader/exception_count"), 1)
        self.assertEqual(stats.get_value("item_scraped_count"), 2)
        self.assertEqual(self.server.hits["/cut"], 1)
        url = self.server.url("/cut")
        mentions = [m for _, m in logs.messages if url + ">" in m or url + " " in m]
        self.assertEqual(len(mentions), 1, mentions)
        self.assertIn("ends early", mentions[0])

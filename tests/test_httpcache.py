"""
The HTTP cache: a second crawl of the same pages is answered from disk, and the server is
the evidence (its hit counts do not move).
"""

import json
import logging
import os

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial import unittest

from tinyscrapy import Request
from tinyscrapy.downloadermiddlewares.httpcache import FilesystemCacheStorage, HttpCacheMiddleware
from tinyscrapy.exceptions import NotCached
from tinyscrapy.http import HttpResponse
from tinyscrapy.settings import Settings
from tinyscrapy.spiders import Spider
from tinyscrapy.statscollectors import StatsCollector

from .helpers import crawl, serve
from .logs import capture_logs
from .recording import Recorder
from .servers import Gzip, Redirect, Robots, Status


class ItemSpider(Spider):
    """Follows every link; one item per page (its URL and title), kept in C{items}."""

    name = "items"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.items = []
        self.responses = []

    def parse(self, response):
        self.responses.append(response)
        item = {"url": response.url, "title": response.css("title::text").get()}
        self.items.append(item)
        yield item
        yield from response.follow_all(css="a")


class CacheCrawlTests(unittest.TestCase):
    """Whole crawls with C{HTTPCACHE_ENABLED}, twice over the same site."""

    timeout = 30  # a crawl that never ends (a request left waiting) fails, not hangs

    def setUp(self):
        self.server = serve(self)
        self.directory = os.path.abspath(self.mktemp())

    def crawl(self, spidercls=Recorder, settings=None, **spider_args):
        base = {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": self.directory}
        base.update(settings or {})
        return crawl(spidercls, base, **spider_args)

    def entry_path(self, spider_name, url, **kwargs):
        return FilesystemCacheStorage.at(self.directory, Clock()).path(
            spider_name, Request(url, **kwargs))

    @defer.inlineCallbacks
    def test_second_crawl_is_served_from_the_cache(self):
        """The second crawl sends nothing to the server and scrapes the same items."""
        server = self.server
        start = server.add_page("/", links=["/a", "/b"], title="home")
        server.add_page("/a", links=["/b"], title="A")
        server.add_page("/b", title="B")
        first = yield self.crawl(ItemSpider, start_urls=[start])
        self.assertEqual(dict(server.hits), {"/": 1, "/a": 1, "/b": 1})
        stats = first.stats
        self.assertEqual(stats.get_value("httpcache/miss"), 3)
        self.assertEqual(stats.get_value("httpcache/store"), 3)
        self.assertIsNone(stats.get_value("httpcache/hit"))
        self.assertEqual([r.flags for r in first.spider.responses], [[], [], []])

        second = yield self.crawl(ItemSpider, start_urls=[start])
        self.assertEqual(dict(server.hits), {"/": 1, "/a": 1, "/b": 1})
        self.assertEqual(sorted(second.spider.items, key=str),
                         sorted(first.spider.items, key=str))
        stats = second.stats
        self.assertEqual(stats.get_value("httpcache/hit"), 3)
        self.assertIsNone(stats.get_value("httpcache/miss"))
        self.assertIsNone(stats.get_value("httpcache/store"))  # a hit is not stored again
        self.assertIsNone(stats.get_value("downloader/request_count"))
        self.assertEqual(stats.get_value("response_received_count"), 3)
        for response in second.spider.responses:
            self.assertEqual(response.flags, ["cached"])
            self.assertEqual(response.status, 200)
            self.assertIn(b"text/html", response.headers["Content-Type"])
        self.assertTrue(os.path.isfile(self.entry_path("items", start)))

    @defer.inlineCallbacks
    def test_robots_txt_from_the_cache(self):
        """With ROBOTSTXT_OBEY, robots.txt is cached too and obeyed on the cached crawl."""
        server = self.server
        server.add("/robots.txt", Robots("User-agent: *\nDisallow: /private\n"))
        start = server.add_page("/", links=["/a", "/private"])
        server.add_page("/a")
        server.add_page("/private")
        settings = {"ROBOTSTXT_OBEY": True}
        yield self.crawl(ItemSpider, settings, start_urls=[start])
        self.assertEqual(dict(server.hits), {"/robots.txt": 1, "/": 1, "/a": 1})
        second = yield self.crawl(ItemSpider, settings, start_urls=[start])
        self.assertEqual(dict(server.hits), {"/robots.txt": 1, "/": 1, "/a": 1})
        self.assertEqual(sorted(item["url"] for item in second.spider.items),
                         [start, server.url("/a")])
        self.assertEqual(second.stats.get_value("robotstxt/forbidden"), 1)
        self.assertEqual(second.stats.get_value("httpcache/hit"), 3)

    @defer.inlineCallbacks
    def test_ignored_http_codes_are_not_stored(self):
        """A status in HTTPCACHE_IGNORE_HTTP_CODES is downloaded again every time."""
        server = self.server
        ok = server.add_page("/ok")
        gone = server.add("/gone", Status(404, b"gone"))
        settings = {"HTTPCACHE_IGNORE_HTTP_CODES": [404]}
        first = yield self.crawl(settings=settings, start_urls=[ok, gone])
        self.assertEqual(first.stats.get_value("httpcache/uncacheable"), 1)
        self.assertEqual(first.stats.get_value("httpcache/store"), 1)
        self.assertFalse(os.path.exists(self.entry_path("recorder", gone)))
        second = yield self.crawl(settings=settings, start_urls=[ok, gone])
        self.assertEqual(dict(server.hits), {"/ok": 1, "/gone": 2})
        self.assertEqual(second.stats.get_value("httpcache/hit"), 1)
        self.assertEqual(second.stats.get_value("httpcache/miss"), 1)
        self.assertEqual(len(second.spider.failures), 1)  # the 404 still fails, as before

    @defer.inlineCallbacks
    def test_other_error_codes_are_stored(self):
        """Without HTTPCACHE_IGNORE_HTTP_CODES, a 404 is cached like a page (Scrapy's)."""
        gone = self.server.add("/gone", Status(404, b"gone"))
        yield self.crawl(start_urls=[gone])
        second = yield self.crawl(start_urls=[gone])
        self.assertEqual(self.server.hits["/gone"], 1)
        self.assertEqual(second.stats.get_value("httpcache/hit"), 1)
        self.assertEqual(second.spider.failures[0].value.response.status, 404)

    @defer.inlineCallbacks
    def test_ignore_missing_drops_uncached_requests(self):
        """With HTTPCACHE_IGNORE_MISSING, a request not in the cache is dropped, not sent."""
        server = self.server
        cached = server.add_page("/cached")
        missing = server.add_page("/missing")
        yield self.crawl(start_urls=[cached])
        second = yield self.crawl(settings={"HTTPCACHE_IGNORE_MISSING": True},
                                  start_urls=[cached, missing])
        self.assertEqual(dict(server.hits), {"/cached": 1})
        spider = second.spider
        self.assertEqual([r.url for r in spider.responses], [cached])
        self.assertEqual(len(spider.failures), 1)
        self.assertIsInstance(spider.failures[0].value, NotCached)
        stats = second.stats
        self.assertEqual(stats.get_value("httpcache/ignore"), 1)
        self.assertEqual(stats.get_value("httpcache/hit"), 1)
        self.assertEqual(stats.get_value("httpcache/miss"), 1)  # as Scrapy counts it
        self.assertEqual(stats.get_value("ledger/dropped/NotCached"), 1)

    @defer.inlineCallbacks
    def test_redirect_is_replayed_from_the_cache(self):
        """A 302 is cached as a 302; the redirect middleware follows it again offline."""
        server = self.server
        old = server.add("/old", Redirect("/new", 302))
        new = server.add_page("/new", title="new")
        yield self.crawl(start_urls=[old])
        self.assertTrue(os.path.isfile(self.entry_path("recorder", old)))
        second = yield self.crawl(start_urls=[old])
        self.assertEqual(dict(server.hits), {"/old": 1, "/new": 1})
        [response] = second.spider.responses
        self.assertEqual(response.url, new)
        self.assertEqual(response.flags, ["cached"])
        self.assertEqual(response.meta["redirect_urls"], [old])
        self.assertEqual(response.meta["redirect_reasons"], [302])
        self.assertEqual(second.stats.get_value("redirect/count"), 1)
        self.assertEqual(second.stats.get_value("httpcache/hit"), 2)

    @defer.inlineCallbacks
    def test_dont_cache(self):
        """meta["dont_cache"] neither reads nor writes the cache."""
        page = self.server.add_page("/page")

        def make(spider):
            return [Request(page, meta={"dont_cache": True}, dont_filter=True)]

        first = yield self.crawl(make=make)
        second = yield self.crawl(make=make)
        self.assertEqual(self.server.hits["/page"], 2)
        self.assertFalse(os.path.exists(self.entry_path("recorder", page)))
        for crawler in (first, second):
            self.assertEqual(len(crawler.spider.responses), 1)
            for key in ("hit", "miss", "store"):
                self.assertIsNone(crawler.stats.get_value(f"httpcache/{key}"))

    @defer.inlineCallbacks
    def test_corrupt_file_is_a_miss(self):
        """A broken cache file is a miss, logged once with its URL, then replaced."""
        server = self.server
        cut = server.add_page("/cut", body="x" * 1000)
        garbage = server.add_page("/garbage")
        yield self.crawl(start_urls=[cut, garbage])
        path = self.entry_path("recorder", cut)
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[:-10])  # the body cut short
        with open(self.entry_path("recorder", garbage), "wb") as f:
            f.write(b"\x00\xff not an entry at all")
        logs = capture_logs(self)
        second = yield self.crawl(start_urls=[cut, garbage])
        self.assertEqual(dict(server.hits), {"/cut": 2, "/garbage": 2})
        self.assertEqual(sorted(len(r.body) for r in second.spider.responses),
                         sorted([len(data) - data.index(b"\n") - 1,
                                 len(server._routes.routes["/garbage"].body)]))
        self.assertEqual(second.spider.failures, [])
        stats = second.stats
        self.assertEqual(stats.get_value("httpcache/corrupt"), 2)
        self.assertEqual(stats.get_value("httpcache/miss"), 2)
        self.assertEqual(stats.get_value("httpcache/store"), 2)
        warnings = [m for m in logs.messages(logging.WARNING) if "corrupt cache" in m]
        self.assertEqual(len(warnings), 2)
        self.assertEqual(sum(cut in m for m in warnings), 1)
        self.assertEqual(sum(garbage in m for m in warnings), 1)
        third = yield self.crawl(start_urls=[cut, garbage])
        self.assertEqual(dict(server.hits), {"/cut": 2, "/garbage": 2})
        self.assertEqual(third.stats.get_value("httpcache/hit"), 2)

    @defer.inlineCallbacks
    def test_entry_stored_encoded_is_replayed_decoded(self):
        """A gzip entry stored with COMPRESSION_ENABLED off is decoded on replay with it
        on: the spider gets the page, without Content-Encoding."""
        page = b"<html><title>zipped</title>" + b"x" * 5000 + b"</html>"
        url = self.server.add("/gz", Gzip(page))
        first = yield self.crawl(ItemSpider, {"COMPRESSION_ENABLED": False},
                                 start_urls=[url])
        [raw] = first.spider.responses
        self.assertEqual(raw.headers.get("Content-Encoding"), b"gzip")  # stored encoded
        second = yield self.crawl(ItemSpider, start_urls=[url])
        self.assertEqual(self.server.hits["/gz"], 1)
        [response] = second.spider.responses
        self.assertEqual(response.flags, ["cached"])
        self.assertEqual(response.body, page)
        self.assertNotIn("Content-Encoding", response.headers)
        self.assertEqual(second.spider.items, [{"url": url, "title": "zipped"}])
        third = yield self.crawl(ItemSpider, {"COMPRESSION_ENABLED": False},
                                 start_urls=[url])
        [still_raw] = third.spider.responses  # compression off: replayed as stored
        self.assertEqual(still_raw.body, raw.body)
        self.assertEqual(still_raw.headers.get("Content-Encoding"), b"gzip")

    @defer.inlineCallbacks
    def test_encoded_entry_within_the_limits(self):
        """Decoding a stored body keeps to DOWNLOAD_MAXSIZE: a miss, downloaded again
        (and refused again), the entry kept for a crawl with a larger limit."""
        url = self.server.add("/gz", Gzip(b"x" * 100_000))
        yield self.crawl(settings={"COMPRESSION_ENABLED": False}, start_urls=[url])
        logs = capture_logs(self)
        second = yield self.crawl(settings={"DOWNLOAD_MAXSIZE": 50_000}, start_urls=[url])
        self.assertEqual(self.server.hits["/gz"], 2)
        self.assertEqual(second.spider.responses, [])
        self.assertEqual(second.stats.get_value("httpcache/miss"), 1)
        self.assertEqual(second.stats.get_value("httpcache/too_large"), 1)
        self.assertIn(url, logs.text(logging.WARNING))
        self.assertTrue(os.path.isfile(self.entry_path("recorder", url)))
        third = yield self.crawl(start_urls=[url])
        self.assertEqual(self.server.hits["/gz"], 2)
        self.assertEqual(third.spider.responses[0].body, b"x" * 100_000)

    @defer.inlineCallbacks
    def test_encoded_entry_that_does_not_decode_is_corrupt(self):
        """A stored gzip body that is not gzip is a corrupt entry: a miss, replaced."""
        url = self.server.add("/gz", Gzip(b"<html><title>z</title></html>"))
        yield self.crawl(settings={"COMPRESSION_ENABLED": False}, start_urls=[url])
        path = self.entry_path("recorder", url)
        with open(path, "rb") as f:
            header, _, body = f.read().partition(b"\n")
        with open(path, "wb") as f:
            f.write(header + b"\n" + b"Z" * len(body))
        second = yield self.crawl(start_urls=[url])
        self.assertEqual(self.server.hits["/gz"], 2)
        self.assertEqual(second.stats.get_value("httpcache/corrupt"), 1)
        self.assertEqual(second.spider.responses[0].body, b"<html><title>z</title></html>")

    def in_fresh_directory(self):
        """Make the current directory an empty one for this test."""
        directory = os.path.abspath(self.mktemp())
        os.makedirs(directory)
        self.addCleanup(os.chdir, os.getcwd())
        os.chdir(directory)
        return directory

    @defer.inlineCallbacks
    def test_disabled_by_default(self):
        """Without HTTPCACHE_ENABLED nothing is cached and no directory is made."""
        directory = self.in_fresh_directory()
        page = self.server.add_page("/page")
        for _ in range(2):
            crawler = yield crawl(Recorder, start_urls=[page])
            paths = crawler.engine.downloader.middleware.paths
            self.assertNotIn("tinyscrapy.downloadermiddlewares.httpcache.HttpCacheMiddleware",
                             paths)
            self.assertEqual([k for k in crawler.stats.get_stats() if "httpcache" in k], [])
        self.assertEqual(self.server.hits["/page"], 2)
        self.assertEqual(os.listdir(directory), [])

    @defer.inlineCallbacks
    def test_relative_directory_is_under_dot_tinyscrapy(self):
        """The default HTTPCACHE_DIR is .tinyscrapy/httpcache in the current directory."""
        directory = self.in_fresh_directory()
        page = self.server.add_page("/page")
        yield crawl(Recorder, {"HTTPCACHE_ENABLED": True}, start_urls=[page])
        root = os.path.join(directory, ".tinyscrapy", "httpcache")
        self.assertTrue(os.path.isfile(
            FilesystemCacheStorage.at(root, Clock()).path("recorder", Request(page))))
        self.assertEqual(os.listdir(os.path.join(root)), ["recorder"])


class FakeSpider:
    name = "fake"


class CacheMiddlewareTests(unittest.TestCase):
    """The middleware alone, on a L{Clock}."""

    def setUp(self):
        self.clock = Clock()
        self.clock.advance(1000)
        self.stats = StatsCollector()
        self.directory = os.path.abspath(self.mktemp())

    def middleware(self, **settings):
        values = {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": self.directory}
        values.update(settings)
        return HttpCacheMiddleware(Settings(values), self.stats, self.clock)

    def store(self, middleware, url="http://example.com/"):
        request = Request(url)
        response = HttpResponse(url, 200, {"Content-Type": "text/plain"}, b"body", request)
        self.assertIs(middleware.process_response(request, response, FakeSpider()), response)
        return request

    def test_expiration(self):
        """An entry older than HTTPCACHE_EXPIRATION_SECS is a miss, then stored afresh."""
        middleware = self.middleware(HTTPCACHE_EXPIRATION_SECS=10)
        request = self.store(middleware)
        self.clock.advance(9)
        cached = middleware.process_request(request, FakeSpider())
        self.assertEqual((cached.body, cached.flags), (b"body", ["cached"]))
        self.clock.advance(2)
        self.assertIsNone(middleware.process_request(request, FakeSpider()))
        self.assertEqual(self.stats.get_value("httpcache/miss"), 1)
        self.store(middleware)
        self.assertIsNotNone(middleware.process_request(request, FakeSpider()))
        self.assertEqual(self.stats.get_value("httpcache/hit"), 2)

    def test_no_expiration(self):
        """HTTPCACHE_EXPIRATION_SECS = 0 keeps entries for ever."""
        middleware = self.middleware()
        request = self.store(middleware)
        self.clock.advance(10 ** 9)
        self.assertIsNotNone(middleware.process_request(request, FakeSpider()))

    def test_ignored_scheme(self):
        """A file: URL passes by the cache both ways (HTTPCACHE_IGNORE_SCHEMES)."""
        middleware = self.middleware()
        request = self.store(middleware, "file:///tmp/page.html")
        self.assertIsNone(middleware.process_request(request, FakeSpider()))
        self.assertEqual(self.stats.get_stats(), {})
        self.assertFalse(os.path.exists(self.directory))

    def test_headers_and_status_survive(self):
        """Status, repeated headers, URL and binary body read back as stored."""
        middleware = self.middleware()
        request = Request("http://example.com/a")
        body = bytes(range(256)) * 4
        response = HttpResponse("http://example.com/b", 301, {"Location": "/c"}, body, request)
        response.headers.appendlist("Set-Cookie", "a=1")
        response.headers.appendlist("Set-Cookie", "b=2")
        middleware.process_response(request, response, FakeSpider())
        cached = middleware.process_request(Request("http://example.com/a"), FakeSpider())
        self.assertEqual((cached.url, cached.status, cached.body),
                         ("http://example.com/b", 301, body))
        self.assertEqual(cached.headers.getlist("Set-Cookie"), [b"a=1", b"b=2"])
        self.assertEqual(cached.headers["location"], b"/c")

    def test_not_configured_when_off(self):
        """from_crawler raises NotConfigured unless HTTPCACHE_ENABLED."""
        from tinyscrapy.crawler import Crawler
        from tinyscrapy.exceptions import NotConfigured
        crawler = Crawler(Recorder, Settings({}), reactor=self.clock)
        self.assertRaises(NotConfigured, HttpCacheMiddleware.from_crawler, crawler)

    def test_store_error_is_counted_not_raised(self):
        """A cache directory that cannot be written is logged; the response goes on."""
        with open(self.directory, "w") as f:  # a file where the directory should be
            f.write("not a directory")
        logs = capture_logs(self)
        self.store(self.middleware())
        self.assertEqual(self.stats.get_value("httpcache/store_error"), 1)
        self.assertIsNone(self.stats.get_value("httpcache/store"))
        self.assertIn("http://example.com/", logs.text(logging.WARNING))


class SharedDirectoryTests(unittest.TestCase):
    """Several writers of one cache directory (several crawls, several processes)."""

    def setUp(self):
        self.clock = Clock()
        self.directory = os.path.abspath(self.mktemp())

    def test_interleaved_writers_of_one_entry(self):
        """A second writer that stores the same entry while the first one is between its
        write and its rename: both succeed, the entry is whole, no temporary is left."""
        first = FilesystemCacheStorage.at(self.directory, self.clock)
        second = FilesystemCacheStorage.at(self.directory, self.clock)
        request = Request("http://example.com/shared")
        replace = os.replace
        interleaved = []

        def replace_after_the_other_writer(source, target):
            if not interleaved:  # the first writer is about to rename: the second writes
                interleaved.append(source)
                second.store("s", request, HttpResponse(request.url, 200, {}, b"B" * 5000,
                                                        request))
            replace(source, target)

        self.patch(os, "replace", replace_after_the_other_writer)
        first.store("s", request, HttpResponse(request.url, 200, {}, b"A" * 3000, request))
        cached = first.retrieve("s", request)
        self.assertEqual(cached.body, b"A" * 3000)  # the last rename wins, whole
        directory = os.path.dirname(first.path("s", request))
        self.assertEqual(os.listdir(directory), [os.path.basename(first.path("s", request))])

    def test_entries_are_private(self):
        """An entry is 0600 and the folders made for it 0700, whatever the umask allows:
        the cache holds pages fetched with the crawl's cookies."""
        storage = FilesystemCacheStorage.at(self.directory, self.clock)
        request = Request("http://example.com/mode")
        old = os.umask(0o002)
        try:
            storage.store("s", request, HttpResponse(request.url, 200, {}, b"x", request))
        finally:
            os.umask(old)
        path = storage.path("s", request)
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
        folder = os.path.dirname(path)
        while folder != os.path.dirname(self.directory):
            self.assertEqual(os.stat(folder).st_mode & 0o777, 0o700, folder)
            folder = os.path.dirname(folder)


class CacheDirectoryErrorTests(unittest.TestCase):
    """A cache directory that is not one, or cannot be read or written."""

    timeout = 30

    def setUp(self):
        self.directory = os.path.abspath(self.mktemp())

    def test_a_file_as_the_directory_stops_the_start(self):
        """HTTPCACHE_DIR naming a regular file is a UsageError naming the setting."""
        from tinyscrapy.crawler import Crawler
        from tinyscrapy.exceptions import UsageError
        with open(self.directory, "w") as f:
            f.write("not a directory")
        crawler = Crawler(Recorder, Settings({"HTTPCACHE_ENABLED": True,
                                              "HTTPCACHE_DIR": self.directory}), Clock())
        error = self.assertRaises(UsageError, HttpCacheMiddleware.from_crawler, crawler)
        self.assertIn("HTTPCACHE_DIR", str(error))
        self.assertIn(self.directory, str(error))
        self.assertNotIn("\n", str(error))

    def test_directory_is_made_at_start(self):
        """from_crawler makes the directory, so a crawl finds out at once it can."""
        from tinyscrapy.crawler import Crawler
        crawler = Crawler(Recorder, Settings({"HTTPCACHE_ENABLED": True,
                                              "HTTPCACHE_DIR": self.directory}), Clock())
        HttpCacheMiddleware.from_crawler(crawler)
        self.assertTrue(os.path.isdir(self.directory))

    @defer.inlineCallbacks
    def test_unwritable_spider_directory_logs_once_per_kind(self):
        """A file where the spider's directory should be: reads are plain misses, and
        the store errors are logged once, then summed up once at close."""
        server = serve(self)
        pages = [server.add_page(f"/{n}") for n in range(5)]
        os.makedirs(self.directory)
        with open(os.path.join(self.directory, "recorder"), "w") as f:
            f.write("in the way")
        logs = capture_logs(self)
        crawler = yield crawl(Recorder, {"HTTPCACHE_ENABLED": True,
                                         "HTTPCACHE_DIR": self.directory},
                              start_urls=pages)
        self.assertEqual(len(crawler.spider.responses), 5)
        stats = crawler.stats
        self.assertEqual(stats.get_value("httpcache/miss"), 5)
        self.assertIsNone(stats.get_value("httpcache/corrupt"))
        self.assertIsNone(stats.get_value("httpcache/read_error"))
        self.assertEqual(stats.get_value("httpcache/store_error"), 5)
        warnings = [m for m in logs.messages(logging.WARNING) if "cache" in m]
        self.assertEqual(len(warnings), 2, warnings)
        self.assertIn("ENOTDIR", warnings[1])
        self.assertIn("5", warnings[1])
        self.assertTrue(os.path.isfile(os.path.join(self.directory, "recorder")))

    def test_unreadable_entry_is_a_miss_and_kept(self):
        """An entry that cannot be read (a directory in its place) is a miss, logged
        once for all such errors, and not removed."""
        stats = StatsCollector()
        middleware = HttpCacheMiddleware(
            Settings({"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": self.directory}),
            stats, Clock())
        requests = [Request(f"http://example.com/{n}") for n in range(3)]
        for request in requests:
            os.makedirs(middleware.storage.path("fake", request))
        logs = capture_logs(self)
        for request in requests:
            self.assertIsNone(middleware.process_request(request, FakeSpider()))
        middleware.spider_closed(FakeSpider(), "finished")
        self.assertEqual(stats.get_value("httpcache/miss"), 3)
        self.assertEqual(stats.get_value("httpcache/read_error"), 3)
        self.assertIsNone(stats.get_value("httpcache/corrupt"))
        warnings = logs.messages(logging.WARNING)
        self.assertEqual(len(warnings), 2, warnings)
        self.assertIn(requests[0].url, warnings[0])
        for request in requests:
            self.assertTrue(os.path.isdir(middleware.storage.path("fake", request)))


class EntryValidationTests(unittest.TestCase):
    """An edited entry header is a corrupt entry: a miss, warned once with the URL."""

    def setUp(self):
        self.stats = StatsCollector()
        self.middleware = HttpCacheMiddleware(
            Settings({"HTTPCACHE_ENABLED": True,
                      "HTTPCACHE_DIR": os.path.abspath(self.mktemp())}),
            self.stats, Clock())

    def assertCorrupt(self, **changes):
        request = Request("http://example.com/page")
        response = HttpResponse(request.url, 200, {"Content-Type": "text/html"}, b"body",
                                request)
        self.middleware.process_response(request, response, FakeSpider())
        path = self.middleware.storage.path("fake", request)
        with open(path, "rb") as f:
            header, _, body = f.read().partition(b"\n")
        meta = json.loads(header)
        meta.update(changes)
        with open(path, "wb") as f:
            f.write(json.dumps(meta).encode() + b"\n" + body)
        logs = capture_logs(self)
        self.assertIsNone(self.middleware.process_request(request, FakeSpider()))
        self.assertEqual(self.stats.get_value("httpcache/corrupt"), 1)
        [warning] = logs.messages(logging.WARNING)
        self.assertIn(request.url, warning)
        self.assertFalse(os.path.exists(path))

    def test_headers_not_lists(self):
        """A header value that is a string, not a list of strings."""
        self.assertCorrupt(headers={"content-type": "text/html"})

    def test_header_values_not_strings(self):
        """A header value list holding a number."""
        self.assertCorrupt(headers={"content-type": [1]})

    def test_url_not_a_url(self):
        """A URL that is not http(s)."""
        self.assertCorrupt(url="not a url")

    def test_url_without_host(self):
        """An http URL without a host."""
        self.assertCorrupt(url="http:///page")

    def test_status_out_of_range(self):
        """A status outside 100-599."""
        self.assertCorrupt(status=99999)

    def test_status_a_boolean(self):
        """true is no status, though Python counts it as an int."""
        self.assertCorrupt(status=True)

    def test_time_not_a_number(self):
        """A stored time that is a string."""
        self.assertCorrupt(time="yesterday")

    def test_negative_length(self):
        """A length below zero."""
        self.assertCorrupt(length=-1)


class CacheCostTests(unittest.TestCase):
    """What a lookup costs: memory for a big entry, fingerprints per request."""

    def setUp(self):
        self.stats = StatsCollector()
        self.directory = os.path.abspath(self.mktemp())

    def middleware(self, crawler=None):
        middleware = HttpCacheMiddleware(
            Settings({"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": self.directory}),
            self.stats, Clock())
        middleware.crawler = crawler
        return middleware

    def test_big_entry_is_read_without_a_copy(self):
        """Reading an 8 MiB entry peaks at about one body, not two."""
        import tracemalloc
        storage = FilesystemCacheStorage.at(self.directory, Clock())
        request = Request("http://example.com/big")
        body = os.urandom(8 << 20)
        storage.store("s", request, HttpResponse(request.url, 200, {}, body, request))
        del body
        tracemalloc.start()
        self.addCleanup(tracemalloc.stop)
        response = storage.retrieve("s", request)
        _, peak = tracemalloc.get_traced_memory()
        self.assertEqual(len(response.body), 8 << 20)
        self.assertLess(peak, 1.25 * (8 << 20))

    def counting_fingerprints(self):
        from tinyscrapy.downloadermiddlewares import httpcache
        from tinyscrapy.utils.request import request_fingerprint
        calls = []

        def counted(request):
            calls.append(request)
            return request_fingerprint(request)

        self.patch(httpcache, "request_fingerprint", counted)
        return calls

    def miss_then_store(self, middleware, request):
        self.assertIsNone(middleware.process_request(request, FakeSpider()))
        response = HttpResponse(request.url, 200, {}, b"body", request)
        middleware.process_response(request, response, FakeSpider())
        self.assertEqual(middleware.process_request(request, FakeSpider()).body, b"body")

    def test_fingerprint_computed_once_per_request(self):
        """A miss, its store and a hit compute the fingerprint once."""
        calls = self.counting_fingerprints()
        self.miss_then_store(self.middleware(), Request("http://example.com/once"))
        self.assertEqual(len(calls), 1)

    def test_scheduler_fingerprint_reused(self):
        """A request the default scheduler fingerprinted costs no fingerprint at all."""
        from tinyscrapy.core.scheduler import Scheduler
        calls = self.counting_fingerprints()
        request = Request("http://example.com/scheduled")
        Scheduler().enqueue_request(request)
        self.miss_then_store(self.middleware(), request)
        self.assertEqual(calls, [])

    def test_other_scheduler_fingerprint_not_trusted(self):
        """With a scheduler fingerprint function of its own, request.fingerprint is not
        the cache's key: it is computed, and the entry is where it belongs."""
        from types import SimpleNamespace

        def by_url_only(request):
            return 7

        crawler = SimpleNamespace(engine=SimpleNamespace(
            scheduler=SimpleNamespace(fingerprint=by_url_only)))
        middleware = self.middleware(crawler)
        request = Request("http://example.com/other")
        request.fingerprint = by_url_only(request)
        self.miss_then_store(middleware, request)
        self.assertTrue(os.path.isfile(middleware.storage.path("fake", Request(request.url))))


class _Validated:
    """A page with an ETag and no lifetime: a request with the matching If-None-Match is
    answered 304; C{conditional} counts those."""

    isLeaf = True

    def __init__(self, body=b"<html><title>v1</title></html>", etag=b'"v1"'):
        self.body, self.etag, self.conditional = body, etag, 0

    def render(self, request):
        request.setHeader("etag", self.etag)
        request.setHeader("content-type", "text/html")
        if request.getHeader("if-none-match") == self.etag.decode():
            self.conditional += 1
            request.setResponseCode(304)
            return b""
        return self.body


class ScrapyPathsTests(unittest.TestCase):
    """The cache's parts at Scrapy's paths, through Scrapy's settings."""

    timeout = 30

    def setUp(self):
        self.server = serve(self)
        self.directory = os.path.abspath(self.mktemp())

    def crawl(self, settings=None, **spider_args):
        base = {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": self.directory}
        base.update(settings or {})
        return crawl(Recorder, base, **spider_args)

    @defer.inlineCallbacks
    def test_entry_of_another_url_is_a_miss(self):
        """Each of five entries replaced by the entry of another origin's page: five
        misses, each said once at WARNING with its URL; the five pages come from the
        server, not from the crafted entries."""
        pages = [self.server.add_page(f"/p{n}", title=f"page {n}") for n in range(5)]
        other = serve(self, "127.0.0.2")
        elsewhere = other.add_page("/evil", title="someone else's")
        yield self.crawl(start_urls=pages + [elsewhere])
        storage = FilesystemCacheStorage.at(self.directory)
        with open(storage.path("recorder", Request(elsewhere)), "rb") as f:
            crafted = f.read()
        for page in pages:
            with open(storage.path("recorder", Request(page)), "wb") as f:
                f.write(crafted)
        logs = capture_logs(self)
        second = yield self.crawl(start_urls=pages)
        titles = sorted(r.css("title::text").get() for r in second.spider.responses)
        self.assertEqual(titles, [f"page {n}" for n in range(5)])
        self.assertEqual(self.server.hits["/p0"], 2)
        self.assertEqual(second.stats.get_value("httpcache/retrieve_error"), 5)
        warnings = [m for m in logs.messages(logging.WARNING) if "cache entry" in m]
        self.assertEqual(len(warnings), 5)
        for page in pages:
            self.assertEqual(sum(page in m for m in warnings), 1)
        self.assertIn(elsewhere, warnings[0])

    @defer.inlineCallbacks
    def test_rfc2616_policy(self):
        """RFC2616Policy: a page with max-age is served from the cache; one with only an
        ETag is asked again with If-None-Match, and its 304 keeps the entry; a no-store
        page is never stored."""
        policy = {"HTTPCACHE_POLICY": "tinyscrapy.extensions.httpcache.RFC2616Policy"}
        fresh = self.server.add_page("/fresh", headers={"Cache-Control": "max-age=3600"})
        validated = _Validated()
        check = self.server.add("/check", validated)
        secret = self.server.add_page("/secret", headers={"Cache-Control": "no-store"})
        urls = [fresh, check, secret]
        yield self.crawl(policy, start_urls=urls)
        second = yield self.crawl(policy, start_urls=urls)
        self.assertEqual(self.server.hits["/fresh"], 1)
        self.assertEqual(self.server.hits["/check"], 2)
        self.assertEqual(validated.conditional, 1)
        self.assertEqual(self.server.hits["/secret"], 2)
        by_url = {r.url: r for r in second.spider.responses}
        self.assertIn("cached", by_url[check].flags)
        self.assertEqual(by_url[check].status, 200)
        self.assertEqual(by_url[check].css("title::text").get(), "v1")
        stats = second.stats
        self.assertEqual(stats.get_value("httpcache/hit"), 1)
        self.assertEqual(stats.get_value("httpcache/revalidate"), 1)
        self.assertEqual(stats.get_value("httpcache/uncacheable"), 1)

    @defer.inlineCallbacks
    def test_dbm_storage(self):
        """DbmCacheStorage: the second crawl is served from the spider's database, a
        private file; a value Scrapy would write (a pickle) is a miss, never unpickled."""
        import dbm
        import pickle
        storage = {"HTTPCACHE_STORAGE": "tinyscrapy.extensions.httpcache.DbmCacheStorage"}
        pages = [self.server.add_page(f"/d{n}") for n in range(3)]
        yield self.crawl(storage, start_urls=pages)
        second = yield self.crawl(storage, start_urls=pages)
        self.assertEqual(second.stats.get_value("httpcache/hit"), 3)
        self.assertEqual(self.server.hits["/d0"], 1)
        files = [name for name in os.listdir(self.directory) if name.startswith("recorder.db")]
        self.assertTrue(files)
        for name in files:
            self.assertEqual(os.stat(os.path.join(self.directory, name)).st_mode & 0o777, 0o600)
        self.assertEqual(os.stat(self.directory).st_mode & 0o777, 0o700)
        from tinyscrapy.utils.request import request_fingerprint
        key = f"{request_fingerprint(Request(pages[0])):016x}".encode()
        marker = os.path.join(self.directory, "unpickled")
        with dbm.open(os.path.join(self.directory, "recorder.db"), "w") as db:
            db[key] = pickle.dumps(_Touch(marker))
        third = yield self.crawl(storage, start_urls=pages[:1])
        self.assertFalse(os.path.exists(marker))
        self.assertEqual(third.stats.get_value("httpcache/corrupt"), 1)
        self.assertEqual(self.server.hits["/d0"], 2)

    def test_spider_names_stay_inside_the_directory(self):
        """A spider name that is not one directory entry (../../evil, .., a leading /) is
        stored under an encoded name inside HTTPCACHE_DIR, for both storages."""
        from tinyscrapy.extensions.httpcache import name_in_directory
        request = Request("http://127.0.0.1/x")
        storage = FilesystemCacheStorage.at(self.directory)
        root = os.path.realpath(self.directory)
        for name in ("../../evil", "..", ".", "/etc/x", "a\\b", "%2E%2E", "plain"):
            path = os.path.realpath(storage.path(name, request))
            self.assertTrue(path.startswith(root + os.sep), (name, path))
            entry = name_in_directory(name)
            self.assertEqual(os.path.dirname(os.path.join(root, entry)), root, name)
        self.assertEqual(name_in_directory("plain"), "plain")
        self.assertNotEqual(name_in_directory("%2E%2E"), name_in_directory(".."))

    @defer.inlineCallbacks
    def test_gzip_entries(self):
        """HTTPCACHE_GZIP: entries are gzip files on disk, read back as stored."""
        page = self.server.add_page("/z", body="<p>" + "words " * 500 + "</p>")
        yield self.crawl({"HTTPCACHE_GZIP": True}, start_urls=[page])
        path = FilesystemCacheStorage.at(self.directory).path("recorder", Request(page))
        with open(path, "rb") as f:
            self.assertEqual(f.read(2), b"\x1f\x8b")
        second = yield self.crawl({"HTTPCACHE_GZIP": True}, start_urls=[page])
        response, = second.spider.responses
        self.assertIn("cached", response.flags)
        self.assertIn(b"words words", response.body)
        self.assertEqual(self.server.hits["/z"], 1)

    def test_names_at_scrapy_paths(self):
        """DummyPolicy, RFC2616Policy, FilesystemCacheStorage, DbmCacheStorage in
        extensions.httpcache; the defaults name the first and the third."""
        from tinyscrapy.extensions import httpcache
        from tinyscrapy.settings.default_settings import DEFAULTS
        for name in ("DummyPolicy", "RFC2616Policy", "FilesystemCacheStorage",
                     "DbmCacheStorage", "parse_cachecontrol", "rfc1123_to_epoch"):
            self.assertTrue(hasattr(httpcache, name), name)
        self.assertEqual(DEFAULTS["HTTPCACHE_POLICY"],
                         "tinyscrapy.extensions.httpcache.DummyPolicy")
        self.assertEqual(DEFAULTS["HTTPCACHE_STORAGE"],
                         "tinyscrapy.extensions.httpcache.FilesystemCacheStorage")
        self.assertEqual(httpcache.parse_cachecontrol(b"public, max-age=3600"),
                         {b"public": None, b"max-age": b"3600"})


class _Touch:
    """Unpickling this creates a file: proof that a pickle was loaded."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))

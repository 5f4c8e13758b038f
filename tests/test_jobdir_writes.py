"""
C{--jobdir}: what happens when the frontier cannot be written, the lock that keeps a
second process out, the per-spider directory, and loading a large directory in chunks.
Unit tests of L{DiskScheduler} on a L{task.Clock}.
"""

import os
import sqlite3

from twisted.internet import defer, task
from twisted.trial import unittest

from tests.helpers import crawl
from tests.logs import capture_logs
from tinyscrapy.downloadermiddlewares.httpproxy import HttpProxyMiddleware
from tinyscrapy.exceptions import UsageError
from tinyscrapy.frontier import disk, diskstore
from tinyscrapy.frontier.codec import request_from_bytes, request_to_bytes
from tinyscrapy.frontier.disk import FILENAME, DiskScheduler
from tinyscrapy.frontier.jobdir import spider_jobdir
from tinyscrapy.http import Request
from tinyscrapy.spiders import Spider
from tinyscrapy.statscollectors import StatsCollector

from .helpers import serve


class BookSpider(Spider):
    name = "books"

    def parse(self, response):
        pass


class _Engine:
    """Records L{ExecutionEngine.stop_for_error} calls."""

    def __init__(self):
        self.stopped = []

    def stop_for_error(self, reason):
        self.stopped.append(reason)


class _Crawler:
    def __init__(self):
        self.engine = _Engine()


class _FailingWrites:
    """A connection whose INSERTs into C{requests} fail, as on a full disk."""

    def __init__(self, db):
        self.db = db

    def __getattr__(self, name):
        return getattr(self.db, name)

    def executemany(self, sql, rows):
        if sql.startswith("INSERT INTO requests"):
            raise sqlite3.OperationalError("database or disk is full")
        return self.db.executemany(sql, rows)


class JobdirWriteTests(unittest.TestCase):
    def setUp(self):
        self.jobdir = self.mktemp()
        self.clock = task.Clock()
        self.spider = BookSpider()

    def _scheduler(self, jobdir=None):
        scheduler = DiskScheduler(jobdir or self.jobdir, stats=StatsCollector(),
                                  clock=self.clock)
        self.addCleanup(scheduler.close, "test")
        return scheduler

    def _open(self):
        scheduler = self._scheduler()
        scheduler.open(self.spider)
        return scheduler

    def _request(self, path):
        return Request("http://example.com" + path, callback=self.spider.parse)

    def test_constraint_violation_stops_writes_and_the_crawl(self):
        """Row ids taken by another writer: IntegrityError once, no retry every half second,
        the crawl is stopped, and close says what was NOT written instead of 'kept'."""
        scheduler = self._open()
        scheduler.crawler = _Crawler()
        crawler = scheduler.crawler.engine
        with sqlite3.connect(os.path.join(self.jobdir, FILENAME)) as other:
            other.execute("INSERT INTO requests VALUES (1, 'example.com', 0, x'00')")
        logs = capture_logs(self)
        scheduler.enqueue_request(self._request("/a"))
        self.clock.advance(0.5)
        self.clock.advance(5)
        self.assertEqual(scheduler.stats.get_value("scheduler/flush_errors"), 1)
        self.assertEqual(crawler.stopped, ["jobdir_error"])
        self.assertIn("no longer matches this crawl", logs.text())
        self.assertNotIn("will try again", logs.text())
        scheduler.close("jobdir_error")
        self.assertIn("2 frontier operations were NOT written (1 new requests, "
                      "1 fingerprints, 0 acknowledgements)", logs.text())
        self.assertNotIn("kept for the next run", logs.text())
        self.assertEqual(scheduler.stats.get_value("scheduler/unwritten"), 2)

    def test_final_flush_that_fails_is_reported(self):
        """A full disk at close: an error counting the operations not written."""
        scheduler = self._open()
        scheduler.enqueue_request(self._request("/a"))
        scheduler.enqueue_request(self._request("/b"))
        scheduler._store.db = _FailingWrites(scheduler._store.db)
        logs = capture_logs(self)
        scheduler.close("shutdown")
        self.assertIn("4 frontier operations were NOT written", logs.text())
        self.assertNotIn("kept for the next run", logs.text())

    def test_second_scheduler_on_the_directory_is_refused(self):
        """The lock: a second open of the same directory is a UsageError naming it and our
        pid; once the first closes, the directory can be opened again."""
        first = self._open()
        e = self.assertRaises(UsageError, self._scheduler().open, BookSpider())
        self.assertEqual(str(e), f"another crawl is using --jobdir {self.jobdir} "
                                 f"(pid {os.getpid()})")
        first.close("shutdown")
        self._scheduler().open(BookSpider())

    def test_loading_in_chunks(self):
        """Read in chunks (logged first, when large): every request comes back, and the
        next row id follows the last one stored."""
        self.patch(diskstore, "CHUNK", 2)
        self.patch(disk, "LARGE", 1)
        first = self._open()
        for path in ("/a", "/b", "/c"):
            first.enqueue_request(self._request(path))
        first.close("shutdown")
        logs = capture_logs(self)
        second = self._open()
        messages = logs.messages()
        self.assertIn(f"opening --jobdir {self.jobdir}: 3 requests waiting, 3 seen ...",
                      messages[0])
        self.assertIn("resuming: 3 requests waiting, 3 seen", messages[1])
        second.enqueue_request(self._request("/d"))
        self.assertEqual(second.flush(), 2)
        urls = {second.next_request().url for _ in range(4)}
        self.assertEqual(len(urls), 4)

    def test_spider_directory(self):
        """Each spider under DIR/<name>; a name that is not a directory name, a frontier
        directly in DIR (the older layout) and a file are refused."""
        self.assertEqual(spider_jobdir("crawls", "books"), os.path.join("crawls", "books"))
        for name in ("", "..", "a/b"):
            self.assertRaises(UsageError, spider_jobdir, "crawls", name)
        self._open().close("shutdown")
        e = self.assertRaises(UsageError, spider_jobdir, self.jobdir, "books")
        self.assertIn("older layout", str(e))
        path = self.mktemp()
        with open(path, "w") as f:
            f.write("x")
        e = self.assertRaises(UsageError, spider_jobdir, path, "books")
        self.assertIn("a file, not a directory", str(e))


class CodecProxyTests(unittest.TestCase):
    def setUp(self):
        self.spider = BookSpider()
        self.proxy = HttpProxyMiddleware(environ={"http_proxy": "http://u:secret@proxy:3128"})

    def _stored(self, request):
        return request_from_bytes(request_to_bytes(request, self.spider), self.spider)

    def test_environment_proxy_credentials_not_stored(self):
        """A proxy from the environment is stored without it and its Proxy-Authorization;
        the middleware sets both again on the loaded request. The request is unchanged."""
        request = Request("http://example.com/a", callback=self.spider.parse,
                          headers={"Cookie": "k=v"})
        self.proxy.process_request(request, self.spider)
        auth = request.headers["Proxy-Authorization"]
        loaded = self._stored(request)
        self.assertNotIn("Proxy-Authorization", loaded.headers)
        self.assertNotIn("proxy", loaded.meta)
        self.assertEqual(loaded.headers["Cookie"], b"k=v")
        self.assertEqual(request.headers["Proxy-Authorization"], auth)
        self.proxy.process_request(loaded, self.spider)
        self.assertEqual(loaded.headers["Proxy-Authorization"], auth)
        self.assertEqual(loaded.meta["proxy"], request.meta["proxy"])

    def test_spider_proxy_credentials_stored(self):
        """A meta["proxy"] the spider set keeps its credentials (the header is the only place
        they are left), so the loaded request still authenticates."""
        request = Request("http://example.com/a", callback=self.spider.parse,
                          meta={"proxy": "http://u:secret@other:3128"})
        self.proxy.process_request(request, self.spider)
        loaded = self._stored(request)
        self.proxy.process_request(loaded, self.spider)
        self.assertEqual(loaded.headers["Proxy-Authorization"],
                         request.headers["Proxy-Authorization"])


class StartUrlsSpider(Spider):
    """The default start_requests(): its start requests have dont_filter, as in Scrapy."""

    name = "start_urls"

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


class FinishedCrawlTests(unittest.TestCase):
    timeout = 20

    @defer.inlineCallbacks
    def test_start_requests_fetched_again(self):
        """A finished crawl run again with its directory fetches its dont_filter start URL
        again, and nothing else; the close says so. (The first run fetches it twice, as
        Scrapy does: the dont_filter request leaves no trace, so /a's link back is new.)"""
        server = serve(self)
        server.add_page("/", links=["/a"])
        server.add_page("/a", links=["/"])
        jobdir = self.mktemp()
        yield crawl(StartUrlsSpider, {"JOBDIR": jobdir}, start_urls=[server.url("/")])
        self.assertEqual(server.hits, {"/": 2, "/a": 1})
        logs = capture_logs(self)
        yield crawl(StartUrlsSpider, {"JOBDIR": jobdir}, start_urls=[server.url("/")])
        self.assertEqual(server.hits, {"/": 3, "/a": 1})
        self.assertIn("the crawl is complete, nothing is left to fetch. Running it again with "
                      "this directory skips every page already crawled", logs.text())

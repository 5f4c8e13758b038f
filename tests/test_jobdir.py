"""
C{--jobdir DIR}: the frontier kept in SQLite, so that Ctrl-C pauses a crawl and the same
command resumes it. Unit tests of the codec and of L{DiskScheduler} on a L{task.Clock},
then real crawls as processes against a twisted.web server.
"""

import json
import logging
import os
import sqlite3
import threading

from twisted.internet import defer, reactor, task
from twisted.trial import unittest

from tests.helpers import crawl, run_command
from tests.logs import capture_logs
from tests.servers import Delay, TestServer
from tinyscrapy.errors import UnserializableRequest, UsageError
from tinyscrapy.frontier.codec import request_from_bytes, request_to_bytes
from tinyscrapy.frontier.disk import FILENAME, DiskScheduler
from tinyscrapy.http import FormRequest, JsonRequest, Request
from tinyscrapy.observe.ledger import RequestLedger
from tinyscrapy.observe.stats import StatsCollector
from tinyscrapy.spider import Spider


class BookSpider(Spider):
    name = "books"

    def parse(self, response):
        pass

    def parse_book(self, response, shelf=None):
        pass

    def on_error(self, failure):
        pass


def _fields(request):
    return (type(request), request.url, request.method, request.body,
            sorted(request.header_items()), request._meta, request._cb_kwargs,
            request.priority, request.depth, request.dont_filter, request.fingerprint)


class CodecTests(unittest.TestCase):
    def setUp(self):
        self.spider = BookSpider()

    def _round_trip(self, request, spider=None):
        return request_from_bytes(request_to_bytes(request, self.spider), spider or self.spider)

    def test_request_round_trip(self):
        """Every field of a Request survives; callback and errback bind by name."""
        request = Request("http://example.com/b?x=1", callback=self.spider.parse_book,
                          errback=self.spider.on_error, method="POST", body=b"\x00raw",
                          headers={"X-Shelf": "3", "Accept": ["a", "b"]},
                          meta={"when": (2026, 11), "raw": b"\xff"},
                          cb_kwargs={"shelf": 3}, priority=-2, depth=4, dont_filter=True)
        request.fingerprint = 2**64 - 5
        other = BookSpider()
        loaded = self._round_trip(request, other)
        self.assertEqual(_fields(loaded), _fields(request))
        self.assertEqual(loaded.callback, other.parse_book)
        self.assertEqual(loaded.errback, other.on_error)
        self.assertEqual(loaded.headers.getlist("accept"), ["a", "b"])

    def test_json_and_form_requests_round_trip(self):
        """JsonRequest and FormRequest come back as themselves, body and headers intact."""
        for request in (JsonRequest("http://example.com/api", data={"q": [1, 2]}),
                        FormRequest("http://example.com/f", formdata={"a": "é"},
                                    callback=self.spider.parse)):
            loaded = self._round_trip(request)
            self.assertEqual(_fields(loaded), _fields(request))
            self.assertEqual(loaded.headers["Content-Type"], request.headers["Content-Type"])

    def test_callback_not_a_spider_method(self):
        """A function, or another object's method, cannot be stored: the error names the URL."""
        for callback in (print, BookSpider().parse):
            request = Request("http://example.com/x", callback=callback)
            e = self.assertRaises(UnserializableRequest, request_to_bytes, request, self.spider)
            self.assertIn("http://example.com/x", str(e))
            self.assertIn("callback", str(e))
            self.assertIn("is not a spider method", str(e))

    def test_meta_that_cannot_be_pickled(self):
        """A lock in meta: UnserializableRequest, naming the URL."""
        request = Request("http://example.com/lock", meta={"lock": threading.Lock()})
        e = self.assertRaises(UnserializableRequest, request_to_bytes, request, self.spider)
        self.assertIn("http://example.com/lock", str(e))

    def test_spider_without_the_method(self):
        """Loading into a spider that lost the method is a ValueError naming it."""
        data = request_to_bytes(Request("http://e.com/", callback=self.spider.parse_book),
                                self.spider)
        e = self.assertRaises(ValueError, request_from_bytes, data, Spider(name="books"))
        self.assertIn("parse_book", str(e))


class DiskSchedulerTests(unittest.TestCase):
    def setUp(self):
        self.jobdir = self.mktemp()
        self.clock = task.Clock()
        self.spider = BookSpider()

    def _open(self, spider=None, ledger=None):
        stats = StatsCollector()
        scheduler = DiskScheduler(self.jobdir, stats=stats, ledger=ledger, clock=self.clock)
        scheduler.open(spider or self.spider)
        self.addCleanup(scheduler.close, "test")
        return scheduler

    def _rows(self, table="requests"):
        with sqlite3.connect(os.path.join(self.jobdir, FILENAME)) as db:
            return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    def _request(self, path, **kwargs):
        return Request("http://example.com" + path, callback=self.spider.parse, **kwargs)

    def test_reopened_has_waiting_requests_and_seen_set(self):
        """Closed and opened again: the unacknowledged requests wait, the seen set dedups."""
        first = self._open()
        for path in ("/a", "/b", "/c"):
            self.assertTrue(first.enqueue_request(self._request(path, priority=len(path))))
        done = first.next_request()
        first.request_done(done)
        first.close("shutdown")
        self.assertEqual(first.stats.get_value("scheduler/saved"), 2)

        second = self._open(spider=BookSpider())
        self.assertEqual(second.size(), 2)
        self.assertEqual(second.stats.get_value("scheduler/resumed"), 2)
        self.assertEqual(len(second.seen), 3)
        self.assertFalse(second.enqueue_request(self._request(done.url[len("http://example.com"):])))
        urls = {second.next_request().url, second.next_request().url}
        self.assertEqual(urls, {"http://example.com/a", "http://example.com/b",
                                "http://example.com/c"} - {done.url})

    def test_handed_out_but_unacknowledged_is_kept(self):
        """A request taken but never acknowledged is fetched again next time (at least once)."""
        first = self._open()
        first.enqueue_request(self._request("/a"))
        first.next_request()
        first.close("shutdown")
        second = self._open()
        self.assertEqual(second.next_request().url, "http://example.com/a")

    def test_acknowledged_requests_gone_after_a_flush(self):
        """Buffered until the flush: inserted by one, deleted by a later one."""
        scheduler = self._open()
        scheduler.enqueue_request(self._request("/a"))
        self.assertEqual(self._rows(), 0)
        self.clock.advance(0.5)  # the LoopingCall flush
        self.assertEqual(self._rows(), 1)
        scheduler.request_done(scheduler.next_request())
        self.assertEqual(self._rows(), 1)
        self.clock.advance(0.5)
        self.assertEqual((self._rows(), self._rows("seen")), (0, 1))

    def test_acknowledged_before_written_is_never_written(self):
        """A request done before its insert was flushed costs no row at all."""
        scheduler = self._open()
        scheduler.enqueue_request(self._request("/a"))
        scheduler.request_done(scheduler.next_request())
        self.assertEqual(scheduler.flush(), 1)  # only its fingerprint
        self.assertEqual((self._rows(), self._rows("seen")), (0, 1))

    def test_parent_delete_never_written_before_child_insert(self):
        """A child's insert and its parent's delete land in one transaction: a failed flush
        writes neither, the next one writes both."""
        scheduler = self._open()
        scheduler.enqueue_request(self._request("/parent"))
        scheduler.flush()
        parent = scheduler.next_request()
        scheduler.enqueue_request(self._request("/child"))
        scheduler.request_done(parent)
        logs = capture_logs(self)
        real = scheduler._db
        scheduler._db = _FailingDeletes(real)
        self.assertEqual(scheduler.flush(), 0)
        self.assertEqual(scheduler.stats.get_value("scheduler/flush_errors"), 1)
        self.assertIn("cannot write the frontier (will try again)", logs.text())
        self.assertEqual(self._stored_urls(), ["http://example.com/parent"])
        scheduler._db = real
        self.assertEqual(scheduler.flush(), 3)
        self.assertEqual(self._stored_urls(), ["http://example.com/child"])

    def _stored_urls(self):
        with sqlite3.connect(os.path.join(self.jobdir, FILENAME)) as db:
            rows = db.execute("SELECT data FROM requests ORDER BY id").fetchall()
        return [request_from_bytes(data, self.spider).url for (data,) in rows]

    def test_unpersistable_request_is_refused_and_not_seen(self):
        """A lambda callback: UnserializableRequest, counted, neither queued nor marked as seen."""
        scheduler = self._open()
        logs = capture_logs(self)
        request = Request("http://example.com/x", callback=_not_a_method)
        self.assertRaises(UnserializableRequest, scheduler.enqueue_request, request)
        self.assertEqual(len(logs.messages()), 1)
        self.assertIn("cannot persist http://example.com/x", logs.text())
        self.assertEqual((scheduler.size(), len(scheduler.seen)), (0, 0))
        self.assertEqual(scheduler.stats.get_value("scheduler/unpersistable"), 1)

    def test_resumed_requests_enter_the_ledger(self):
        """Loaded requests open ledger entries; those still waiting at close end as saved."""
        first = self._open()
        first.enqueue_request(self._request("/a"))
        first.enqueue_request(self._request("/b"))
        first.close("shutdown")
        ledger = RequestLedger(StatsCollector())
        second = self._open(ledger=ledger)
        self.assertEqual(ledger.opened, 2)
        ledger.close(second.next_request(), "handled")
        self.assertEqual(ledger.reconcile(second.size()), 0)
        self.assertEqual(ledger.statistics().saved, 1)

    def test_another_spiders_directory_is_refused(self):
        """The directory remembers its spider: another one gets a UsageError."""
        self._open().close("finished")
        e = self.assertRaises(UsageError, self._open, Spider(name="quotes"))
        self.assertIn("'books'", str(e))
        self.assertIn("'quotes'", str(e))

    def test_a_file_is_refused(self):
        """A file where the directory should be: UsageError."""
        with open(self.jobdir, "w") as f:
            f.write("not a directory")
        e = self.assertRaises(UsageError, self._open)
        self.assertIn(self.jobdir, str(e))


def _not_a_method(response):
    pass


class _FailingDeletes:
    """A connection whose DELETEs fail, as on a full disk."""

    def __init__(self, db):
        self.db = db

    def __getattr__(self, name):
        return getattr(self.db, name)

    def executemany(self, sql, rows):
        if sql.startswith("DELETE"):
            raise sqlite3.OperationalError("database or disk is full")
        return self.db.executemany(sql, rows)


class LambdaSpider(Spider):
    """Follows one link with a method, one with a lambda (which cannot be stored)."""

    name = "lambdas"

    def parse(self, response):
        yield {"url": response.url}
        if response.url.endswith("/"):
            yield response.follow("/kept", callback=self.parse)
            yield response.follow("/lambda", callback=lambda r: None)


class UnpersistableInACrawlTests(unittest.TestCase):
    timeout = 20

    @defer.inlineCallbacks
    def test_dropped_counted_and_the_ledger_balances(self):
        """In a crawl, a request with a lambda callback is dropped (UnserializableRequest),
        once."""
        server = TestServer().start()
        self.addCleanup(server.stop)
        for path in ("/", "/kept", "/lambda"):
            server.add_page(path)
        logs = capture_logs(self)
        crawler = yield crawl(LambdaSpider, {"JOBDIR": self.mktemp()},
                              start_urls=[server.url("/")])
        stats = crawler.stats
        self.assertEqual(stats.get_value("ledger/dropped/UnserializableRequest"), 1)
        self.assertEqual(stats.get_value("scheduler/unpersistable"), 1)
        self.assertEqual(stats.get_value("ledger/missing"), 0)
        self.assertNotIn("/lambda", server.hits)
        errors = logs.messages(logging.WARNING)
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("cannot persist " + server.url("/lambda"), errors[0])


PAGES = 40


class PauseResumeTests(unittest.TestCase):
    """Real crawls: `crawl URL --jobdir DIR`, interrupted with SIGINT and run again."""

    timeout = 60

    def setUp(self):
        self.server = TestServer().start()
        self.addCleanup(self.server.stop)
        self.jobdir = os.path.abspath(self.mktemp())

    def _slow_site(self):
        """Home links p0..p19; p(i) links p(i+20): children found before and after a pause."""
        half = PAGES // 2
        home = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(half))
        self.server.add("/", Delay(0, f"<title>home</title>{home}".encode()))
        for i in range(PAGES):
            child = f'<a href="/p{i + half}">next</a>' if i < half else ""
            self.server.add(f"/p{i}", Delay(0.1, f"<title>p{i}</title>{child}".encode()))
        return self.server.url("/")

    def _crawl(self, url, feed, stats, interrupt_after=()):
        """Run `crawl URL --jobdir DIR`; send SIGINT once the server has counted each number
        of hits in C{interrupt_after}. @return: the command's Deferred."""
        feed, stats = os.path.abspath(feed), os.path.abspath(stats)
        transports = []
        args = ["crawl", url, "--jobdir", self.jobdir, "-O", feed,
                "-s", "CONCURRENT_REQUESTS=2", "-s", "ROBOTSTXT_OBEY=False",
                "-s", f"STATS_FILE={stats}"]
        d = run_command(reactor, args, started=transports.append)
        pending = list(interrupt_after)
        if not pending:
            return d
        start = sum(self.server.hits.values())

        def poll():  # one signal a tick: two at once would arrive as one
            if sum(self.server.hits.values()) - start >= pending[0]:
                pending.pop(0)
                transports[0].signalProcess("INT")
            if not pending:
                loop.stop()
        loop = task.LoopingCall(poll)
        loop.start(0.02)

        def stop_polling(result):
            if loop.running:
                loop.stop()
            return result
        return d.addBoth(stop_polling)

    def _paths(self, feed):
        with open(os.path.abspath(feed)) as f:
            return [json.loads(line)["url"].split("/", 3)[3] for line in f]

    @staticmethod
    def _stats(path):
        with open(os.path.abspath(path)) as f:
            return json.load(f)

    @defer.inlineCallbacks
    def test_pause_then_resume_fetches_every_page_once(self):
        """Ctrl-C pauses; the same command resumes; every page is fetched exactly once."""
        url = self._slow_site()
        feed1, feed2 = self.mktemp() + ".jsonl", self.mktemp() + ".jsonl"
        stats1, stats2 = self.mktemp() + ".json", self.mktemp() + ".json"
        code, _out, err = yield self._crawl(url, feed1, stats1, interrupt_after=[6])
        self.assertEqual(code, 0, err)
        first = self._paths(feed1)
        self.assertLess(len(first), PAGES // 2, "the crawl went on after Ctrl-C")
        saved = self._stats(stats1)
        self.assertEqual(saved["finish_reason"], "shutdown")
        self.assertGreater(saved["scheduler/saved"], 0)
        self.assertEqual(saved["ledger/saved"], saved["scheduler/saved"])
        self.assertEqual(saved["ledger/missing"], 0)

        code, _out, err = yield self._crawl(url, feed2, stats2)
        self.assertEqual(code, 0, err)
        self.assertIn(f"resuming: {saved['scheduler/saved']} requests waiting", err)
        second = self._paths(feed2)
        every = {""} | {f"p{i}" for i in range(PAGES)}
        self.assertEqual(set(first) | set(second), every)
        self.assertEqual(len(first) + len(second), len(every), "a page was scraped twice")
        self.assertEqual(set(self.server.hits.values()), {1}, self.server.hits)
        resumed = self._stats(stats2)
        self.assertEqual(resumed["finish_reason"], "finished")
        self.assertEqual(resumed["scheduler/resumed"], saved["scheduler/saved"])
        self.assertEqual(resumed["scheduler/saved"], 0)
        self.assertEqual(resumed["ledger/missing"], 0)

    @defer.inlineCallbacks
    def test_stopped_at_once_then_resumed_loses_nothing(self):
        """A second Ctrl-C stops without the last flush: the next run fetches again what was
        not acknowledged on disk (at least once), and every page is fetched. (14 hits take
        0.6 s at least: one flush has happened.)"""
        url = self._slow_site()
        code, _out, err = yield self._crawl(url, self.mktemp() + ".jsonl",
                                            self.mktemp() + ".json", interrupt_after=[14, 14])
        self.assertEqual(code, 1, err)
        self.assertIn("stopping at once", err)
        stats = self.mktemp() + ".json"
        code, _out, err = yield self._crawl(url, self.mktemp() + ".jsonl", stats)
        self.assertEqual(code, 0, err)
        self.assertIn("resuming:", err)
        every = {"/"} | {f"/p{i}" for i in range(PAGES)}
        self.assertEqual(set(self.server.hits), every)
        self.assertEqual(max(self.server.hits.values()), 2, self.server.hits)  # a replay
        self.assertEqual(self._stats(stats)["ledger/missing"], 0)

    @defer.inlineCallbacks
    def test_finished_crawl_run_again_fetches_nothing(self):
        """Everything was seen: the start URL is a duplicate, nothing is fetched."""
        for i in range(3):
            self.server.add_page(f"/p{i}", links=[f"/p{i + 1}"] if i < 2 else [])
        url = self.server.url("/p0")
        stats = self.mktemp() + ".json"
        code, _out, err = yield self._crawl(url, self.mktemp() + ".jsonl", stats)
        self.assertEqual(code, 0, err)
        self.assertEqual(sum(self.server.hits.values()), 3)
        feed = self.mktemp() + ".jsonl"
        code, _out, err = yield self._crawl(url, feed, stats)
        self.assertEqual(code, 0, err)
        self.assertIn("resuming: 0 requests waiting, 3 seen", err)
        self.assertEqual(sum(self.server.hits.values()), 3)
        self.assertEqual(self._paths(feed), [])
        self.assertEqual(self._stats(stats)["ledger/duplicate"], 1)

    @defer.inlineCallbacks
    def test_directory_of_another_spider(self):
        """A DIR/crawl made by another spider: one line, exit 2."""
        other = DiskScheduler(os.path.join(self.jobdir, "crawl"), clock=task.Clock())
        other.open(Spider(name="quotes"))
        other.close("finished")
        code, _out, err = yield self._crawl(self.server.url("/"), self.mktemp() + ".jsonl",
                                            self.mktemp() + ".json")
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("holds the frontier of spider 'quotes', not 'crawl'", err)
        self.assertEqual(sum(self.server.hits.values()), 0)

    @defer.inlineCallbacks
    def test_directory_that_is_a_file(self):
        """--jobdir naming a file: one line, exit 2."""
        with open(self.jobdir, "w") as f:
            f.write("x")
        code, _out, err = yield self._crawl(self.server.url("/"), self.mktemp() + ".jsonl",
                                            self.mktemp() + ".json")
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(f"--jobdir {self.jobdir}: cannot use it", err)

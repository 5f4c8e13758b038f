"""
C{--jobdir DIR}: the frontier kept in SQLite, so that Ctrl-C pauses a crawl and the same
command resumes it. Unit tests of the codec and of L{DiskScheduler} on a L{task.Clock}
(real crawls are in C{test_jobdir_crawl}).
"""

import os
import sqlite3
import threading

from twisted.internet import task
from twisted.trial import unittest

from tests.logs import capture_logs
from tinyscrapy.exceptions import UnserializableRequest, UsageError
from tinyscrapy.frontier.codec import request_from_bytes, request_to_bytes
from tinyscrapy.frontier.disk import FILENAME, DiskScheduler
from tinyscrapy.http import FormRequest, JsonRequest, Request
from tinyscrapy.ledger import RequestLedger
from tinyscrapy.spiders import Spider
from tinyscrapy.statscollectors import StatsCollector


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
        self.assertEqual(loaded.headers.getlist("accept"), [b"a", b"b"])

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

    def test_enqueued_written_by_the_flush_acknowledged_in_the_turn(self):
        """New requests wait for the periodic flush (or the next acknowledgement); the
        acknowledgements of one reactor turn are committed together at its end, with what
        the pages yielded."""
        scheduler = self._open()
        scheduler.enqueue_request(self._request("/a"))
        scheduler.enqueue_request(self._request("/b"))
        self.assertEqual(self._rows(), 0)
        self.clock.advance(0.5)  # the LoopingCall flush
        self.assertEqual(self._rows(), 2)
        parent, other = scheduler.next_request(), scheduler.next_request()
        scheduler.enqueue_request(self._request("/child"))
        scheduler.request_done(parent)
        scheduler.request_done(other)
        self.assertEqual(self._rows(), 2)  # not yet: the end of this turn
        self.assertEqual(len(self.clock.getDelayedCalls()), 2)  # the flush, one commit
        self.clock.advance(0)
        self.assertEqual(self._stored_urls(), ["http://example.com/child"])
        self.assertEqual(self._rows("seen"), 3)

    def test_acknowledged_before_written_is_never_written(self):
        """A request done before its insert was flushed costs no row at all."""
        scheduler = self._open()
        scheduler.enqueue_request(self._request("/a"))
        scheduler.request_done(scheduler.next_request())
        self.clock.advance(0)
        self.assertEqual((self._rows(), self._rows("seen")), (0, 1))
        self.assertEqual(scheduler.unwritten(), 0)

    def test_parent_delete_never_written_before_child_insert(self):
        """A child's insert and its parent's delete land in one transaction: a failed
        commit writes neither, the next one writes both."""
        scheduler = self._open()
        scheduler.enqueue_request(self._request("/parent"))
        scheduler.flush()
        parent = scheduler.next_request()
        scheduler.enqueue_request(self._request("/child"))
        logs = capture_logs(self)
        real = scheduler._store.db
        scheduler._store.db = _FailingDeletes(real)
        scheduler.request_done(parent)
        self.clock.advance(0)
        self.assertEqual(scheduler.stats.get_value("scheduler/flush_errors"), 1)
        self.assertIn("cannot write the frontier (will try again)", logs.text())
        self.assertEqual(self._stored_urls(), ["http://example.com/parent"])
        scheduler._store.db = real
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

"""
Millions of URLs: with C{--jobdir}, a host's waiting requests beyond a bounded head stay
on disk and are paged in (a resume reads only the heads); a callback yielding a great many
requests is routed over several reactor turns. Unit tests on a C{task.Clock}.
"""

import os
import sqlite3

from twisted.internet import task
from twisted.trial import unittest

from tinyscrapy.core import scraper
from tinyscrapy.core.scheduler import Scheduler
from tinyscrapy.frontier import disk
from tinyscrapy.frontier.disk import FILENAME, DiskScheduler
from tinyscrapy.http import Request
from tinyscrapy.spiders import Spider
from tinyscrapy.statscollectors import StatsCollector

from .helpers import make_engine


class HostSpider(Spider):
    name = "hosts"

    def parse(self, response):
        pass


class SpillTests(unittest.TestCase):
    def setUp(self):
        self.patch(disk, "HEAD", 4)
        self.jobdir = self.mktemp()
        self.clock = task.Clock()
        self.spider = HostSpider()

    def _open(self):
        scheduler = DiskScheduler(self.jobdir, stats=StatsCollector(), clock=self.clock)
        scheduler.open(self.spider)
        self.addCleanup(scheduler.close, "test")
        return scheduler

    def _request(self, host, i, **kwargs):
        return Request(f"http://{host}/{i}", callback=self.spider.parse, **kwargs)

    def _rows(self):
        with sqlite3.connect(os.path.join(self.jobdir, FILENAME)) as db:
            return db.execute("SELECT count(*) FROM requests").fetchone()[0]

    def _drain(self, scheduler):
        """Hand out and acknowledge every request. @return: their URLs, in order."""
        urls = []
        for _ in range(1000):  # bounded
            request = scheduler.next_request()
            if request is None:
                break
            urls.append(request.url)
            scheduler.request_done(request)
        return urls

    def test_beyond_the_head_waits_on_disk(self):
        """50 requests for one host: 4 in memory, 50 on disk, all handed out in order."""
        scheduler = self._open()
        for i in range(50):
            scheduler.enqueue_request(self._request("a.example", i))
        self.assertEqual(scheduler.size(), 50)
        self.assertEqual(len(scheduler._rows), 4)
        scheduler.flush()
        self.assertEqual(self._rows(), 50)
        self.assertEqual(self._drain(scheduler), [f"http://a.example/{i}" for i in range(50)])
        self.clock.advance(0)  # the end of the turn: its acknowledgements committed
        self.assertEqual((scheduler.size(), self._rows()), (0, 0))
        self.assertFalse(scheduler.has_pending_requests())

    def test_resume_reads_only_the_heads(self):
        """A directory of 50 waiting requests opens with 4 in memory; all 50 come out."""
        first = self._open()
        for i in range(50):
            first.enqueue_request(self._request("a.example", i))
        first.close("shutdown")
        second = self._open()
        self.assertEqual(second.size(), 50)
        self.assertEqual(second.stats.get_value("scheduler/resumed"), 50)
        self.assertEqual(len(second._rows), 4)
        self.assertEqual(self._drain(second), [f"http://a.example/{i}" for i in range(50)])

    def test_a_host_spilling_does_not_hold_another_back(self):
        """Another host's requests go to memory while the first one's spill."""
        scheduler = self._open()
        for i in range(20):
            scheduler.enqueue_request(self._request("a.example", i))
        for i in range(3):
            scheduler.enqueue_request(self._request("b.example", i))
        self.assertEqual(len(scheduler._rows), 7)
        urls = self._drain(scheduler)
        self.assertEqual(len(urls), 23)
        self.assertEqual([url for url in urls if "b.example" in url],
                         [f"http://b.example/{i}" for i in range(3)])

    def test_priority_on_disk_is_paged_in_first(self):
        """A high-priority request that spilled comes out as soon as its host pages in."""
        scheduler = self._open()
        for i in range(10):
            scheduler.enqueue_request(self._request("a.example", i))
        scheduler.enqueue_request(self._request("a.example", "urgent", priority=5))
        urls = self._drain(scheduler)
        self.assertEqual(urls.index("http://a.example/urgent"), 3)
        self.assertEqual(len(urls), 11)

    def test_large_outputs_are_written_in_chunks(self):
        """Buffered rows are committed every FLUSH_ROWS, not all at the next tick."""
        self.patch(disk, "FLUSH_ROWS", 10)
        scheduler = self._open()
        for i in range(25):
            scheduler.enqueue_request(self._request("a.example", i))
        self.assertEqual(self._rows(), 20)
        self.assertEqual(scheduler.unwritten(), 10)  # 5 rows, 5 fingerprints

    def test_fingerprints_are_appended_not_indexed(self):
        """The seen table has no index: a commit appends its new fingerprints (a few
        pages) instead of dirtying a page of a B-tree of millions for each."""
        scheduler = self._open()
        scheduler.enqueue_request(self._request("a.example", 1))
        scheduler.flush()
        with sqlite3.connect(os.path.join(self.jobdir, FILENAME)) as db:
            self.assertEqual(db.execute("PRAGMA index_list(seen)").fetchall(), [])
            self.assertEqual(db.execute("SELECT count(rowid) FROM seen").fetchone(), (1,))

    def test_an_indexed_seen_table_still_resumes(self):
        """A directory whose seen table is the earlier WITHOUT ROWID one resumes, and
        takes new fingerprints."""
        scheduler = self._open()
        for i in range(3):
            scheduler.enqueue_request(self._request("a.example", i))
        scheduler.close("shutdown")
        with sqlite3.connect(os.path.join(self.jobdir, FILENAME)) as db:
            db.execute("ALTER TABLE seen RENAME TO appended")
            db.execute("CREATE TABLE seen (fp INTEGER PRIMARY KEY) WITHOUT ROWID")
            db.execute("INSERT INTO seen SELECT fp FROM appended")
            db.execute("DROP TABLE appended")
        scheduler = self._open()
        self.assertEqual((scheduler.size(), len(scheduler.seen)), (3, 3))
        self.assertFalse(scheduler.enqueue_request(self._request("a.example", 1)))
        self.assertTrue(scheduler.enqueue_request(self._request("a.example", 3)))
        self.assertGreater(scheduler.flush(), 0)
        self.assertEqual(len(self._drain(scheduler)), 4)


class ManySpider(Spider):
    name = "many"
    count = 3000

    def start_requests(self):
        yield Request("http://127.0.0.1/seed", callback=self.parse)

    def parse(self, response):
        for i in range(self.count):
            yield Request(f"http://127.0.0.1/p/{i}", callback=self.parse)


class CooperativeScraperTests(unittest.TestCase):
    def test_a_long_output_is_routed_over_several_turns(self):
        """A callback yielding 3,000 requests, with a slice of no time: the reactor turns
        between chunks of 256, and in the end every request is scheduled."""
        self.patch(scraper, "SLICE", 0.0)
        scheduler = Scheduler()
        engine, clock, downloader, _ = make_engine(
            ManySpider, {"CONCURRENT_REQUESTS": 1}, scheduler=scheduler)
        clock.advance(0)
        downloader.answer()
        self.assertEqual(scheduler.size(), 256)  # then it gave the reactor a turn
        self.assertEqual(len(engine.in_flight), 1)  # the seed is still being scraped
        for _ in range(20):  # bounded
            clock.advance(0)
        self.assertEqual(scheduler.statistics().enqueued, 3001)


class WindowTests(unittest.TestCase):
    """C{WINDOW}: the requests in memory in all, whatever the number of hosts."""

    def setUp(self):
        self.patch(disk, "HEAD", 4)
        self.patch(disk, "WINDOW", 6)
        self.jobdir = self.mktemp()
        self.spider = HostSpider()

    def _open(self):
        scheduler = DiskScheduler(self.jobdir, stats=StatsCollector(), clock=task.Clock())
        scheduler.open(self.spider)
        self.addCleanup(scheduler.close, "test")
        return scheduler

    def _fill(self, scheduler):
        for host in range(5):
            for i in range(3):
                scheduler.enqueue_request(
                    Request(f"http://h{host}.example/{i}", callback=self.spider.parse))

    def _drain(self, scheduler):
        urls = []
        for _ in range(1000):  # bounded
            request = scheduler.next_request()
            if request is None:
                break
            self.assertLessEqual(len(scheduler._rows), 6)
            urls.append(request.url)
            scheduler.request_done(request)
        return urls

    def test_many_hosts_stay_within_the_window(self):
        """15 requests on 5 hosts, a window of 6: never more than 6 in memory; all out."""
        scheduler = self._open()
        self._fill(scheduler)
        self.assertEqual((scheduler.size(), len(scheduler._rows)), (15, 6))
        urls = self._drain(scheduler)
        self.assertEqual(sorted(urls), sorted(f"http://h{host}.example/{i}"
                                              for host in range(5) for i in range(3)))
        self.assertFalse(scheduler.has_pending_requests())

    def test_resume_fills_only_the_window(self):
        """A resume of 5 hosts pages in as many as the window holds; the rest follow."""
        first = self._open()
        self._fill(first)
        first.close("shutdown")
        second = self._open()
        self.assertEqual(second.size(), 15)
        self.assertLessEqual(len(second._rows), 6)
        self.assertEqual(len(self._drain(second)), 15)

"""
C{--jobdir DIR} in real crawls: a request that cannot be stored, and crawls run as
processes against a twisted.web server, interrupted with SIGINT and run again.
"""

import json
import logging
import os

from twisted.internet import defer, reactor, task
from twisted.trial import unittest

from tests.helpers import crawl, run_and_interrupt
from tests.logs import capture_logs
from tests.servers import Delay
from tinyscrapy.frontier.disk import DiskScheduler
from tinyscrapy.spiders import Spider

from .helpers import serve


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
        server = serve(self)
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
        self.server = serve(self)
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
        of hits in C{interrupt_after} (or, for a string, once the child wrote it to
        stderr). @return: the command's Deferred."""
        feed, stats = os.path.abspath(feed), os.path.abspath(stats)
        args = ["crawl", url, "--jobdir", self.jobdir, "-O", feed,
                "-s", "CONCURRENT_REQUESTS=2", "-s", "ROBOTSTXT_OBEY=False",
                "-s", f"STATS_FILE={stats}"]
        hits = self.server.hits
        start = sum(hits.values())
        return run_and_interrupt(reactor, args, [
            count if isinstance(count, str)  # a line the child wrote: see run_and_interrupt
            else (lambda count=count: sum(hits.values()) - start >= count)
            for count in interrupt_after])

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
                                            self.mktemp() + ".json",
                                            interrupt_after=[14, "closing gracefully"])
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

"""
The end of a shared crawl, in real processes (C{python -m tinyscrapy crawl URL --scheduler
redis://...}): 1, 3 and 8 workers, joining at once or midway, each exits 0 with its ledger
balanced; a worker started after the end exits 0 at once. Each test runs its own
redis-server on a free 127.0.0.1 port.
"""

import json
import os
import time

from twisted.internet import defer
from twisted.trial import unittest

from .helpers import serve
from .redisserver import NO_REDIS, RedisServer, wait_for
from .test_redis_command import add_site, crawl


class EndingTests(unittest.TestCase):
    """Every worker of a crawl sees it end, whatever their number and order."""

    skip = NO_REDIS
    timeout = 180
    PAGES = 80

    def setUp(self):
        self.redis = RedisServer().start()
        self.addCleanup(self.redis.stop)
        self.server = serve(self)
        self.start_url = add_site(self.server, self.PAGES, delay=0.1)
        self.runs = []  # (feed, stats) of each worker started

    def worker(self, *extra):
        """Start one worker (2 requests at a time, so several share the work)."""
        feed = os.path.abspath(self.mktemp() + ".jsonl")
        stats = os.path.abspath(self.mktemp() + ".json")
        self.runs.append((feed, stats))
        return crawl(self.start_url, self.redis.url, "-L", "WARNING", "-O", feed,
                     "-s", f"STATS_FILE={stats}", "-s", "CONCURRENT_REQUESTS=2", *extra)

    def check_all_ended(self, results, marker=True):
        """Each worker exited 0, finished, with its ledger balanced; the feeds hold every
        page; only the end marker is left in Redis (unless C{marker} is false: a marker
        that may have expired already), and it expires."""
        urls = set()
        for (code, _out, err), (feed, stats) in zip(results, self.runs, strict=True):
            self.assertEqual(code, 0, err)
            self.assertNotIn("Traceback", err)
            self.assertNotIn("redis_state_error", err)
            with open(stats) as f:
                values = json.load(f)
            self.assertEqual(values["finish_reason"], "finished", err)
            self.assertEqual(values["ledger/missing"], 0, values)
            with open(feed) as f:
                urls |= {json.loads(line)["url"] for line in f}
        self.assertEqual(len(urls), self.PAGES)
        self.assertEqual(len(self.server.hits), self.PAGES)
        if not marker:
            return
        [key] = self.redis.call("KEYS", "*")
        self.assertTrue(key.endswith(b":epoch"), key)
        self.assertTrue(self.redis.call("GET", key).startswith(b"over:"))
        self.assertGreater(self.redis.call("PTTL", key), 0)

    @defer.inlineCallbacks
    def test_one_worker(self):
        """One worker ends the crawl and exits 0."""
        results = yield defer.gatherResults([self.worker()])
        self.check_all_ended(results)

    @defer.inlineCallbacks
    def test_three_workers_two_joining_midway(self):
        """Three workers, two of them started once the first fetched a quarter of the
        site: all exit 0 (the third used to end with redis_state_error)."""
        first = self.worker()
        yield wait_for("the first worker fetched a quarter of the site",
                       lambda: len(self.server.hits) >= self.PAGES // 4)
        results = yield defer.gatherResults([first, self.worker(), self.worker()])
        self.check_all_ended(results)

    @defer.inlineCallbacks
    def test_eight_workers(self):
        """Eight workers started at once all exit 0 with their ledgers balanced."""
        results = yield defer.gatherResults([self.worker() for _ in range(8)])
        self.check_all_ended(results)

    @defer.inlineCallbacks
    def test_worker_started_after_the_end_exits_at_once(self):
        """A worker started while the end marker is there fetches nothing, exits 0 and
        says the crawl is over and how to start a new one."""
        results = yield defer.gatherResults([self.worker()])
        self.check_all_ended(results)
        hits = sum(self.server.hits.values())
        started = time.monotonic()
        code, _out, err = yield self.worker()
        self.assertEqual(code, 0, err)
        self.assertLess(time.monotonic() - started, 20)
        self.assertIn("is over", err)
        self.assertIn("To start a new crawl, wait", err)
        self.assertIn("DEL tinyscrapy:crawl:", err)
        self.assertEqual(sum(self.server.hits.values()), hits)

    @defer.inlineCallbacks
    def test_a_new_crawl_once_the_marker_expired(self):
        """Once the end marker expires, the same command crawls the site again."""
        results = yield defer.gatherResults([
            self.worker("-s", "SCHEDULER_REDIS_END_MARKER_TTL=0.5")])
        self.check_all_ended(results, marker=False)  # it lasts 0.5 s
        yield wait_for("the end marker expired", lambda: not self.redis.call("KEYS", "*"),
                       timeout=10)
        code, _out, err = yield self.worker()
        self.assertEqual(code, 0, err)
        self.assertEqual(set(self.server.hits.values()), {2})

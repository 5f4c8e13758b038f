"""
Politeness across the workers of a shared crawl: the per-slot delay and parallelism are
held in Redis (leases taken by the pop script, timed by Redis TIME), so two workers on one
host are as polite as one process. Judged at the server: arrival times and the most
requests it had in flight at once. Each test runs its own redis-server.
"""

import json
import os
from itertools import pairwise

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy.http import Request

from .helpers import Lateness, serve
from .redisserver import NO_REDIS, RedisServer, wait_for
from .servers import Robots
from .test_redis_command import add_site, crawl
from .test_redis_frontier import SchedulerTestCase


class LeaseTests(SchedulerTestCase):
    """The leases of one slot with a delay, in this process."""

    @defer.inlineCallbacks
    def two_leases(self, delay):
        a = yield self.open_scheduler(with_slots=True, DOWNLOAD_DELAY=delay,
                                      RANDOMIZE_DOWNLOAD_DELAY=False)
        for path in ("first", "second"):
            a.enqueue_request(Request(f"http://example.com/{path}"))
        yield wait_for("the first lease", lambda: a.size() == 1)
        first = a.next_request()
        return a, first

    @defer.inlineCallbacks
    def test_unsent_request_frees_the_slot_at_once(self):
        """A request acknowledged without being sent (dropped by a rule, failed before
        the wire) frees its slot: the next lease comes at once, not after the hold."""
        a, first = yield self.two_leases(30)
        self.assertEqual(a.size(), 0)  # the slot is held for the first one
        a.request_done(first)
        yield wait_for("the second lease", lambda: a.size() == 1, timeout=10)

    @defer.inlineCallbacks
    def test_next_lease_timed_from_the_reported_send(self):
        """Once the first request is sent (and reported), the next lease comes one delay
        after the send, not before."""
        a, first = yield self.two_leases(1.0)
        slots = a.crawler.slots
        slots.acquire(first)
        self.assertEqual(slots.gate(first), 0.0)
        sent_at = reactor.seconds()
        slots.sent(first)
        slots.release(first)
        a.request_done(first)
        yield wait_for("the second lease", lambda: a.size() == 1, timeout=10)
        self.assertGreaterEqual(reactor.seconds() - sent_at, 0.95)


class ClusterPolitenessTests(unittest.TestCase):
    """Two workers, one host."""

    skip = NO_REDIS
    timeout = 120

    def setUp(self):
        self.redis = RedisServer().start()
        self.addCleanup(self.redis.stop)
        self.server = serve(self)
        self.feeds = []
        self.lateness = Lateness()
        self.addCleanup(self.lateness.stop)

    def workers(self, count, *extra):
        self.lateness.start()
        runs = []
        for _ in range(count):
            feed = os.path.abspath(self.mktemp() + ".jsonl")
            self.feeds.append(feed)
            runs.append(crawl(self.start_url, self.redis.url, "-L", "WARNING", "-O", feed,
                              *extra))
        return defer.gatherResults(runs).addBoth(self._stop_lateness)

    def _stop_lateness(self, result):
        self.lateness.stop()
        return result

    def assertSpaced(self, times, delay):
        """No two of C{times} (arrivals at the server) closer together than 0.95 C{delay},
        less what this process's reactor was late by (L{Lateness}); and on average, from
        the first to the last, at least 0.95 C{delay}."""
        gaps = [later - earlier for earlier, later in pairwise(times)]
        allowance = self.lateness.allowance()
        self.assertGreaterEqual(min(gaps), 0.95 * delay - allowance, (allowance, gaps))
        self.assertGreaterEqual((times[-1] - times[0]) / len(gaps), 0.95 * delay, gaps)

    def check_finished(self, results, pages):
        for code, _out, err in results:
            self.assertEqual(code, 0, err)
            self.assertNotIn("Traceback", err)
        urls = set()
        for feed in self.feeds:
            with open(feed) as f:
                urls |= {json.loads(line)["url"] for line in f}
        self.assertEqual(len(urls), pages)

    @defer.inlineCallbacks
    def test_delay_held_across_workers(self):
        """DOWNLOAD_DELAY=0.4 with two workers: no two requests reach the host less than
        0.95 x 0.4 s apart (as noted late by a loaded test process), whichever worker sent
        them."""
        self.start_url = add_site(self.server, 12)
        results = yield self.workers(2, "-s", "DOWNLOAD_DELAY=0.4",
                                     "-s", "RANDOMIZE_DOWNLOAD_DELAY=False")
        self.check_finished(results, 12)
        times = sorted(request.time for request in self.server.requests)
        self.assertEqual(len(times), 12)
        self.assertSpaced(times, 0.4)

    @defer.inlineCallbacks
    def test_robots_crawl_delay_held_across_workers(self):
        """A robots.txt Crawl-delay of 0.4 s with two workers: every request the host
        gets, each worker's robots.txt included, comes at least 0.95 x 0.4 s after the
        one before (as noted late by a loaded test process)."""
        self.start_url = add_site(self.server, 10)
        self.server.add("/robots.txt", Robots("User-agent: *\nCrawl-delay: 0.4\n"))
        results = yield self.workers(2, "-s", "ROBOTSTXT_OBEY=True")
        self.check_finished(results, 10)
        times = sorted(request.time for request in self.server.requests)
        self.assertGreaterEqual(len(times), 11)
        self.assertSpaced(times, 0.4)

    @defer.inlineCallbacks
    def test_parallelism_held_across_workers(self):
        """CONCURRENT_REQUESTS_PER_DOMAIN=2 with two workers of 4 requests each: the host
        never has more than 2 requests in flight."""
        self.start_url = add_site(self.server, 30, delay=0.1)
        results = yield self.workers(2, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2")
        self.check_finished(results, 30)
        self.assertLessEqual(self.server.max_in_flight, 2)
        self.assertEqual(self.redis.call("KEYS", "*host:*"), [])  # gone with the crawl

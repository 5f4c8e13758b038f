"""
Faults of a shared crawl in real processes: a Redis stalled (SIGSTOP/SIGCONT of the
test's own redis-server) shorter and longer than the bound, a Redis restarted without its
data, and a worker paused (SIGSTOP of the worker) past its heartbeat. The timeouts are
shrunk by settings so that each fault fits in seconds; the stall and pause lengths are the
faults themselves, every other wait is on an event.
"""

import json
import os
import signal
import time

from twisted.internet import defer, reactor, task
from twisted.trial import unittest

from .helpers import serve
from .redisserver import NO_REDIS, RedisServer, wait_for
from .test_redis_command import add_site, crawl

PASSWORD = "stall-secret"
FAST = ("-s", "SCHEDULER_REDIS_TIMEOUT=1", "-s", "SCHEDULER_REDIS_WORKER_TIMEOUT=2",
        "-s", "CONCURRENT_REQUESTS=2")


def _sleep(seconds):
    return task.deferLater(reactor, seconds, lambda: None)


class FaultCase(unittest.TestCase):
    """A redis-server (with a password: a reconnection sends AUTH) and a site."""

    skip = NO_REDIS
    timeout = 120
    PAGES = 60

    def setUp(self):
        self.redis = RedisServer("--requirepass", PASSWORD, *self.redis_options()).start()
        self.addCleanup(self.redis.stop)
        self.server = serve(self)
        self.start_url = add_site(self.server, self.PAGES, delay=0.1)
        self.url = f"redis://:{PASSWORD}@127.0.0.1:{self.redis.port}/0"
        self.runs = []
        self.transports = []

    def redis_options(self):
        return ()

    def worker(self, *extra):
        feed = os.path.abspath(self.mktemp() + ".jsonl")
        stats = os.path.abspath(self.mktemp() + ".json")
        self.runs.append((feed, stats))
        return crawl(self.start_url, self.url, "-L", "INFO", "-O", feed,
                     "-s", f"STATS_FILE={stats}", *FAST, *extra,
                     started=self.transports.append)

    def stats(self, i):
        with open(self.runs[i][1]) as f:
            return json.load(f)

    def scraped(self, *indexes):
        urls = set()
        for i in indexes:
            with open(self.runs[i][0]) as f:
                urls |= {json.loads(line)["url"] for line in f}
        return urls

    def all_pages(self):
        return {self.server.url(path) for path in ["/", *(f"/p{i}" for i in
                                                          range(1, self.PAGES))]}

    def fetched(self, count):
        return wait_for(f"{count} pages fetched", lambda: len(self.server.hits) >= count)

    def both_fetching(self):
        """Wait until two workers joined and each holds a request it took (is fetching)."""
        def fetching():
            held = self.redis.call("KEYS", "*processing:*")
            return len(self.redis.call("KEYS", "*alive:*")) == 2 and len(held) == 2 and \
                all(self.redis.call("HLEN", key) > 0 for key in held)
        return wait_for("both workers connected and fetching", fetching)


class StallTests(FaultCase):
    """A Redis that stops answering, then answers again (or not)."""

    @defer.inlineCallbacks
    def test_stall_past_the_timeout_recovers(self):
        """Redis stalled 8 s (8 x SCHEDULER_REDIS_TIMEOUT, longer than the heartbeat; a
        reconnection's AUTH times out and txredisapi gives up): the watchdog reconnects,
        both workers finish with every page, exit 0, ledgers balanced."""
        d = defer.gatherResults([self.worker("-s", "SCHEDULER_REDIS_RETRIES=30")
                                 for _ in range(2)])
        yield self.both_fetching()
        self.redis.pause()
        yield _sleep(8)  # the fault: a stall of 8 s
        self.redis.resume()
        results = yield d
        for i, (code, _out, err) in enumerate(results):
            self.assertEqual(code, 0, err)
            self.assertNotIn("Traceback", err)
            self.assertEqual(self.stats(i)["finish_reason"], "finished", err)
            self.assertEqual(self.stats(i)["ledger/missing"], 0)
        self.assertEqual(self.scraped(0, 1), self.all_pages())
        errs = "".join(err for _code, _out, err in results)
        self.assertIn("stopped reconnecting", errs)
        self.assertIn("reachable again", errs)

    @defer.inlineCallbacks
    def test_stall_past_the_bound_ends_the_worker(self):
        """Redis stalled for good: the worker stops with one clear error and exit 1
        within SCHEDULER_REDIS_TIMEOUT x (1 + SCHEDULER_REDIS_RETRIES) plus the close's
        timeout, while Redis is still stalled."""
        d = self.worker("-s", "SCHEDULER_REDIS_RETRIES=2")
        yield self.fetched(10)
        self.redis.pause()
        paused = time.monotonic()
        code, _out, err = yield d
        elapsed = time.monotonic() - paused
        self.assertEqual(code, 1, err)
        self.assertLess(elapsed, 3 + 1 + 10)  # the bound, the close, a loaded machine
        self.assertIn("Redis has not answered for", err)
        self.assertIn("redis_unreachable_error", err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(self.stats(0)["finish_reason"], "redis_unreachable_error")
        self.redis.resume()
        # the next run takes over what that worker held, once its heartbeat expired
        code, _out, err = yield self.worker()
        self.assertEqual(code, 0, err)
        self.assertEqual(self.scraped(0, 1), self.all_pages())


class DataLossTests(FaultCase):
    """Redis restarted without its data."""

    @defer.inlineCallbacks
    def test_restart_without_data_then_start_again(self):
        """The worker stops (exit 1, redis_state_error) saying Redis restarted without
        its data; started again, it says it starts a new crawl and fetches every page:
        nothing is skipped as seen."""
        d = self.worker()
        yield self.fetched(10)
        self.redis.stop()
        self.redis.start()  # on the same port, empty
        code, _out, err = yield d
        self.assertEqual(code, 1, err)
        self.assertIn("Redis restarted without its data", err)
        self.assertIn("redis_state_error", err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(self.stats(0)["finish_reason"], "redis_state_error")
        self.assertEqual(self.redis.call("KEYS", "*"), [])  # nothing written after
        hits = len(self.server.hits)
        code, _out, err = yield self.worker()
        self.assertEqual(code, 0, err)
        self.assertIn("started a new crawl", err)
        self.assertEqual(self.scraped(1), self.all_pages())
        self.assertGreaterEqual(hits, 10)


class PersistedRestartTests(FaultCase):
    """Redis restarted with its data (append-only file)."""

    def setUp(self):
        self.dir = os.path.abspath(self.mktemp())
        os.makedirs(self.dir)
        super().setUp()

    def redis_options(self):
        return ("--appendonly", "yes", "--appendfsync", "always", "--dir", self.dir)

    @defer.inlineCallbacks
    def test_restart_with_data_resumes(self):
        """A Redis restarted with its data mid-crawl: the worker reconnects, resumes the
        same crawl and fetches every page, exit 0."""
        d = self.worker("-s", "SCHEDULER_REDIS_RETRIES=30")
        yield self.fetched(10)
        self.redis.stop()
        self.redis.start()
        code, _out, err = yield d
        self.assertEqual(code, 0, err)
        self.assertIn("reachable again", err)
        self.assertNotIn("gone", err)
        self.assertEqual(self.scraped(0), self.all_pages())


class PausedWorkerTests(FaultCase):
    """A worker paused (SIGSTOP) past its heartbeat, as in a partition."""

    @defer.inlineCallbacks
    def test_paused_worker_finishes_cleanly(self):
        """The other worker requeues the paused one's requests and goes on; resumed, the
        paused worker exits 0 without a "gone" message; every page is in a feed; only
        the end marker is left."""
        d = defer.gatherResults([self.worker() for _ in range(2)])
        yield wait_for("both workers joined", lambda: len(self.transports) == 2 and
                       len(self.redis.call("KEYS", "*alive:*")) == 2)
        yield self.fetched(10)
        os.kill(self.transports[1].pid, signal.SIGSTOP)
        yield _sleep(5)  # the fault: a pause of 5 s, past the 2 s heartbeat
        os.kill(self.transports[1].pid, signal.SIGCONT)
        results = yield d
        for i, (code, _out, err) in enumerate(results):
            self.assertEqual(code, 0, err)
            self.assertNotIn("gone", err)
            self.assertNotIn("Traceback", err)
            self.assertEqual(self.stats(i)["ledger/missing"], 0)
        self.assertEqual(self.scraped(0, 1), self.all_pages())
        [marker] = self.redis.call("KEYS", "*")
        self.assertTrue(marker.endswith(b":epoch"))

"""
The shared frontier when things go wrong: a Redis restarted without its data, a worker
killed moments before the crawl finishes, an outage at close, a wrong password, and two
unrelated crawls on one Redis. Each test runs its own redis-server on a free 127.0.0.1
port (and skips when redis-server is not installed).
"""

import logging

from twisted.internet import defer, reactor, task

from tinyscrapy.http import Request

from .test_redis_frontier import SchedulerTestCase, wait_until


class LogRecords(logging.Handler):
    """The records of the shared frontier's logger, from INFO up."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.records = []

    def emit(self, record):
        self.records.append(record)

    def messages(self, level=logging.INFO):
        return [r.getMessage() for r in self.records if r.levelno >= level]

    def has(self, text, level=logging.INFO):
        return any(text in message for message in self.messages(level))


def capture_logs(test):
    """@return: a L{LogRecords} on C{tinyscrapy.frontier.redis} until C{test}'s cleanup."""
    records = LogRecords()
    logger = logging.getLogger("tinyscrapy.frontier.redis")
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(records)
    test.addCleanup(logger.setLevel, level)
    test.addCleanup(logger.removeHandler, records)
    return records


class FaultTestCase(SchedulerTestCase):
    """A redis-server of the test's own, and schedulers on it in this process."""

    extra_settings = {"SCHEDULER_REDIS_TIMEOUT": 2}

    def setUp(self):
        super().setUp()
        self.logs = capture_logs(self)

    def take(self, scheduler):
        """Wait until C{scheduler} hands out a request; @return: it."""
        taken = []

        def one():
            request = scheduler.next_request()
            if request is not None:
                taken.append(request)
            return bool(taken)
        yield wait_until(one)
        return taken[0]

    @defer.inlineCallbacks
    def finish(self, scheduler, url="http://example.com/done"):
        """One request through C{scheduler}, until it sees the crawl over; then close it
        with the reason C{finished}."""
        scheduler.enqueue_request(Request(url))
        request = yield self.take(scheduler)
        scheduler.request_done(request)
        yield wait_until(lambda: not scheduler.has_pending_requests())
        scheduler._closed_in_test = True
        yield scheduler.close("finished")


class FinishTests(FaultTestCase):
    """The end of a crawl: once, in Redis, for every worker."""

    @defer.inlineCallbacks
    def test_finish_clears_keys_despite_a_killed_idle_worker(self):
        """A worker killed moments ago (its heartbeat not expired, nothing taken) does not
        keep the crawl going: the keys go, the end marker stays for a while, and a
        worker started meanwhile finds the crawl over and does nothing."""
        self.redis.call("SADD", self.key("workers"), "ghost")
        self.redis.call("SET", self.key("alive:ghost"), "1", "PX", 60000)
        a = yield self.open_scheduler(SCHEDULER_PERSIST=False)
        yield self.finish(a)
        self.assertEqual(self.redis.call("KEYS", "*"), [self.key("epoch").encode()])
        self.assertTrue(self.redis.call("GET", self.key("epoch")).startswith(b"over:"))
        self.assertGreater(self.redis.call("PTTL", self.key("epoch")), 50000)
        b = yield self.open_scheduler()
        self.assertFalse(b.has_pending_requests())
        self.assertFalse(b.enqueue_request(Request("http://example.com/again")))
        self.assertTrue(self.logs.has("is over", logging.WARNING), self.logs.messages())
        self.assertTrue(self.logs.has(f"DEL {self.key('epoch')}", logging.WARNING))
        self.assertEqual(self.redis.call("KEYS", "*"), [self.key("epoch").encode()])

    @defer.inlineCallbacks
    def test_idle_worker_finishes_when_another_ended_the_crawl(self):
        """Two workers: the one whose status ends the crawl marks it over; the other,
        idle, sees it over (not a lost state) and writes nothing when it closes."""
        a = yield self.open_scheduler()
        b = yield self.open_scheduler()
        yield self.finish(a)
        yield wait_until(lambda: not b.has_pending_requests())
        self.assertEqual(self.stops, [])
        b._closed_in_test = True
        yield b.close("finished")
        self.assertEqual(self.redis.call("KEYS", "*"), [self.key("epoch").encode()])
        self.assertFalse(self.logs.has("gone", logging.ERROR), self.logs.messages())

    @defer.inlineCallbacks
    def test_crawl_goes_on_while_another_worker_holds_work(self):
        """A worker that leaves (shutdown) while another holds a request leaves the keys;
        the holder ends the crawl once it is done."""
        b = yield self.open_scheduler()
        b.enqueue_request(Request("http://example.com/held"))
        request = yield self.take(b)
        a = yield self.open_scheduler()
        a._closed_in_test = True
        yield a.close("shutdown")
        self.assertEqual(self.redis.call("EXISTS", self.key("seen")), 1)
        self.assertEqual(self.redis.call("GET", self.key("epoch")), b.store.epoch.encode())
        b.request_done(request)
        yield wait_until(lambda: not b.has_pending_requests())
        self.assertEqual(self.redis.call("KEYS", "*"), [self.key("epoch").encode()])

    @defer.inlineCallbacks
    def test_join_warns_about_an_earlier_crawls_fingerprints(self):
        """Starting a crawl on a seen set left by an earlier one warns once, with the
        count."""
        self.redis.call("SADD", self.key("seen"), "1", "2", "3")
        yield self.open_scheduler()
        warnings = [m for m in self.logs.messages(logging.WARNING)
                    if "its 3 fingerprints will not be fetched again" in m]
        self.assertEqual(len(warnings), 1, self.logs.messages())


class OutageTests(FaultTestCase):
    """Redis goes away while a worker runs."""

    @defer.inlineCallbacks
    def test_restart_without_data_stops_the_crawl(self):
        """A lost connection is logged though no command was in flight, its return too;
        Redis came back empty, so the crawl stops with redis_state_error."""
        a = yield self.open_scheduler()
        a.enqueue_request(Request("http://example.com/held"))
        yield self.take(a)  # taken, not done: the crawl is not over
        yield wait_until(lambda: not (a._popping or a._flushing or a._checking))
        self.redis.stop()
        yield wait_until(lambda: self.logs.has("lost the connection to Redis",
                                               logging.WARNING))
        self.redis.start()  # on the same port, without the data
        yield wait_until(lambda: self.stops, timeout=15)
        self.assertEqual(self.stops, ["redis_state_error"])
        self.assertTrue(self.logs.has("reachable again"), self.logs.messages())
        self.assertTrue(self.logs.has("are gone: Redis restarted without its data",
                                      logging.ERROR), self.logs.messages())
        self.assertEqual(a.stats.get_value("scheduler/redis/state_lost"), 1)
        self.assertTrue(a.has_pending_requests())  # it never decided the crawl was over

    @defer.inlineCallbacks
    def test_writes_of_a_lost_epoch_are_refused_and_counted(self):
        """After the crawl's keys vanished, a worker's push is refused (nothing recreates
        a queue or a seen set without the epoch), counted, and the crawl stops."""
        a = yield self.open_scheduler()
        self.redis.call("FLUSHALL")
        a.enqueue_request(Request("http://example.com/late"))
        yield wait_until(lambda: self.stops, timeout=15)
        self.assertEqual(self.stops, ["redis_state_error"])
        self.assertEqual(a.stats.get_value("scheduler/redis/refused_writes"), 1)
        self.assertEqual(self.redis.call("KEYS", "*"), [])
        self.assertTrue(self.logs.has("Redis did not restart: the keys were deleted",
                                      logging.ERROR), self.logs.messages())

    @defer.inlineCallbacks
    def test_no_flush_waiters_pile_up_during_an_outage(self):
        """Enqueues and ticks during an outage schedule no flush while one is on its way."""
        a = yield self.open_scheduler(SCHEDULER_REDIS_TIMEOUT=1)
        self.redis.stop()
        yield wait_until(lambda: not a.store.connected())
        for i in range(5):
            a.enqueue_request(Request(f"http://example.com/w{i}"))
            yield task.deferLater(reactor, 0.06, lambda: None)
        self.assertLessEqual(len(a._flush_waiters), 1)  # the flush on its way
        self.assertEqual(len(a._outbox) + len(a._pushing), 5)

    @defer.inlineCallbacks
    def test_close_retries_a_failed_write(self):
        """A flush that fails at close is retried until the deadline, not given up."""
        a = yield self.open_scheduler(SCHEDULER_REDIS_TIMEOUT=5)
        push, failures = a.store.push, []

        def fail_once(entries, acks=(), reports=(), dead=()):
            if not failures:
                from txredisapi import ConnectionError
                failures.append(1)
                return defer.fail(ConnectionError("Lost connection"))
            return push(entries, acks, reports, dead)
        a.store.push = fail_once
        a._tick.stop()  # nothing flushes but the close
        a.enqueue_request(Request("http://example.com/late"))
        a._flush_call.cancel()
        a._flush_call = None
        a._closed_in_test = True
        yield a.close("shutdown")
        self.assertEqual(failures, [1])
        self.assertEqual(self.redis.call("ZCARD", self.key("queue")), 1)
        self.assertFalse(self.logs.has("not written", logging.ERROR), self.logs.messages())

    @defer.inlineCallbacks
    def test_close_during_an_outage_says_what_was_not_written(self):
        """Redis down at close: after SCHEDULER_REDIS_TIMEOUT, one error that counts the
        requests and acknowledgements not written."""
        a = yield self.open_scheduler(SCHEDULER_REDIS_TIMEOUT=1)
        self.redis.stop()
        yield wait_until(lambda: not a.store.connected())
        for i in range(2):
            a.enqueue_request(Request(f"http://example.com/lost{i}"))
        a._closed_in_test = True
        yield a.close("shutdown")
        errors = self.logs.messages(logging.ERROR)
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("Redis did not answer within SCHEDULER_REDIS_TIMEOUT (1 s): 2 "
                      "request(s) not written, 0 acknowledgement(s) not written", errors[0])
        self.assertNotIn("CancelledError", errors[0])


class PrefetchTests(FaultTestCase):
    """The buffer when every request in it waits on a slot delay."""

    @defer.inlineCallbacks
    def test_refill_when_buffered_requests_all_wait(self):
        """next_request() finding nothing ready while requests are buffered takes another
        batch, up to 4 x CONCURRENT_REQUESTS."""
        a = yield self.open_scheduler(CONCURRENT_REQUESTS=2)
        for i in range(20):
            a.enqueue_request(Request(f"http://example.com/slot{i}"))
        yield wait_until(lambda: a.size() == 2)
        yield task.deferLater(reactor, 0.2, lambda: None)
        self.assertEqual(a.size(), 2)  # a full buffer is not refilled while it serves
        a.local.next_request = lambda: None  # every buffered request waits on its slot
        sizes = []

        def starved():
            a.next_request()
            sizes.append(a.size())
            return a.size() == 8
        yield wait_until(starved)
        yield task.deferLater(reactor, 0.2, lambda: None)
        a.next_request()
        self.assertEqual(a.size(), 8)
        self.assertLessEqual(max(sizes), 8)

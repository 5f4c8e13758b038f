"""
The shared frontier (C{--scheduler redis://}): each test runs its own redis-server on a free
127.0.0.1 port; the tests skip when redis-server is not installed (CI installs it).
"""

import json
import os
import socket
import struct

from twisted.internet import defer, reactor, task
from twisted.trial import unittest
from twisted.web.server import NOT_DONE_YET

from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import UnserializableRequest
from tinyscrapy.frontier import codec
from tinyscrapy.http import FormRequest, Request
from tinyscrapy.settings import Settings
from tinyscrapy.spiders import Spider

from .helpers import run_command, serve
from .redisserver import NO_REDIS, RedisServer
from .servers import Delay


class _Gate:
    """
    Holds every page's answer until C{waiting} requests wait at the server at once: more
    than one process's C{CONCURRENT_REQUESTS}, so both processes are fetching (an event,
    however late the second one started). Bounded: after C{bound} seconds it opens anyway,
    and the test's assertion says what happened.
    """

    def __init__(self, server, waiting, bound=30):
        self.server = server
        self.waiting = waiting
        self.held = []
        self.opened = False
        server.callLater(bound, self.open)

    def hold(self, answer):
        if self.opened:
            answer()
            return
        self.held.append(answer)
        if len(self.held) >= self.waiting:
            self.open()

    def open(self):
        if not self.opened:
            self.opened = True
            held, self.held = self.held, []
            for answer in held:
                answer()


class _Gated(Delay):
    """A L{Delay} page whose answer waits for the L{_Gate} first."""

    def __init__(self, gate, seconds, body):
        super().__init__(seconds, body)
        self.gate = gate

    def render(self, request):
        self.gate.hold(lambda: Delay.render(self, request))
        return NOT_DONE_YET

START_URL = "http://127.0.0.1:9/"  # never fetched: the crawl does not start


class SharedSpider(Spider):
    name = "shared"

    def parse(self, response):
        pass

    def other(self, response):
        pass

    def failed(self, failure):
        pass


def wait_until(predicate, timeout=5.0):
    """@return: a Deferred firing once C{predicate()} is true (polled); errbacks after
    C{timeout} seconds."""
    deadline = reactor.seconds() + timeout

    def check():
        if predicate():
            return None
        if reactor.seconds() > deadline:
            raise AssertionError(f"timed out waiting for {predicate.__doc__ or predicate}")
        return task.deferLater(reactor, 0.02, check)
    return task.deferLater(reactor, 0, check)


class CodecTests(unittest.TestCase):
    """Requests as bytes, callbacks by name."""

    def setUp(self):
        self.spider = SharedSpider()

    def test_round_trip(self):
        """Every field survives, and the callbacks are the spider's methods again."""
        request = Request("http://example.com/a?b=1", callback=self.spider.other,
                          errback=self.spider.failed, method="POST", body=b"x=1",
                          headers={"X-Thing": "yes"}, meta={"k": [1, 2]},
                          cb_kwargs={"n": 3}, priority=5, depth=2, dont_filter=True)
        request.fingerprint = 1234
        back = codec.request_from_bytes(codec.request_to_bytes(request, self.spider), self.spider)
        self.assertEqual((back.url, back.method, back.body, back.priority, back.depth),
                         (request.url, "POST", b"x=1", 5, 2))
        self.assertEqual(back.callback, self.spider.other)
        self.assertEqual(back.errback, self.spider.failed)
        self.assertEqual(back.headers["x-thing"], b"yes")
        self.assertEqual((back.meta, back.cb_kwargs), ({"k": [1, 2]}, {"n": 3}))
        self.assertEqual((back.dont_filter, back.fingerprint), (True, 1234))

    def test_subclass_kept(self):
        """A FormRequest comes back a FormRequest, with its body."""
        request = FormRequest("http://example.com/f", formdata={"q": "a b"})
        back = codec.request_from_bytes(codec.request_to_bytes(request, self.spider), self.spider)
        self.assertIsInstance(back, FormRequest)
        self.assertEqual(back.body, b"q=a+b")

    def test_callback_not_a_spider_method(self):
        """A lambda cannot be stored: the error names the URL."""
        request = Request("http://example.com/lambda", callback=lambda response: None)
        with self.assertRaises(UnserializableRequest) as caught:
            codec.request_to_bytes(request, self.spider)
        self.assertIn("http://example.com/lambda", str(caught.exception))


class SchedulerTestCase(unittest.TestCase):
    """A redis-server of the test's own, and RedisSchedulers on it in this process, each
    with a crawler of its own whose C{stop} only records the reason in C{self.stops}."""

    skip = NO_REDIS
    timeout = 30
    extra_settings = {}

    def setUp(self):
        self.redis = RedisServer().start()  # each test its own (it starts in ~30 ms)
        self.addCleanup(self.redis.stop)
        self.stops = []  # the reasons the schedulers asked their crawler to stop with

    @defer.inlineCallbacks
    def open_scheduler(self, with_slots=False, **settings):
        """A RedisScheduler of its own crawler, open; closed (shutdown) at cleanup."""
        from tinyscrapy.frontier.redis import RedisScheduler
        values = {"SCHEDULER_URL": self.redis.url, "CONCURRENT_REQUESTS": 4,
                  "SCHEDULER_REDIS_POLL_INTERVAL": 0.05, **self.extra_settings}
        values.update(settings)
        crawler = Crawler(SharedSpider, Settings(values), reactor=reactor)
        crawler.settings.freeze()
        crawler.stop = self._record_stop
        spider = crawler.spider = SharedSpider.from_crawler(crawler)
        if with_slots:  # the downloader's slots, as in a crawl (sends are reported)
            from tinyscrapy.core.downloader.slots import Slots
            crawler.slots = Slots.from_crawler(crawler)
        scheduler = RedisScheduler.from_crawler(crawler)
        yield scheduler.open(spider)
        self.addCleanup(self.close_once, scheduler, "shutdown")
        return scheduler

    def _record_stop(self, reason="shutdown"):
        self.stops.append(reason)

    def close_once(self, scheduler, reason):
        if getattr(scheduler, "_closed_in_test", False):
            return None
        scheduler._closed_in_test = True
        return scheduler.close(reason)

    def key(self, name):
        return f"tinyscrapy:shared:{name}"


class RedisSchedulerTests(SchedulerTestCase):
    """Two or more schedulers on one Redis, in this process."""

    def flushed(self, *schedulers):
        """@return: a Deferred firing once each scheduler wrote everything."""
        return wait_until(lambda: all(not (s._outbox or s._acks or s._flushing)
                                      for s in schedulers))

    @defer.inlineCallbacks
    def test_two_schedulers_dedup_one_url(self):
        """Both admit the URL locally; Redis queues it once and counts one duplicate."""
        a = yield self.open_scheduler()
        b = yield self.open_scheduler()
        self.assertTrue(a.enqueue_request(Request("http://example.com/one")))
        self.assertTrue(b.enqueue_request(Request("http://example.com/one")))
        yield self.flushed(a, b)
        pushed = [s.stats.get_value("scheduler/redis/pushed", 0) for s in (a, b)]
        dups = [s.stats.get_value("scheduler/redis/duplicates", 0) for s in (a, b)]
        self.assertEqual((sorted(pushed), sorted(dups)), ([0, 1], [0, 1]))
        self.assertEqual(self.redis.call("SCARD", self.key("seen")), 1)
        taken = yield self.take_all(a, b)
        self.assertEqual([request.url for request in taken], ["http://example.com/one"])

    @defer.inlineCallbacks
    def take_all(self, *schedulers, count=1):
        """Wait until C{count} requests were handed out by any of C{schedulers}."""
        taken = []

        def enough():
            for scheduler in schedulers:
                request = scheduler.next_request()
                if request is not None:
                    taken.append(request)
            return len(taken) >= count
        yield wait_until(enough)
        return taken

    @defer.inlineCallbacks
    def test_request_done_acknowledges(self):
        """A taken request stays in the worker's processing hash until request_done."""
        a = yield self.open_scheduler()
        a.enqueue_request(Request("http://example.com/ack"))
        [request] = yield self.take_all(a)
        processing = self.key("processing:" + a.worker)
        self.assertEqual(self.redis.call("HLEN", processing), 1)
        self.assertTrue(a.has_pending_requests())
        a.request_done(request)
        yield self.flushed(a)
        self.assertEqual(self.redis.call("HLEN", processing), 0)

    @defer.inlineCallbacks
    def test_crawl_over_only_when_no_worker_holds_anything(self):
        """has_pending_requests stays True while another worker holds a request, and turns
        False once a status check confirmed nothing is queued or taken anywhere."""
        a = yield self.open_scheduler()
        b = yield self.open_scheduler()
        b.enqueue_request(Request("http://example.com/held"))
        [request] = yield self.take_all(b)
        yield task.deferLater(reactor, 0.3, lambda: None)  # several status checks
        self.assertTrue(a.has_pending_requests())
        b.request_done(request)
        yield wait_until(lambda: not a.has_pending_requests())
        yield wait_until(lambda: not b.has_pending_requests())

    @defer.inlineCallbacks
    def test_dead_worker_requeued(self):
        """The entries of a worker whose heartbeat expired go back to the queue, and
        another worker takes them."""
        spider = SharedSpider()
        member = (b"\0" * 16 + struct.pack(">H", 11) + b"example.com" + struct.pack(">LL", 8, 0)
                  + codec.request_to_bytes(Request("http://example.com/orphan"), spider))
        self.redis.call("SADD", self.key("workers"), "ghost")
        self.redis.call("HSET", self.key("processing:ghost"), member, "0")
        a = yield self.open_scheduler()  # checks at open
        self.assertEqual(a.stats.get_value("scheduler/redis/requeued"), 1)
        [request] = yield self.take_all(a)
        self.assertEqual(request.url, "http://example.com/orphan")
        self.assertEqual(self.redis.call("EXISTS", self.key("processing:ghost")), 0)

    @defer.inlineCallbacks
    def test_killed_worker_requeued_after_its_heartbeat(self):
        """A worker that stops without closing keeps its entries until its heartbeat
        key expires; then a live worker requeues and takes them."""
        a = yield self.open_scheduler(SCHEDULER_REDIS_WORKER_TIMEOUT=0.5)
        a.enqueue_request(Request("http://example.com/killed"))
        yield self.take_all(a)
        yield wait_until(lambda: a._popping is None and not a._flushing)
        a._tick.stop()  # as if the process died: no heartbeat, no close
        a._closed_in_test = True
        yield a.store.disconnect()
        b = yield self.open_scheduler()
        self.assertEqual(b.stats.get_value("scheduler/redis/requeued"), None)  # still alive
        [request] = yield self.take_all(b)
        self.assertEqual(request.url, "http://example.com/killed")
        self.assertEqual(b.stats.get_value("scheduler/redis/requeued"), 1)

    @defer.inlineCallbacks
    def test_close_pushes_back_local_buffer(self):
        """Requests taken but never handed out go back to the shared queue at close."""
        a = yield self.open_scheduler()
        for i in range(3):
            a.enqueue_request(Request(f"http://example.com/buffered{i}"))
        yield wait_until(lambda: a.size() == 3)
        self.assertEqual(self.redis.call("ZCARD", self.key("queue")), 0)
        a._closed_in_test = True
        yield a.close("shutdown")
        self.assertEqual(self.redis.call("ZCARD", self.key("queue")), 3)
        self.assertEqual(self.redis.call("EXISTS", self.key("processing:" + a.worker)), 0)
        self.assertEqual(self.redis.call("SCARD", self.key("workers")), 0)
        self.assertEqual(a.stats.get_value("scheduler/redis/requeued"), 3)

    @defer.inlineCallbacks
    def test_finish_deletes_keys_unless_persist(self):
        """A finished crawl leaves only its end marker (which expires); with
        SCHEDULER_PERSIST the seen set stays too."""
        for persist, left in ((False, [self.key("epoch").encode()]),
                              (True, [self.key("epoch").encode(), self.key("seen").encode()])):
            self.redis.call("FLUSHALL")
            a = yield self.open_scheduler(SCHEDULER_PERSIST=persist)
            a.enqueue_request(Request("http://example.com/done"))
            [request] = yield self.take_all(a)
            a.request_done(request)
            yield wait_until(lambda a=a: not a.has_pending_requests())
            a._closed_in_test = True
            yield a.close("finished")
            self.assertEqual(sorted(self.redis.call("KEYS", "*")), left)
            self.assertGreater(self.redis.call("PTTL", self.key("epoch")), 0)


class SharedCrawlTests(unittest.TestCase):
    """Real processes: C{python -m tinyscrapy crawl URL --scheduler redis://...}."""

    skip = NO_REDIS
    timeout = 60
    PAGES = 60
    CONCURRENT = 2  # CONCURRENT_REQUESTS of each process

    def setUp(self):
        self.redis = RedisServer().start()  # each test its own (it starts in ~30 ms)
        self.addCleanup(self.redis.stop)
        self.server = serve(self)
        # more answers waiting than one process may have in flight: both are fetching (at
        # 2 each, the two together stay within the host's cluster-wide parallelism, 8,
        # which one process's leases, in flight and buffered, would otherwise fill)
        self.gate = _Gate(self.server, waiting=self.CONCURRENT + 1)
        others = [f"/p{i}" for i in range(1, self.PAGES)]
        self.start_url = self.server.add_page("/", links=others)
        for i, path in enumerate(others):  # each page links on, and home: duplicates
            body = (f'<title>{path}</title><a href="{others[(i + 1) % len(others)]}">n</a>'
                    f'<a href="/">home</a>').encode()
            # each test asserts both processes share the crawl: no page is answered before
            # both are fetching
            self.server.add(path, _Gated(self.gate, 0.3, body))

    def crawl(self, feed, stats, *extra, started=None):
        args = ["crawl", self.start_url, "--scheduler", self.redis.url, "-O", feed,
                "-s", "ROBOTSTXT_OBEY=False", "-s", f"STATS_FILE={stats}", "-L", "WARNING",
                "-s", "SCHEDULER_REDIS_POLL_INTERVAL=0.05",
                "-s", f"CONCURRENT_REQUESTS={self.CONCURRENT}",
                *extra]
        return run_command(reactor, args, started=started)

    @defer.inlineCallbacks
    def test_two_processes_share_one_crawl(self):
        """Both exit 0; every page is fetched once and in one feed; both fetched some;
        each process's ledger balances."""
        feeds = [os.path.abspath(self.mktemp() + ".jsonl") for _ in range(2)]
        stats = [os.path.abspath(self.mktemp() + ".json") for _ in range(2)]
        results = yield defer.gatherResults([self.crawl(feeds[i], stats[i])
                                             for i in range(2)])
        for code, _out, err in results:
            self.assertEqual(code, 0, err)
            self.assertNotIn("Traceback", err)
        urls = []
        for feed in feeds:
            with open(feed) as f:
                urls.append([json.loads(line)["url"] for line in f])
        self.assertTrue(all(urls), f"a process fetched nothing: {list(map(len, urls))}")
        every = sorted(urls[0] + urls[1])
        self.assertEqual(len(every), self.PAGES)
        self.assertEqual(len(set(every)), self.PAGES)
        self.assertEqual(set(self.server.hits.values()), {1})
        self.assertEqual(len(self.server.hits), self.PAGES)
        for path in stats:
            with open(path) as f:
                values = json.load(f)
            self.assertEqual(values["ledger/missing"], 0, values)
            self.assertEqual(values["finish_reason"], "finished")
        [marker] = self.redis.call("KEYS", "*")  # SCHEDULER_PERSIST=False: the end marker
        self.assertGreater(self.redis.call("PTTL", marker), 0)

    @defer.inlineCallbacks
    def test_killed_process_loses_nothing(self):
        """A process killed mid-crawl (SIGKILL) leaves its taken requests in Redis; a
        second process requeues them once its heartbeat expires and finishes the crawl."""
        self.gate.open()  # one process at a time here: nothing to wait for
        feeds = [os.path.abspath(self.mktemp() + ".jsonl") for _ in range(2)]
        stats = [os.path.abspath(self.mktemp() + ".json") for _ in range(2)]
        transports = []
        first = self.crawl(feeds[0], stats[0], "-s", "SCHEDULER_REDIS_WORKER_TIMEOUT=1",
                           started=transports.append)
        yield wait_until(lambda: len(self.server.hits) >= 10, timeout=20)
        transports[0].signalProcess("KILL")
        yield first
        code, _out, err = yield self.crawl(feeds[1], stats[1])
        self.assertEqual(code, 0, err)
        with open(stats[1]) as f:
            values = json.load(f)
        self.assertGreater(values["scheduler/redis/requeued"], 0)
        self.assertEqual(len(self.server.hits), self.PAGES)
        scraped = set()  # items are written before their request is acknowledged
        for feed in feeds:
            with open(feed) as f:
                scraped |= {json.loads(line)["url"] for line in f}
        self.assertEqual(scraped, {self.server.url(path) for path in self.server.hits})


class RedisCommandLineTests(unittest.TestCase):
    """Errors found before any Redis answers (no redis-server needed)."""

    timeout = 30

    @defer.inlineCallbacks
    def test_unreachable_redis_exits_2(self):
        """Nothing listens at the URL: exit status 2 and one error line, no traceback."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        url = f"redis://127.0.0.1:{port}/0"
        code, _out, err = yield run_command(
            reactor, ["crawl", START_URL, "--scheduler", url, "-L", "WARNING"])
        self.assertEqual(code, 2, err)
        self.assertEqual(err.strip().splitlines(),
                         [f"tinyscrapy: error: cannot connect to {url}: Connection refused"])

    @defer.inlineCallbacks
    def test_bad_url_is_a_usage_error(self):
        """A URL that is not redis://host:port/db is a one-line usage error."""
        code, _out, err = yield run_command(
            reactor, ["crawl", START_URL, "--scheduler", "redis://127.0.0.1:port/0"])
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("not a redis://host:port/db URL", err)

"""
Stored state that cannot stall a shared crawl: queue members and held entries crafted by
hand (too short, a length that lies, a parallelism of 0, a delay of weeks, a score that is
not a number), keys of the wrong type, and a Redis that does not answer the first
connection. Each test runs its own redis-server.
"""

import logging
import struct

from twisted.internet import defer

from tinyscrapy.exceptions import UsageError
from tinyscrapy.frontier import codec
from tinyscrapy.frontier.redisscripts import MAX_DELAY_MS
from tinyscrapy.http import Request

from .test_redis_faults import FaultTestCase
from .test_redis_frontier import wait_until


def header(name=b"example.com", parallelism=1, delay_ms=0, length=None):
    """A lease header as a worker writes it (id, name length, name, parallelism, delay);
    C{length} replaces the name's true length (a header that lies)."""
    return (struct.pack(">Q4sLH", 1, b"test", 7, len(name) if length is None else length)
            + name + struct.pack(">LL", parallelism, delay_ms))


class CraftedMemberTests(FaultTestCase):
    """Queue members no worker wrote."""

    def seed(self, scheduler, *members):
        for score, member in enumerate(members):
            self.redis.call("ZADD", self.key("queue"), score, member)

    @defer.inlineCallbacks
    def take_all(self, scheduler, count):
        """Wait until C{scheduler} handed out C{count} requests; @return: them."""
        taken = []
        while len(taken) < count:  # bounded: each take waits at most wait_until's time
            taken.append((yield self.take(scheduler)))
        return taken

    def valid(self, scheduler, url, **header_kwargs):
        data = codec.request_to_bytes(Request(url), scheduler.spider)
        return header(**header_kwargs) + data

    @defer.inlineCallbacks
    def test_bad_members_dead_lettered_and_the_crawl_ends(self):
        """A 5-byte member, one whose name length lies, one whose request does not
        decode: each moved to the dead-letter list with a line and a count; the one of
        parallelism 0 (read as 1) and the one asking a delay of weeks (read as the bound)
        are fetched; then the crawl ends, for good."""
        a = yield self.open_scheduler()
        good = [self.valid(a, "http://example.com/par0", parallelism=0),
                self.valid(a, "http://example.org/slow", name=b"example.org",
                           delay_ms=0xFFFFFFFF)]
        bad = [b"short", header(length=60000) + b"abc",
               header(name=b"example.net") + b"TSJ1{not json"]
        self.seed(a, bad[0], good[0], bad[1], good[1], bad[2])
        a._empty_pop_at = float("-inf")
        taken = yield self.take_all(a, 2)
        self.assertEqual(sorted(r.url for r in taken),
                         ["http://example.com/par0", "http://example.org/slow"])
        for request in taken:
            a.request_done(request)
        yield wait_until(lambda: not a.has_pending_requests())
        self.assertEqual(sorted(self.redis.call("LRANGE", self.key("dead"), 0, -1)),
                         sorted(bad))
        self.assertEqual(a.stats.get_value("scheduler/redis/dead_letter"), 3)
        lines = [m for m in self.logs.messages(logging.ERROR) if "dead" in m]
        self.assertEqual(len(lines), 2, lines)  # the pop's two, the one that did not decode
        self.assertIn("moved 2 queue entries", lines[0])
        self.assertEqual(a._lease_delays.get("example.org"), MAX_DELAY_MS)
        self.assertEqual(self.stops, [])

    @defer.inlineCallbacks
    def test_bad_entries_held_by_a_dead_worker(self):
        """A dead worker's processing hash holding a member too short for its header and
        one whose score is not a number: the status moves both to the dead-letter list
        instead of failing for every worker; the good one is requeued and fetched."""
        a = yield self.open_scheduler()
        ghost = self.key("processing:ghost")
        good = self.valid(a, "http://example.com/held")
        self.redis.call("HSET", ghost, b"tiny", "3", good, "5",
                        self.valid(a, "http://example.com/nan"), "not-a-number")
        self.redis.call("SADD", self.key("workers"), "ghost")
        a._next_status = float("-inf")
        held = yield self.take(a)
        self.assertEqual(held.url, "http://example.com/held")
        a.request_done(held)
        yield wait_until(lambda: not a.has_pending_requests())
        self.assertEqual(len(self.redis.call("LRANGE", self.key("dead"), 0, -1)), 2)
        self.assertEqual(a.stats.get_value("scheduler/redis/dead_letter"), 2)
        self.assertEqual(self.stops, [])

    @defer.inlineCallbacks
    def test_a_bad_counter_counts_as_zero(self):
        """A politeness counter that is not a number (host:active) does not fail the
        pop: the request is leased and fetched."""
        a = yield self.open_scheduler()
        self.redis.call("HSET", self.key("host:active"), "example.com", "many")
        self.seed(a, self.valid(a, "http://example.com/x"))
        a._empty_pop_at = float("-inf")
        request = yield self.take(a)
        self.assertEqual(request.url, "http://example.com/x")
        self.assertEqual(self.stops, [])

    @defer.inlineCallbacks
    def test_a_next_send_time_no_worker_set(self):
        """A slot's next-send time set by hand centuries ahead (host:next): read as the
        slot's delay and the hold from now, so its request is leased within that."""
        a = yield self.open_scheduler()
        self.redis.call("HSET", self.key("host:next"), "example.com", "9000000000000000")
        self.seed(a, self.valid(a, "http://example.com/x", delay_ms=50))
        a._empty_pop_at = float("-inf")
        request = yield self.take(a)
        self.assertEqual(request.url, "http://example.com/x")
        self.assertLess(int(self.redis.call("HGET", self.key("host:next"), "example.com")),
                        9000000000000000)
        self.assertEqual(self.stops, [])

    @defer.inlineCallbacks
    def test_a_lease_count_no_lease_stands_behind(self):
        """A slot's lease counter (host:active) far above its parallelism, with no lease
        out anywhere: the status drops it, and the request is leased."""
        a = yield self.open_scheduler()
        self.redis.call("HSET", self.key("host:active"), "example.com", "1000000")
        self.seed(a, self.valid(a, "http://example.com/x"))
        a._empty_pop_at = float("-inf")
        request = yield self.take(a)
        self.assertEqual(request.url, "http://example.com/x")
        self.assertEqual(self.stops, [])


class RefusalTests(FaultTestCase):
    """A Redis that answers a script with an error is not an outage."""

    @defer.inlineCallbacks
    def test_wrong_type_stops_with_a_clear_error(self):
        """The queue key holding a string (WRONGTYPE for the pop script): the crawl stops
        at once with redis_script_error and one error line naming the error; it is not
        waited on as an outage."""
        a = yield self.open_scheduler()
        self.redis.call("DEL", self.key("queue"))
        self.redis.call("SET", self.key("queue"), "not a zset")
        a._empty_pop_at = float("-inf")
        a.next_request()  # a pop
        yield wait_until(lambda: self.stops)
        self.assertEqual(self.stops, ["redis_script_error"])
        errors = [m for m in self.logs.messages(logging.ERROR) if "refused a script" in m]
        self.assertEqual(len(errors), 1, self.logs.messages())
        self.assertIn("WRONGTYPE", errors[0])
        self.assertIn("redis_script_error", errors[0])
        self.assertFalse(self.logs.has("lost the connection"), self.logs.messages())
        self.assertEqual(a.stats.get_value("scheduler/redis/script_error"), 1)

    @defer.inlineCallbacks
    def test_out_of_memory_is_said_as_such(self):
        """A Redis at its maxmemory (OOM for the push script): the crawl stops with
        redis_script_error, and the line says Redis is out of memory, not that the keys
        hold something no worker wrote."""
        a = yield self.open_scheduler()
        self.redis.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
        self.redis.call("CONFIG", "SET", "maxmemory", "1")
        self.addCleanup(self.redis.call, "CONFIG", "SET", "maxmemory", "0")
        a.enqueue_request(Request("http://example.com/oom"))
        yield wait_until(lambda: self.stops)
        self.assertEqual(self.stops, ["redis_script_error"])
        errors = [m for m in self.logs.messages(logging.ERROR) if "refused a script" in m]
        self.assertEqual(len(errors), 1, self.logs.messages())
        self.assertIn("OOM", errors[0])
        self.assertIn("out of the memory", errors[0])
        self.assertNotIn("no worker wrote", errors[0])

    @defer.inlineCallbacks
    def test_wrong_type_at_the_join(self):
        """The workers set holding a string: joining fails with one clear line (a usage
        error: the keys hold something else), not a hang."""
        self.redis.call("SET", self.key("workers"), "not a set")
        try:
            yield self.open_scheduler()
        except UsageError as e:
            self.assertIn("refused the join script", str(e))
            self.assertIn("WRONGTYPE", str(e))
        else:
            self.fail("joined a crawl whose keys hold something else")


class FirstConnectionTests(FaultTestCase):
    """The first connection waits for a stalled Redis as later ones do."""

    @defer.inlineCallbacks
    def test_waits_for_a_stalled_redis(self):
        """Redis paused while a worker connects: it says so, tries again within
        SCHEDULER_REDIS_RETRIES, and joins once Redis answers."""
        self.redis.pause()
        d = self.open_scheduler(SCHEDULER_REDIS_TIMEOUT=0.5, SCHEDULER_REDIS_RETRIES=60)
        yield wait_until(lambda: self.logs.has("trying again"), timeout=20)
        self.redis.resume()
        scheduler = yield d
        self.assertIsNotNone(scheduler.store.epoch)
        warning, = [m for m in self.logs.messages(logging.WARNING) if "trying again" in m]
        self.assertIn("stalled", warning)
        self.assertNotIn("is it a Redis server", warning)

    @defer.inlineCallbacks
    def test_gives_up_within_the_bound(self):
        """Redis paused for good: the first connection gives up after
        SCHEDULER_REDIS_TIMEOUT x (1 + SCHEDULER_REDIS_RETRIES), saying the server took the
        connection and said nothing."""
        self.redis.pause()
        try:
            yield self.open_scheduler(SCHEDULER_REDIS_TIMEOUT=0.3, SCHEDULER_REDIS_RETRIES=2)
        except UsageError as e:
            message = str(e)
        else:
            self.fail("connected to a paused Redis")
        self.assertIn("no answer within 0.3 s (3 attempts", message)
        self.assertIn("stalled", message)
        self.assertNotIn("is it a Redis server", message)

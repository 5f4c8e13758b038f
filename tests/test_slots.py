"""
Unit tests of the slot arithmetic (L{Slots}, L{AutoThrottle}) and the slot-aware
L{Scheduler}, on a C{task.Clock}.
"""

import random

from twisted.internet.defer import Deferred
from twisted.internet.task import Clock
from twisted.python.failure import Failure
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.core.downloader.slots import (
    ARRIVAL_SLACK,
    UNSENT_RECHECK,
    LimitRule,
    Slots,
    default_rule,
    parse_limit_rules,
)
from tinyscrapy.core.engine import ExecutionEngine
from tinyscrapy.core.scheduler import Scheduler
from tinyscrapy.core.scraper import Scraper
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import NotConfigured, UsageError
from tinyscrapy.extensions.throttle import AutoThrottle
from tinyscrapy.http import HttpResponse
from tinyscrapy.settings import Settings
from tinyscrapy.utils.test import get_crawler

from .helpers import FakeDownloader

DEFAULT = LimitRule(parallelism=8, delay=0.0)


def autothrottle(**settings):
    """An enabled L{AutoThrottle} made from C{AUTOTHROTTLE_*} settings (names without the
    prefix), as the crawl makes it."""
    values = {"AUTOTHROTTLE_ENABLED": True}
    values.update({f"AUTOTHROTTLE_{name.upper()}": value for name, value in settings.items()})
    return AutoThrottle.from_crawler(get_crawler(settings_dict=values))


def make_slots(rules=(), default=DEFAULT, throttle=None, seed=1):
    clock = Clock()
    clock.advance(100)
    slots = Slots(parse_limit_rules(rules, default), default, clock, throttle,
                  random.Random(seed))
    return slots, clock


def get(host, path="/", **kwargs):
    return Request(f"http://{host}{path}", **kwargs)


def send(slots, request):
    """Acquire, pass the gate and send C{request} now, as the downloader does."""
    slots.acquire(request)
    assert slots.gate(request) == 0.0
    slots.sent(request)


class LimitRuleTests(unittest.TestCase):
    """C{LIMIT_RULES}: checked and compiled once; the first match wins."""

    def test_rule_without_pattern_is_refused(self):
        """A rule with neither domain_glob nor domain_regexp stops the start."""
        error = self.assertRaises(UsageError, parse_limit_rules, [{"delay": 1}], DEFAULT)
        self.assertIn("LIMIT_RULES[0]", str(error))
        self.assertIn("domain_glob", str(error))

    def test_bad_regexp_is_refused(self):
        """A domain_regexp that does not compile stops the start, naming the rule."""
        error = self.assertRaises(UsageError, parse_limit_rules,
                                  [{"domain_glob": "*"}, {"domain_regexp": "("}], DEFAULT)
        self.assertIn("LIMIT_RULES[1]", str(error))
        self.assertIn("does not compile", str(error))

    def test_unknown_key_and_bad_values_are_refused(self):
        """A misspelt key, both patterns at once, parallelism 0 or a negative delay."""
        for rule in ({"domain_glob": "*", "paralelism": 2},
                     {"domain_glob": "*", "domain_regexp": "x"},
                     {"domain_glob": "*", "parallelism": 0},
                     {"domain_glob": "*", "delay": -1},
                     {"domain_glob": "*", "delay": "soon"},
                     "*.example.com"):
            self.assertRaises(UsageError, parse_limit_rules, [rule], DEFAULT)

    def test_first_match_wins(self):
        """Rules are tried in order; no match falls back to the default rule."""
        slots, _ = make_slots([
            {"domain_glob": "*.example.com", "delay": 1},
            {"domain_regexp": r"shop", "delay": 2},
        ])
        self.assertEqual(slots.slot("shop.example.com").rule.delay, 1)
        self.assertEqual(slots.slot("shop.org").rule.delay, 2)
        self.assertIs(slots.slot("other.net").rule, DEFAULT)

    def test_glob_matches_the_whole_name_any_case(self):
        """A glob covers the whole host name; case does not matter."""
        slots, _ = make_slots([{"domain_glob": "*.EXAMPLE.com", "parallelism": 3},
                               {"domain_glob": "example.com", "parallelism": 2}])
        self.assertEqual(slots.slot("a.example.com").rule.parallelism, 3)
        self.assertEqual(slots.slot("example.com").rule.parallelism, 2)
        self.assertIs(slots.slot("example.com.evil.net").rule, DEFAULT)

    def test_missing_keys_come_from_the_default_rule(self):
        """A rule that only names a pattern takes parallelism, delay and randomizing
        from the default rule; random_delay defaults to 0."""
        default = LimitRule(parallelism=3, delay=0.5, randomize_delay=True)
        (rule,) = parse_limit_rules([{"domain_glob": "*"}], default)
        self.assertEqual((rule.parallelism, rule.delay, rule.random_delay,
                          rule.randomize_delay), (3, 0.5, 0.0, True))

    def test_json_string_from_the_command_line(self):
        """C{-s LIMIT_RULES='[...]'} arrives as a string and is parsed as JSON."""
        (rule,) = parse_limit_rules('[{"domain_regexp": "a", "parallelism": 4}]', DEFAULT)
        self.assertEqual(rule.parallelism, 4)

    def test_default_rule_from_settings_and_spider(self):
        """The default rule is C{CONCURRENT_REQUESTS_PER_DOMAIN}, C{DOWNLOAD_DELAY} (or the
        spider's C{download_delay}) and C{RANDOMIZE_DOWNLOAD_DELAY}."""
        settings = Settings({"CONCURRENT_REQUESTS_PER_DOMAIN": 2, "DOWNLOAD_DELAY": 0.25,
                             "RANDOMIZE_DOWNLOAD_DELAY": False})
        self.assertEqual(default_rule(settings), LimitRule(parallelism=2, delay=0.25))
        spider = type("Polite", (), {"download_delay": 3})()
        self.assertEqual(default_rule(settings, spider).delay, 3.0)
        bad = Settings({"CONCURRENT_REQUESTS_PER_DOMAIN": 0})
        self.assertRaises(UsageError, default_rule, bad)

    def test_download_slot_meta_overrides_the_host(self):
        """C{meta["download_slot"]} names the slot; otherwise it is the host name."""
        slots, _ = make_slots()
        self.assertEqual(slots.key_for(get("Example.COM:8080", "/x")), "example.com")
        self.assertEqual(slots.key_for(get("a.com", meta={"download_slot": "shared"})),
                         "shared")


class SlotArithmeticTests(unittest.TestCase):
    """Places, delays timed from the send, random delay, the gate."""

    def test_parallelism(self):
        """A slot takes C{parallelism} requests, and one more after a release."""
        slots, clock = make_slots([{"domain_glob": "a", "parallelism": 2}])
        first, second = get("a", "/1"), get("a", "/2")
        send(slots, first)
        self.assertTrue(slots.can_start("a", clock.seconds()))
        send(slots, second)
        self.assertFalse(slots.can_start("a", clock.seconds()))
        self.assertIsNone(slots.ready_at("a", clock.seconds()))
        slots.release(first)
        self.assertTrue(slots.can_start("a", clock.seconds()))

    def test_delay_is_timed_from_the_send(self):
        """The next request may go C{delay} after the previous one went on the wire, not
        after it left the queue."""
        slots, clock = make_slots([{"domain_glob": "a", "parallelism": 4, "delay": 2}])
        request = get("a")
        slots.acquire(request)  # handed out at 100
        self.assertFalse(slots.can_start("a", clock.seconds()))  # not sent yet
        self.assertEqual(slots.ready_at("a", 100), 102)  # a lower bound for now
        clock.advance(0.5)  # connecting...
        slots.gate(request)
        slots.sent(request)  # ...on the wire at 100.5
        self.assertEqual(slots.ready_at("a", clock.seconds()), 100.5 + 0.2 + 2)  # + slack
        clock.advance(0.003)
        slots.release(request)  # answered 3 ms later: the server saw it by then
        self.assertAlmostEqual(slots.ready_at("a", clock.seconds()), 102.503)
        self.assertFalse(slots.can_start("a", 102.502))
        self.assertTrue(slots.can_start("a", 102.503))

    def test_slack(self):
        """Until its answer, a request counts as reaching the server up to the slack limit
        late; after, as late as its answer was slower than the fastest one."""
        slots, clock = make_slots([{"domain_glob": "a", "parallelism": 2, "delay": 1},
                                   {"domain_glob": "b", "delay": 0.01}])
        self.assertEqual(slots.slot("a").slack_limit(), 0.1)  # a share of the delay...
        self.assertEqual(slots.slot("b").slack_limit(), ARRIVAL_SLACK)  # ...or at least
        next_send = []
        for answer_time in (None, 0.002, 0.052, 0.5, 0.003):
            request = get("a", f"/{answer_time}")
            send(slots, request)
            sent_at = clock.seconds()
            if answer_time is not None:
                clock.advance(answer_time)
                slots.release(request)
            next_send.append(slots.slot("a").next_send - sent_at - 1)
            clock.advance(10)
        expected = [0.1, 0.002, 0.05, 0.1, 0.001]
        for got, wanted in zip(next_send, expected, strict=True):
            self.assertAlmostEqual(got, wanted)

    def test_no_delay_no_waiting(self):
        """Without a delay, sends are never spaced and an unsent request blocks nothing."""
        slots, clock = make_slots()
        slots.acquire(get("h", "/1"))
        self.assertTrue(slots.can_start("h", clock.seconds()))
        self.assertEqual(slots.gate(get("h", "/2")), 0.0)

    def test_random_delay_only_adds(self):
        """C{random_delay} adds between 0 and itself to the delay, drawn for each send."""
        slots, clock = make_slots([{"domain_glob": "a", "delay": 0.5, "random_delay": 0.2}])
        waits = []
        for i in range(400):
            request = get("a", f"/{i}")
            send(slots, request)
            slots.release(request)  # answered at once: no slack
            waits.append(slots.slot("a").next_send - clock.seconds())
            clock.advance(5)
        self.assertGreaterEqual(min(waits), 0.5)
        self.assertLessEqual(max(waits), 0.7)
        self.assertLess(min(waits), 0.51)
        self.assertGreater(max(waits), 0.69)

    def test_randomize_between_one_and_one_and_a_half(self):
        """C{RANDOMIZE_DOWNLOAD_DELAY} stretches the delay by 1.0 to 1.5, never less."""
        slots, clock = make_slots(default=LimitRule(delay=1.0, randomize_delay=True))
        waits = []
        for i in range(400):
            request = get("a", f"/{i}")
            send(slots, request)
            slots.release(request)
            waits.append(slots.slot("a").next_send - clock.seconds())
            clock.advance(5)
        self.assertGreaterEqual(min(waits), 1.0)
        self.assertLessEqual(max(waits), 1.5)
        self.assertLess(min(waits), 1.01)
        self.assertGreater(max(waits), 1.49)

    def test_gate_holds_requests_that_skipped_the_scheduler(self):
        """A request that reaches the transfer before its slot's delay is over waits."""
        slots, clock = make_slots([{"domain_glob": "a", "parallelism": 2, "delay": 1}])
        first = get("a", "/1")
        send(slots, first)
        slots.release(first)
        robots = get("a", "/robots.txt")  # fetched around the scheduler
        slots.acquire(robots)
        self.assertAlmostEqual(slots.gate(robots), 1.0)
        clock.advance(1)
        self.assertEqual(slots.gate(robots), 0.0)
        other = get("a", "/2")
        slots.acquire(other)
        self.assertEqual(slots.gate(other), max(1.0, UNSENT_RECHECK))  # robots on its way
        self.assertEqual(slots.statistics().gate_waits, 2)

    def test_release_before_send_and_twice(self):
        """A request released without being sent frees its place; a second release
        does nothing."""
        slots, clock = make_slots([{"domain_glob": "a", "parallelism": 1, "delay": 1}])
        request = get("a")
        slots.acquire(request)
        slots.gate(request)
        slots.release(request)
        slots.release(request)
        slot = slots.slot("a")
        self.assertEqual((slot.active, slot.unsent, slot.on_the_way), (0, 0, 0))
        self.assertTrue(slots.can_start("a", clock.seconds()))

    def test_send_of_a_request_never_acquired(self):
        """A request fetched around the downloader still spaces the next send."""
        slots, clock = make_slots([{"domain_glob": "a", "delay": 1}])
        slots.sent(get("a", "/robots.txt"))
        self.assertFalse(slots.can_start("a", clock.seconds()))

    def test_listeners_hear_sends_and_releases(self):
        """Releases, and sends of spaced slots, are told to the listeners by slot name."""
        slots, _ = make_slots([{"domain_glob": "spaced", "delay": 1}])
        heard = []
        slots.listeners.append(heard.append)
        for host in ("spaced", "free"):
            request = get(host)
            send(slots, request)
            slots.release(request)
        self.assertEqual(heard, ["spaced", "spaced", "free"])

    def test_idle_slots_are_forgotten(self):
        """Slots idle for a minute are dropped once their number doubles."""
        slots, clock = make_slots()
        slots.acquire(get("busy"))
        for i in range(1023):
            request = get(f"h{i}")
            send(slots, request)
            slots.release(request)
        clock.advance(61)
        slots.slot("new")
        self.assertEqual(len(slots), 2)  # "busy" (a request inside) and "new"

    def test_raise_delay(self):
        """A delay raised for a slot (robots.txt Crawl-delay) spaces its sends at once, is
        never lowered by AutoThrottle, and holds for a slot made later."""
        slots, clock = make_slots(throttle=autothrottle(start_delay=0.0))
        request = get("a")
        send(slots, request)
        slots.release(request)
        self.assertTrue(slots.can_start("a", clock.seconds()))
        slots.raise_delay("a", 3.0)
        slots.raise_delay("b", 2.0)
        self.assertAlmostEqual(slots.ready_at("a", clock.seconds()), 103.0)
        request = get("a", "/2")
        clock.advance(3)
        send(slots, request)
        clock.advance(0.001)
        slots.release(request, HttpResponse(request.url, 200, {}, b"", request))
        self.assertEqual(slots.slot("a").delay, 3.0)
        self.assertEqual((slots.slot("b").floor, slots.slot("b").delay), (2.0, 2.0))

    def test_str_is_readable(self):
        """A slot prints its name, places, delay and times."""
        slots, _ = make_slots([{"domain_glob": "a", "parallelism": 2, "delay": 1}])
        send(slots, get("a"))
        text = str(slots.slot("a"))
        self.assertIn("slot a: 1/2 active", text)
        self.assertIn("delay 1.000s", text)


class AutoThrottleTests(unittest.TestCase):
    """The delay follows the latency, never below the rule's, and backs off on 429/503."""

    def throttled(self, rule_delay=0.0, start=1.0):
        throttle = autothrottle(target_concurrency=1.0, start_delay=start, max_delay=10.0)
        return make_slots(default=LimitRule(delay=rule_delay), throttle=throttle)

    def answer(self, slots, clock, latency, status=200):
        request = get("a", f"/{clock.seconds()}")
        send(slots, request)
        clock.advance(latency)
        response = HttpResponse(request.url, status, {}, b"", request)
        slots.release(request, response)
        clock.advance(20)
        return slots.slot("a").delay

    def test_starts_at_start_delay_never_below_the_rule(self):
        """A new slot starts at C{AUTOTHROTTLE_START_DELAY}, or its rule's delay if more."""
        slots, _ = self.throttled(rule_delay=0.0, start=1.0)
        self.assertEqual(slots.slot("a").delay, 1.0)
        slots, _ = self.throttled(rule_delay=2.0, start=1.0)
        self.assertEqual(slots.slot("a").delay, 2.0)

    def test_follows_latency_up_and_down(self):
        """Slow answers raise the delay towards the latency, fast ones lower it."""
        slots, clock = self.throttled(start=1.0)
        self.assertEqual(self.answer(slots, clock, latency=3.0), 3.0)
        lowered = [self.answer(slots, clock, latency=0.1) for _ in range(3)]
        self.assertEqual(lowered, sorted(lowered, reverse=True))
        self.assertLess(lowered[-1], 1.0)

    def test_never_below_the_rule(self):
        """However fast the answers, the delay stays at least the rule's."""
        slots, clock = self.throttled(rule_delay=0.5, start=1.0)
        for _ in range(10):
            delay = self.answer(slots, clock, latency=0.001)
        self.assertEqual(delay, 0.5)

    def test_backs_off_on_429_and_503(self):
        """429 and 503 double the delay; other errors never lower it."""
        slots, clock = self.throttled(start=1.0)
        self.assertEqual(self.answer(slots, clock, 0.01, status=503), 2.0)
        self.assertEqual(self.answer(slots, clock, 0.01, status=429), 4.0)
        self.assertEqual(self.answer(slots, clock, 0.01, status=404), 4.0)
        self.assertEqual(self.answer(slots, clock, 0.01, status=503), 8.0)
        self.assertEqual(self.answer(slots, clock, 0.01, status=503), 10.0)  # the maximum

    def test_failures_leave_the_delay(self):
        """A failed download (no response) does not move the delay."""
        slots, clock = self.throttled(start=1.0)
        request = get("a")
        send(slots, request)
        clock.advance(5)
        slots.release(request, Failure(ConnectionRefusedError()))
        self.assertEqual(slots.slot("a").delay, 1.0)

    def test_from_settings(self):
        """Off by default (NotConfigured); a target concurrency of 0 stops the start (a
        usage error, which is also Scrapy's NotConfigured)."""
        self.assertRaises(NotConfigured, AutoThrottle.from_crawler, get_crawler())
        throttle = autothrottle()
        self.assertEqual((throttle.start, throttle.maxdelay, throttle.target_concurrency),
                         (5.0, 60.0, 1.0))
        error = self.assertRaises(UsageError, autothrottle, target_concurrency=0)
        self.assertIsInstance(error, NotConfigured)
        self.assertIn("AUTOTHROTTLE_TARGET_CONCURRENCY (0.0) must be higher than 0", str(error))
        self.assertRaises(UsageError, autothrottle, start_delay=-1)


class SlotSchedulerTests(unittest.TestCase):
    """The scheduler hands out only requests whose slot can take one now."""

    def make(self, rules=(), default=DEFAULT):
        slots, clock = make_slots(rules, default)
        return Scheduler(slots=slots, clock=clock), slots, clock

    def fill(self, scheduler, *urls, **kwargs):
        for url in urls:
            self.assertTrue(scheduler.enqueue_request(Request(url, **kwargs)))

    def take(self, scheduler, slots):
        """The next request, acquired and sent as the downloader would."""
        request = scheduler.next_request()
        if request is not None:
            send(slots, request)
        return request

    def test_full_host_does_not_block_another(self):
        """With host a full, b's request comes out; a's next one after a release."""
        scheduler, slots, _ = self.make(default=LimitRule(parallelism=1))
        self.fill(scheduler, "http://a/1", "http://a/2", "http://b/1")
        first = self.take(scheduler, slots)
        self.assertEqual(first.url, "http://a/1")
        self.assertEqual(self.take(scheduler, slots).url, "http://b/1")
        self.assertIsNone(scheduler.next_request())
        self.assertIsNone(scheduler.next_ready_time())  # only a release can help
        self.assertTrue(scheduler.has_pending_requests())
        slots.release(first)
        self.assertEqual(self.take(scheduler, slots).url, "http://a/2")

    def test_waiting_host_and_next_ready_time(self):
        """A host waiting out its delay holds nothing back; the scheduler says when it
        will be ready, and hands it out then."""
        scheduler, slots, clock = self.make([{"domain_glob": "slow", "delay": 10}])
        self.fill(scheduler, "http://slow/1", "http://slow/2", "http://fast/1",
                  "http://fast/2")
        first = self.take(scheduler, slots)
        slots.release(first)
        self.assertEqual([self.take(scheduler, slots).url for _ in range(2)],
                         ["http://fast/1", "http://fast/2"])
        self.assertIsNone(scheduler.next_request())
        self.assertEqual(scheduler.next_ready_time(), 110)
        clock.advance(9.999)
        self.assertIsNone(scheduler.next_request())
        clock.advance(0.001)
        self.assertEqual(scheduler.next_request().url, "http://slow/2")

    def test_earliest_eligible_first(self):
        """Of several hosts ready at once, the one that became ready first goes first."""
        scheduler, slots, clock = self.make(default=LimitRule(parallelism=1, delay=5))
        for host, wait in (("c", 0), ("a", 1), ("b", 1)):
            clock.advance(wait)
            request = Request(f"http://{host}/0")
            send(slots, request)
            slots.release(request)
        self.fill(scheduler, "http://a/1", "http://b/1", "http://c/1")
        clock.advance(10)
        self.assertEqual([scheduler.next_request().url for _ in range(3)],
                         ["http://c/1", "http://a/1", "http://b/1"])

    def test_round_robin_among_ready_hosts(self):
        """Hosts that can all take requests are served in turn."""
        scheduler, slots, _ = self.make()
        self.fill(scheduler, "http://a/1", "http://a/2", "http://b/1", "http://b/2")
        hosts = [self.take(scheduler, slots).url.split("/")[2] for _ in range(4)]
        self.assertEqual(hosts, ["a", "b", "a", "b"])

    def test_priority(self):
        """Within a host and across ready hosts, higher priority goes first."""
        scheduler, slots, _ = self.make()
        self.fill(scheduler, "http://a/low", "http://b/low")
        self.fill(scheduler, "http://a/high", "http://b/higher", priority=5)
        scheduler.enqueue_request(Request("http://b/highest", priority=9))
        order = [scheduler.next_request().url for _ in range(5)]
        self.assertEqual(order, ["http://b/highest", "http://a/high", "http://b/higher",
                                 "http://a/low", "http://b/low"])

    def test_not_before(self):
        """A request with C{meta["not_before"]} waits without a slot until that time."""
        scheduler, slots, clock = self.make(default=LimitRule(parallelism=1))
        later = Request("http://a/later", meta={"not_before": 103})
        scheduler.enqueue_request(later)
        self.fill(scheduler, "http://a/now")
        now = self.take(scheduler, slots)
        self.assertEqual(now.url, "http://a/now")
        slots.release(now)
        self.assertIsNone(scheduler.next_request())
        self.assertEqual(scheduler.next_ready_time(), 103)
        self.assertEqual(scheduler.statistics().later, 1)
        self.assertEqual(slots.slot("a").active, 0)
        clock.advance(3)
        self.assertIs(scheduler.next_request(), later)
        self.assertFalse(scheduler.has_pending_requests())

    def test_counts(self):
        """size, pending and dequeued stay right through waiting and handing out."""
        scheduler, slots, _ = self.make(default=LimitRule(parallelism=1))
        self.fill(scheduler, "http://a/1", "http://a/2", "http://b/1")
        self.take(scheduler, slots)
        stats = scheduler.statistics()
        self.assertEqual((stats.pending, stats.dequeued, stats.hosts), (2, 1, 2))
        self.assertEqual(scheduler.size(), 2)

    def test_no_scan_over_waiting_hosts(self):
        """Once every host is full or waiting, asking again checks no host at all."""
        scheduler, slots, _ = self.make([{"domain_glob": "w*", "delay": 10}],
                                        default=LimitRule(parallelism=1))
        for i in range(200):
            self.fill(scheduler, f"http://f{i}/1", f"http://f{i}/2", f"http://w{i}/1",
                      f"http://w{i}/2")
        while self.take(scheduler, slots) is not None:
            pass
        checks = []
        can_start = slots.can_start

        def counting(key, now):
            checks.append(key)
            return can_start(key, now)

        slots.can_start = counting
        for _ in range(10):
            self.assertIsNone(scheduler.next_request())
        self.assertEqual(checks, [])
        self.assertEqual(scheduler.size(), 400)

    def test_alone_without_slots(self):
        """C{Scheduler()} without slots holds nothing back (engine unit tests use it)."""
        scheduler = Scheduler(clock=Clock())
        for i in range(20):
            scheduler.enqueue_request(Request(f"http://h/{i}"))
        self.assertEqual(len([scheduler.next_request() for _ in range(20)]), 20)


class SlotDownloader(FakeDownloader):
    """A fake downloader that takes slots as the real one does, and sends at once."""

    def __init__(self, slots):
        super().__init__()
        self.slots = slots

    def fetch(self, request, spider):
        self.slots.acquire(request)
        assert self.slots.gate(request) == 0.0
        self.slots.sent(request)
        d = super().fetch(request, spider)
        d.addBoth(self._cb_release, request)
        return d

    def _cb_release(self, result, request):
        self.slots.release(request, result)
        return result


class UrlSpider(Spider):
    """Starts from C{urls}; its callback returns C{self.result} (None by default)."""

    name = "urls"
    urls = ()
    result = None

    def start_requests(self):
        for url in self.urls:
            yield Request(url)

    def parse(self, response):
        return self.result


def slot_engine(rules, settings=None, default=DEFAULT, **spargs):
    """An engine on a C{Clock} whose scheduler and fake downloader share real L{Slots}."""
    clock = Clock()
    crawler = Crawler(UrlSpider, Settings({"ENGINE_HEARTBEAT": 1000, **(settings or {})}),
                      reactor=clock)
    crawler.settings.freeze()
    crawler.spider = UrlSpider.from_crawler(crawler, **spargs)
    slots = Slots(parse_limit_rules(rules, default), default, clock)
    downloader = SlotDownloader(slots)
    scraper = Scraper(crawler)
    engine = crawler.engine = ExecutionEngine(
        crawler, reactor=clock, scheduler=Scheduler(slots=slots, clock=clock),
        downloader=downloader, scraper=scraper)
    engine.open_spider(crawler.spider, crawler.spider.start_requests())
    return engine, clock, downloader


class EngineSlotTests(unittest.TestCase):
    """The loop with slots: no place held by a waiting host, and waking itself up."""

    def finish(self, engine, clock, downloader):
        for _ in range(100):
            downloader.answer_all()
            clock.advance(1)
        self.assertTrue(engine.start().called)

    def test_wakes_itself_when_the_host_is_ready(self):
        """With every host waiting, the loop turns again at the earliest ready time."""
        engine, clock, downloader = slot_engine(
            [{"domain_glob": "a", "delay": 2}], urls=["http://a/1", "http://a/2"])
        clock.advance(0)
        downloader.answer()
        clock.advance(0)
        self.assertEqual(downloader.fetched, ["http://a/1"])
        self.assertEqual([call.getTime() for call in clock.getDelayedCalls()
                          if call is engine._ready_call], [2.0])
        clock.advance(1.999)
        self.assertEqual(len(downloader.fetched), 1)
        clock.advance(0.001)
        clock.advance(0)
        self.assertEqual(downloader.fetched, ["http://a/1", "http://a/2"])
        self.finish(engine, clock, downloader)

    def test_waiting_host_holds_no_place(self):
        """With one place, a host waiting out its delay lets another host's requests
        through meanwhile."""
        engine, clock, downloader = slot_engine(
            [{"domain_glob": "slow", "delay": 10}], {"CONCURRENT_REQUESTS": 1},
            urls=["http://slow/1", "http://slow/2", "http://fast/1", "http://fast/2",
                  "http://fast/3"])
        clock.advance(0)
        for _ in range(4):
            downloader.answer()
            clock.advance(0)
        self.assertEqual(downloader.fetched, ["http://slow/1", "http://fast/1",
                                              "http://fast/2", "http://fast/3"])
        clock.advance(10)
        clock.advance(0)
        self.assertEqual(downloader.fetched[-1], "http://slow/2")
        self.finish(engine, clock, downloader)

    def test_free_slot_starts_while_the_page_is_still_scraped(self):
        """The loop turns when a download ends, not only when its page is done: a
        host with one place goes on while a slow callback holds the first page."""
        pending = Deferred()
        engine, clock, downloader = slot_engine(
            [], {"CONCURRENT_REQUESTS": 4}, default=LimitRule(parallelism=1),
            urls=["http://a/1", "http://a/2"])
        engine.spider.result = pending
        clock.advance(0)
        downloader.answer()
        clock.advance(0)
        self.assertEqual(downloader.fetched, ["http://a/1", "http://a/2"])
        pending.callback(None)
        self.finish(engine, clock, downloader)


class SweepTests(unittest.TestCase):
    """Idle slots are forgotten on the engine's heartbeat, not only when the table doubles."""

    def test_heartbeat_sweeps_idle_slots(self):
        """300 hosts crawled once: a minute after their last send, one heartbeat forgets
        every slot; a host with a request in flight keeps its slot."""
        from tinyscrapy.core.downloader.slots import IDLE_SLOT_TTL
        urls = [f"http://host{n}.example/" for n in range(300)]
        engine, clock, downloader = slot_engine([], {"ENGINE_HEARTBEAT": 5,
                                                     "CONCURRENT_REQUESTS": 400}, urls=urls)
        clock.advance(0)
        for _ in range(299):
            downloader.answer()
        clock.advance(0)
        slots = downloader.slots
        self.assertEqual(len(slots), 300)
        clock.advance(IDLE_SLOT_TTL + 5)  # heartbeats pass meanwhile
        self.assertEqual(len(slots), 1)  # the one still in flight
        downloader.answer_all()
        for _ in range(100):
            clock.advance(1)
        self.assertTrue(engine.start().called)

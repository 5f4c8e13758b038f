"""
Integration tests of per-host slots: real crawls against servers on 127.0.0.1, 127.0.0.2
and 127.0.0.3 (distinct hosts), judged by what each server recorded: arrival times and
requests in flight.
"""

from itertools import pairwise

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.exceptions import UsageError

from .helpers import crawl, run_command, serve
from .servers import Delay, Status

SLOW = b"<html>slow</html>"


class LinkSpider(Spider):
    """Follows every link."""

    name = "links"

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


def gaps(server):
    """The times between consecutive arrivals at C{server}."""
    return between(r.time for r in server.requests)


def between(times):
    return [later - earlier for earlier, later in pairwise(times)]


class PolitenessTests(unittest.TestCase):
    """Each rule's parallelism and delay, as the servers saw them."""

    def setUp(self):
        self.servers = {}
        for last in (1, 2, 3):
            server = serve(self, interface=f"127.0.0.{last}")
            self.servers[last] = server

    def site(self, last, pages, resource=None):
        """A start page on host 127.0.0.C{last} linking to C{pages} pages; its URL."""
        server = self.servers[last]
        paths = [f"/p{i}" for i in range(pages)]
        for path in paths:
            if resource is None:
                server.add_page(path)
            else:
                server.add(path, resource)
        return server.add_page("/", links=paths)

    def assertSpaced(self, server, delay, count):
        """C{count} requests arrived at C{server}, never closer together than C{delay}."""
        self.assertEqual(len(server.requests), count)
        self.assertGreaterEqual(min(gaps(server)), delay)

    @defer.inlineCallbacks
    def test_each_rule_parallelism_and_delay(self):
        """Host .1 gets the default rule's parallelism, .2 its glob rule's, and .3 its
        regexp rule's delay (gaps at the server never shorter) with one at a time."""
        starts = [self.site(1, 6, Delay(0.2, SLOW)), self.site(2, 6, Delay(0.2, SLOW)),
                  self.site(3, 5)]
        yield crawl(LinkSpider, {
            "CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 3,
            "LIMIT_RULES": [{"domain_glob": "127.0.0.2", "parallelism": 2},
                            {"domain_regexp": r"\.3$", "parallelism": 1, "delay": 0.15}],
        }, start_urls=starts)
        self.assertEqual(self.servers[1].max_in_flight, 3)
        self.assertEqual(self.servers[2].max_in_flight, 2)
        self.assertEqual(self.servers[3].max_in_flight, 1)
        self.assertSpaced(self.servers[3], 0.15, 6)

    @defer.inlineCallbacks
    def test_download_slots_scrapys_per_slot_settings(self):
        """Scrapy's DOWNLOAD_SLOTS: host .2 one at a time (concurrency), host .3 spaced
        (delay, with a jitter that only lengthens); host .1, not named, the default's;
        a slot named like a host's prefix is not that host's."""
        starts = [self.site(1, 6, Delay(0.2, SLOW)), self.site(2, 6, Delay(0.1, SLOW)),
                  self.site(3, 4)]
        yield crawl(LinkSpider, {
            "CONCURRENT_REQUESTS_PER_DOMAIN": 3,
            "DOWNLOAD_SLOTS": {"127.0.0.2": {"concurrency": 1},
                               "127.0.0.3": {"delay": 0.1, "jitter": 0.5},
                               "127.0.0": {"concurrency": 1}},
        }, start_urls=starts)
        self.assertEqual(self.servers[1].max_in_flight, 3)
        self.assertEqual(self.servers[2].max_in_flight, 1)
        self.assertSpaced(self.servers[3], 0.1, 5)

    def test_download_slots_errors(self):
        """A DOWNLOAD_SLOTS entry with an unknown key or a bad value stops the start with
        one line naming it."""
        from tinyscrapy.core.downloader.slots import LimitRule, parse_download_slots
        for value, words in (({"h": {"concurency": 1}}, "unknown key 'concurency'"),
                             ({"h": {"delay": -1}}, "DOWNLOAD_SLOTS['h']: delay=-1"),
                             ({"h": {"concurrency": "two"}},
                              "DOWNLOAD_SLOTS['h']: concurrency='two': expected int"),
                             ({"h": 3}, "a slot's settings are a dict"),
                             (["h"], "must be a dict")):
            with self.assertRaises(UsageError) as caught:
                parse_download_slots(value, LimitRule())
            self.assertIn(words, str(caught.exception))

    @defer.inlineCallbacks
    def test_random_delays_never_shorten_the_delay(self):
        """C{RANDOMIZE_DOWNLOAD_DELAY} (default rule, host .2) and a rule's
        C{random_delay} (host .3) only ever lengthen the gaps."""
        starts = [self.site(2, 4), self.site(3, 5)]
        yield crawl(LinkSpider, {
            "DOWNLOAD_DELAY": 0.1, "RANDOMIZE_DOWNLOAD_DELAY": True,
            "LIMIT_RULES": [{"domain_glob": "127.0.0.3", "delay": 0.05, "random_delay": 0.1,
                             "randomize_delay": False}],
        }, start_urls=starts)
        self.assertSpaced(self.servers[2], 0.1, 5)
        self.assertSpaced(self.servers[3], 0.05, 6)

    @defer.inlineCallbacks
    def test_first_matching_rule_wins(self):
        """Host .2 matches both rules; the first one (one at a time, 0.1 s apart)
        applies, not the second (four at a time)."""
        start = self.site(2, 3, Delay(0.05, SLOW))
        yield crawl(LinkSpider, {"LIMIT_RULES": [
            {"domain_glob": "127.0.0.*", "parallelism": 1, "delay": 0.1},
            {"domain_regexp": r"127\.0\.0\.2", "parallelism": 4},
        ]}, start_urls=[start])
        self.assertEqual(self.servers[2].max_in_flight, 1)
        self.assertSpaced(self.servers[2], 0.1, 4)

    @defer.inlineCallbacks
    def test_download_slot_shared_by_two_hosts(self):
        """Requests with one C{meta["download_slot"]} share its rule across hosts."""
        urls = [self.servers[last].add_page(f"/{i}") for i in range(3) for last in (2, 3)]

        class Shared(Spider):
            name = "shared"

            def start_requests(self):
                for url in urls:
                    yield Request(url, meta={"download_slot": "shared"})

            def parse(self, response):
                return None

        yield crawl(Shared, {"LIMIT_RULES": [{"domain_glob": "shared", "delay": 0.1}]})
        times = sorted(r.time for last in (2, 3) for r in self.servers[last].requests)
        self.assertEqual(len(times), 6)
        self.assertGreaterEqual(min(between(times)), 0.1)

    @defer.inlineCallbacks
    def test_slow_host_does_not_starve_fast_host(self):
        """With a single place, the fast host is crawled while the slow one waits out its
        delays: all of it arrives before the slow host's last page."""
        starts = [self.site(2, 3), self.site(3, 8)]
        yield crawl(LinkSpider, {
            "CONCURRENT_REQUESTS": 1,
            "LIMIT_RULES": [{"domain_glob": "127.0.0.2", "parallelism": 1, "delay": 0.3}],
        }, start_urls=starts)
        slow, fast = self.servers[2], self.servers[3]
        self.assertSpaced(slow, 0.3, 4)
        self.assertEqual(len(fast.requests), 9)
        self.assertLess(fast.requests[-1].time, slow.requests[-1].time)

    @defer.inlineCallbacks
    def test_autothrottle_direction(self):
        """AutoThrottle raises the delay of a slow host (.2), lowers a fast host's (.3) but
        not below C{DOWNLOAD_DELAY}, and backs off on 503 (.1)."""
        starts = [self.site(1, 2, Status(503)), self.site(2, 2, Delay(0.2, SLOW)),
                  self.site(3, 4)]
        crawler = yield crawl(LinkSpider, {
            "AUTOTHROTTLE_ENABLED": True, "AUTOTHROTTLE_START_DELAY": 0.1,
            "AUTOTHROTTLE_MAX_DELAY": 2.0, "DOWNLOAD_DELAY": 0.02,
            "RANDOMIZE_DOWNLOAD_DELAY": False,
        }, start_urls=starts)
        delay = {last: crawler.slots.slot(f"127.0.0.{last}").delay for last in (1, 2, 3)}
        self.assertGreater(delay[1], 0.15)
        self.assertGreater(delay[2], 0.15)
        self.assertLess(delay[3], 0.1)
        self.assertGreaterEqual(delay[3], 0.02)
        self.assertGreaterEqual(min(gaps(self.servers[3])), 0.02)

    @defer.inlineCallbacks
    def test_not_before_waits_without_a_place(self):
        """A request with C{meta["not_before"]} arrives no earlier, and with one place the
        other requests go first."""
        server = self.servers[2]
        later_url, first, second = (server.add_page(p) for p in ("/later", "/a", "/b"))
        not_before = reactor.seconds() + 1.0  # /a and /b take far less, even under load

        class Later(Spider):
            name = "later"

            def start_requests(self):
                yield Request(later_url, meta={"not_before": not_before})
                yield Request(first)
                yield Request(second)

            def parse(self, response):
                return None

        yield crawl(Later, {"CONCURRENT_REQUESTS": 1})
        self.assertEqual([r.path for r in server.requests], ["/a", "/b", "/later"])
        self.assertGreaterEqual(server.requests[-1].time, not_before)

    def test_bad_rule_stops_the_start(self):
        """A rule without a pattern fails the crawl at start with a UsageError; no
        request is sent."""
        start = self.site(2, 1)
        d = crawl(LinkSpider, {"LIMIT_RULES": [{"delay": 1}]}, start_urls=[start])
        d.addCallback(self.fail)
        d.addErrback(self._eb_usage_error)
        return d

    def _eb_usage_error(self, failure):
        failure.trap(UsageError)
        self.assertIn("LIMIT_RULES[0]", str(failure.value))
        self.assertEqual(self.servers[2].requests, [])

    @defer.inlineCallbacks
    def test_bad_regexp_on_the_command_line(self):
        """C{-s LIMIT_RULES=...} with a regexp that does not compile: one line, exit 2."""
        start = self.site(2, 1)
        code, out, err = yield run_command(reactor, [
            "crawl", start, "-s", 'LIMIT_RULES=[{"domain_regexp": "("}]'])
        self.assertEqual(code, 2)
        self.assertEqual(len(err.strip().splitlines()), 1)
        self.assertIn("does not compile", err)
        self.assertEqual(self.servers[2].requests, [])

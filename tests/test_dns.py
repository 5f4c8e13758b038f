"""
The DNS cache: unit tests on a fake resolver and a C{task.Clock}, then fetches and crawls
of C{http://localhost:PORT/} with the reactor's resolver wrapped to count its lookups.
"""

from twisted.internet import defer, reactor
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.endpoints import HostnameEndpoint
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IHostnameResolver
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock
from twisted.python.failure import Failure
from twisted.trial import unittest
from zope.interface import implementer

from tinyscrapy import Spider
from tinyscrapy.exceptions import DnsLookupTimeout
from tinyscrapy.resolver import DnsCache
from tinyscrapy.settings import Settings
from tinyscrapy.statscollectors import StatsCollector

from .fetchutil import CapturedLogs, failure_of, get, make_fetcher
from .helpers import crawl, serve
from .servers import Delay


@implementer(IHostnameResolver)
class FakeResolver:
    """
    Answers when the test says so (or at once, with C{sync}); records every lookup.

    @ivar calls: host names asked, in order.
    @ivar pending: C{(receiver, host)} not answered yet.
    """

    def __init__(self, sync=None):
        self.sync = sync  # host -> list of IPs answered at once, or None
        self.calls = []
        self.pending = []

    def resolveHostName(self, receiver, hostName, portNumber=0, addressTypes=None,
                        transportSemantics="TCP"):
        self.calls.append(hostName)
        receiver.resolutionBegan(None)
        if self.sync is not None:
            _answer(receiver, self.sync.get(hostName, []), portNumber)
        else:
            self.pending.append((receiver, hostName))
        return None

    def answer(self, ips):
        """Answer every pending lookup with C{ips}."""
        pending, self.pending = self.pending, []
        for receiver, _host in pending:
            _answer(receiver, ips, 0)


def _answer(receiver, ips, port):
    for ip in ips:
        kind = IPv6Address if ":" in ip else IPv4Address
        receiver.addressResolved(kind("TCP", ip, port))
    receiver.resolutionComplete()


@implementer(IHostnameResolver)
class CountingResolver:
    """The reactor's resolver, counting the lookups that reach it."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.calls = []

    def resolveHostName(self, receiver, hostName, *args, **kwargs):
        self.calls.append(hostName)
        return self.wrapped.resolveHostName(receiver, hostName, *args, **kwargs)


def use_resolver(testcase, resolver):
    """Install C{resolver} on the global reactor for this test only."""
    testcase.addCleanup(reactor.installNameResolver, reactor.nameResolver)
    reactor.installNameResolver(resolver)
    return resolver


def results(deferreds):
    """A list that fills with what the Deferreds fire with (a value or an exception),
    in the order they fire."""
    out = []
    for d in deferreds:
        d.addBoth(_keep, out)
    return out


def _keep(result, out):
    out.append(result.value if isinstance(result, Failure) else result)


class DnsCacheTests(unittest.TestCase):
    """The cache alone: hits, shared lookups, LRU, no storage, timeouts."""

    def cache(self, resolver, size=10000, timeout=60.0):
        self.clock = Clock()
        self.stats = StatsCollector()
        return DnsCache(self.clock, size, timeout, self.stats, resolver=resolver)

    def test_concurrent_lookups_share_one(self):
        """Sixteen connections asking at once: one lookup; all get its answer; the next
        ask is a hit."""
        resolver = FakeResolver()
        cache = self.cache(resolver)
        answers = results([cache.resolve("example.com") for _ in range(16)])
        self.assertEqual(resolver.calls, ["example.com"])
        resolver.answer(["192.0.2.1"])
        self.assertEqual(len(answers), 16)
        self.assertEqual({a[0].host for a in answers}, {"192.0.2.1"})
        [again] = results([cache.resolve("example.com")])
        self.assertEqual(again[0].host, "192.0.2.1")
        self.assertEqual(len(resolver.calls), 1)
        self.assertEqual(self.stats.get_value("dnscache/miss"), 16)
        self.assertEqual(self.stats.get_value("dnscache/lookup"), 1)
        self.assertEqual(self.stats.get_value("dnscache/hit"), 1)
        self.assertEqual(cache.statistics().running, 0)

    def test_least_recently_used_goes_first(self):
        """DNSCACHE_SIZE=2: a third host evicts the one used least recently."""
        resolver = FakeResolver(sync={"a": ["192.0.2.1"], "b": ["192.0.2.2"],
                                      "c": ["192.0.2.3"]})
        cache = self.cache(resolver, size=2)
        for host in ["a", "b", "a", "c"]:  # "a" used again: "b" is the oldest
            results([cache.resolve(host)])
        self.assertEqual(resolver.calls, ["a", "b", "c"])
        self.assertEqual(cache.statistics().hosts, 2)
        results([cache.resolve("a"), cache.resolve("c")])
        self.assertEqual(resolver.calls, ["a", "b", "c"])
        results([cache.resolve("b")])
        self.assertEqual(resolver.calls, ["a", "b", "c", "b"])

    def test_disabled_looks_up_every_time(self):
        """DNSCACHE_ENABLED=False: each ask is a lookup, even two at once."""
        resolver = FakeResolver()
        self.clock = Clock()
        cache = DnsCache.from_settings(self.clock, Settings({"DNSCACHE_ENABLED": False}),
                                       StatsCollector(), resolver)
        answers = results([cache.resolve("example.com") for _ in range(2)])
        resolver.answer(["192.0.2.1"])
        later = results([cache.resolve("example.com")])
        resolver.answer(["192.0.2.1"])
        self.assertEqual(len(resolver.calls), 3)
        self.assertEqual(len(answers + later), 3)
        self.assertEqual(cache.statistics().hosts, 0)

    def test_timeout_fails_every_waiter_and_is_not_kept(self):
        """A lookup that never answers fails its waiters after DNS_TIMEOUT with
        DnsLookupTimeout; the next ask looks the host up again."""
        resolver = FakeResolver()
        cache = self.cache(resolver, timeout=2.0)
        answers = results([cache.resolve("slow.example"), cache.resolve("slow.example")])
        self.clock.advance(1.9)
        self.assertEqual(answers, [])
        self.clock.advance(0.2)
        self.assertEqual(len(answers), 2)
        for error in answers:
            self.assertIsInstance(error, DnsLookupTimeout)
            self.assertIsInstance(error, DNSLookupError)  # retried as one
            self.assertIn("'slow.example' took longer than 2.0 seconds", str(error))
        resolver.answer(["192.0.2.9"])  # the late answer is dropped
        self.assertEqual(cache.statistics().hosts, 0)
        results([cache.resolve("slow.example")])
        self.assertEqual(len(resolver.calls), 2)
        self.assertEqual(len(self.clock.getDelayedCalls()), 1)  # its own timer

    def test_close_gives_up_running_lookups(self):
        """close() stops the DNS_TIMEOUT timers; a waiter errbacks with CancelledError."""
        resolver = FakeResolver()
        cache = self.cache(resolver)
        answers = results([cache.resolve("example.com")])
        cache.close()
        self.assertIsInstance(answers[0], defer.CancelledError)
        self.assertEqual(self.clock.getDelayedCalls(), [])
        self.assertEqual(cache.statistics().running, 0)

    def test_no_address_is_an_error_not_kept(self):
        """A name without address fails with DNSLookupError; it is asked again next time."""
        resolver = FakeResolver(sync={})
        cache = self.cache(resolver)
        [error] = results([cache.resolve("nowhere.invalid")])
        self.assertIsInstance(error, DNSLookupError)
        self.assertIn("nowhere.invalid", str(error))
        results([cache.resolve("nowhere.invalid")])
        self.assertEqual(len(resolver.calls), 2)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_ip_literals_skip_the_cache(self):
        """127.0.0.1 and ::1 are answered at once, never looked up nor counted."""
        resolver = FakeResolver()
        cache = self.cache(resolver)
        v4, v6 = results([cache.resolve("127.0.0.1"), cache.resolve("::1")])
        self.assertEqual(v4, (IPv4Address("TCP", "127.0.0.1", 0),))
        self.assertEqual(v6, (IPv6Address("TCP", "::1", 0),))
        self.assertEqual(resolver.calls, [])
        self.assertEqual(cache.statistics().hosts, 0)
        self.assertIsNone(self.stats.get_value("dnscache/miss"))

    def test_cancelling_one_waiter_keeps_the_lookup(self):
        """One connection cancelled while its host is looked up: the others still get
        the answer, and it is kept."""
        resolver = FakeResolver()
        cache = self.cache(resolver)
        first, second = cache.resolve("example.com"), cache.resolve("example.com")
        first.cancel()
        self.assertIsInstance(results([first])[0], defer.CancelledError)
        resolver.answer(["192.0.2.1"])
        self.assertEqual(results([second])[0][0].host, "192.0.2.1")
        self.assertEqual(cache.statistics().hosts, 1)

    def test_resolve_host_name_gives_the_asked_port(self):
        """As an IHostnameResolver, the cache answers with the port (and the address
        types) asked for, from one lookup."""
        resolver = FakeResolver(sync={"example.com": ["192.0.2.1", "2001:db8::1"]})
        cache = self.cache(resolver)
        received = []

        class Receiver:
            def resolutionBegan(self, resolution):
                pass

            def addressResolved(self, address):
                received.append(address)

            def resolutionComplete(self):
                received.append("done")

        cache.resolveHostName(Receiver(), "example.com", 8080)
        cache.resolveHostName(Receiver(), "example.com", 443, [IPv6Address])
        self.assertEqual(received, [IPv4Address("TCP", "192.0.2.1", 8080),
                                    IPv6Address("TCP", "2001:db8::1", 8080), "done",
                                    IPv6Address("TCP", "2001:db8::1", 443), "done"])
        self.assertEqual(resolver.calls, ["example.com"])


class EdgeTests(unittest.TestCase):
    """What a review found: a waiter cancelled by another's callback, a negative
    DNS_TIMEOUT, a host name twisted refuses."""

    def test_waiter_cancelled_by_another_waiters_callback(self):
        cache = DnsCache(Clock(), resolver=FakeResolver(), timeout=5)
        first, second = cache.resolve("a.test"), cache.resolve("a.test")
        first.addCallback(lambda result: (second.cancel(), result)[1])
        got_first, got_second = results([first]), results([second])
        cache.resolver.answer(["127.0.0.1"])
        self.assertEqual(got_first, [(IPv4Address("TCP", "127.0.0.1", 0),)])
        self.assertEqual(len(got_second), 1)  # cancelled, and never answered after that
        self.assertIsInstance(got_second[0], defer.CancelledError)

    def test_negative_timeout_is_a_usage_error(self):
        from tinyscrapy.exceptions import UsageError
        e = self.assertRaises(UsageError, DnsCache.from_settings, Clock(),
                              Settings({"DNS_TIMEOUT": -1}))
        self.assertIn("DNS_TIMEOUT", str(e))

    @defer.inlineCallbacks
    def test_name_twisted_refuses_is_not_looked_up(self):
        server = serve(self)
        server.add_page("/")
        resolver = use_resolver(self, FakeResolver(sync={"a_b.test": ["127.0.0.1"]}))
        fetcher = make_fetcher(self, {"RETRY_ENABLED": False})
        error, _ = yield failure_of(get(fetcher, f"http://a_b.test:{server.port}/"))
        self.assertIsInstance(error, ValueError)
        self.assertEqual(resolver.calls, [])


class LocalhostTests(unittest.TestCase):
    """Fetches of http://localhost:PORT/, the reactor's own resolver counted."""

    def setUp(self):
        self.server = serve(self)
        self.resolver = use_resolver(self, CountingResolver(reactor.nameResolver))

    def localhost(self, path):
        return self.server.url(path).replace("127.0.0.1", "localhost")

    def parallel(self, fetcher, n):
        urls = [self.server.add(f"/{i}", Delay(0.05, b"<html></html>")) for i in range(n)]
        urls = [url.replace("127.0.0.1", "localhost") for url in urls]
        return defer.gatherResults([get(fetcher, url) for url in urls])

    @defer.inlineCallbacks
    def test_parallel_connections_look_localhost_up_once(self):
        """Six requests at once open six connections; "localhost" is looked up once."""
        fetcher = make_fetcher(self, {"CONCURRENT_REQUESTS_PER_DOMAIN": 6})
        responses = yield self.parallel(fetcher, 6)
        self.assertEqual([r.status for r in responses], [200] * 6)
        self.assertEqual(self.server.connections, 6)
        self.assertEqual(self.resolver.calls, ["localhost"])
        self.assertEqual(fetcher.stats.get_value("dnscache/miss"), 6)
        self.assertEqual(fetcher.stats.get_value("dnscache/lookup"), 1)

    @defer.inlineCallbacks
    def test_disabled_looks_localhost_up_per_connection(self):
        """DNSCACHE_ENABLED=False: six connections, six lookups."""
        fetcher = make_fetcher(self, {"CONCURRENT_REQUESTS_PER_DOMAIN": 6,
                                      "DNSCACHE_ENABLED": False})
        yield self.parallel(fetcher, 6)
        self.assertEqual(self.server.connections, 6)
        self.assertEqual(self.resolver.calls, ["localhost"] * 6)

    @defer.inlineCallbacks
    def test_installed_cache_serves_plain_endpoints_until_removed(self):
        """Installed on the reactor (Scrapy's way), the cache serves twisted's own
        HostnameEndpoint; this test's cleanup puts the reactor's resolver back."""
        cache = DnsCache(reactor)
        use_resolver(self, cache)
        for _ in range(3):
            endpoint = HostnameEndpoint(reactor, "localhost", self.server.port)
            protocol = yield endpoint.connect(Factory.forProtocol(Protocol))
            protocol.transport.loseConnection()
        self.assertEqual(self.resolver.calls, ["localhost"])
        self.assertEqual(cache.statistics().hits, 2)


@implementer(IHostnameResolver)
class SilentResolver:
    """Never answers, as a DNS server that drops the question."""

    def resolveHostName(self, receiver, hostName, *args, **kwargs):
        receiver.resolutionBegan(None)
        return None


class PagesSpider(Spider):
    """One item per page; follows every link."""

    name = "pages"

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


class CrawlTests(unittest.TestCase):
    """Whole crawls of a site on localhost."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_crawl_looks_localhost_up_once(self):
        """A crawl of seven pages over several connections looks "localhost" up once."""
        resolver = use_resolver(self, CountingResolver(reactor.nameResolver))
        for i in range(6):
            self.server.add(f"/p{i}", Delay(0.1, b"<html>page</html>"))
        start = self.server.add_page("/", links=[f"/p{i}" for i in range(6)])
        crawler = yield crawl(PagesSpider, {"CONCURRENT_REQUESTS_PER_DOMAIN": 6},
                              start_urls=[start.replace("127.0.0.1", "localhost")])
        stats = crawler.stats
        self.assertEqual(stats.get_value("item_scraped_count"), 7)
        self.assertGreaterEqual(self.server.connections, 3)
        self.assertEqual(resolver.calls, ["localhost"])
        self.assertEqual(stats.get_value("dnscache/lookup"), 1)
        self.assertEqual(stats.get_value("dnscache/hit")
                         + stats.get_value("dnscache/miss"), self.server.connections)

    @defer.inlineCallbacks
    def test_dns_timeout_fails_the_request_and_the_crawl_goes_on(self):
        """A resolver that never answers: the localhost page fails after DNS_TIMEOUT with
        DnsLookupTimeout, counted and logged once with its URL; the 127.0.0.1 page is
        scraped."""
        use_resolver(self, SilentResolver())
        stuck = self.server.add_page("/stuck").replace("127.0.0.1", "localhost")
        fine = self.server.add_page("/fine")
        logs = CapturedLogs(self)
        crawler = yield crawl(PagesSpider, {"DNS_TIMEOUT": 0.3, "RETRY_ENABLED": False,
                                            "DOWNLOAD_TIMEOUT": 5},
                              start_urls=[stuck, fine])
        stats = crawler.stats
        self.assertEqual(stats.get_value("item_scraped_count"), 1)
        self.assertEqual(stats.get_value(
            "downloader/exception_type_count/tinyscrapy.exceptions.DnsLookupTimeout"), 1)
        self.assertEqual(stats.get_value("finish_reason"), "finished")
        mentions = [m for _, m in logs.messages if stuck in m]
        self.assertEqual(len(mentions), 1, mentions)
        self.assertIn("DnsLookupTimeout: DNS lookup timed out: 'localhost' took longer "
                      "than 0.3 seconds (DNS_TIMEOUT)", mentions[0])
        self.assertEqual(self.server.hits["/stuck"], 0)

    @defer.inlineCallbacks
    def test_dns_timeout_in_a_fetch(self):
        """The fetcher's Deferred errbacks with DnsLookupTimeout after DNS_TIMEOUT."""
        use_resolver(self, SilentResolver())
        fetcher = make_fetcher(self, {"DNS_TIMEOUT": 0.2, "DOWNLOAD_TIMEOUT": 5})
        url = self.server.add_page("/").replace("127.0.0.1", "localhost")
        error, seconds = yield failure_of(get(fetcher, url))
        self.assertIsInstance(error, DnsLookupTimeout)
        self.assertGreaterEqual(seconds, 0.15)
        self.assertLess(seconds, 2)

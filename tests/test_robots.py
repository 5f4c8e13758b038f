"""
robots.txt: obeyed, fetched once per origin without holding up other hosts, missing or
broken ones allow all, Crawl-delay observed at the server.
"""

import logging

from twisted.internet import defer
from twisted.trial import unittest
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

from tinyscrapy import Request, Spider
from tinyscrapy.crawler import Crawler
from tinyscrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from tinyscrapy.exceptions import RobotsDisallowed
from tinyscrapy.settings import Settings

from .helpers import crawl, serve
from .logs import capture_logs
from .servers import Delay, Drop, NoAnswer, Redirect, Robots, Status
from .test_scope import REDIRECTS, LinkSpider

OBEY = {"ROBOTSTXT_OBEY": True}


class _Countdown:
    """C{done} fires once L{tick} has been called C{count} times."""

    def __init__(self, count):
        self.count = count
        self.done = defer.Deferred()

    def tick(self):
        self.count -= 1
        if self.count == 0:
            self.done.callback(None)


class _Counted(Resource):
    """A page that ticks a L{_Countdown} when it is asked for."""

    isLeaf = True

    def __init__(self, countdown):
        super().__init__()
        self.countdown = countdown

    def render(self, request):
        self.countdown.tick()
        request.setHeader("content-type", "text/html")
        return b"<html><title>fast</title></html>"


class _AnswerWhen(Resource):
    """Answers C{body} (text/plain) once C{event} has fired: a wait on an event, where a
    delay would guess how long the other host takes."""

    isLeaf = True

    def __init__(self, event, body):
        super().__init__()
        self.event = event
        self.body = body

    def render(self, request):
        self.event.addCallback(self._answer, request)
        return NOT_DONE_YET

    def _answer(self, result, request):
        if not request.finished and not request._disconnected:
            request.setHeader("content-type", "text/plain")
            request.write(self.body)
            request.finish()
        return result


def _paths(server):
    """The paths a server was asked for, robots.txt left out."""
    return {path for path in server.hits if path != "/robots.txt"}


class RobotsTests(unittest.TestCase):
    """ROBOTSTXT_OBEY against real servers."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_disallowed_pages_never_fetched(self):
        """Disallowed links are dropped (ledger: dropped, not failed); robots.txt is no page."""
        self.server.add("/robots.txt", Robots("User-agent: *\nDisallow: /private\n"))
        start = self.server.add_page("/", links=["/a", "/private/x", "/private2", "/b"])
        for path in ("/a", "/b", "/private/x", "/private2"):
            self.server.add_page(path)
        crawler = yield crawl(LinkSpider, OBEY, start_urls=[start])
        self.assertEqual(_paths(self.server), {"/", "/a", "/b"})
        self.assertEqual(self.server.hits["/robots.txt"], 1)
        stats = crawler.stats
        self.assertEqual(stats.get_value("ledger/dropped/RobotsDisallowed"), 2)
        self.assertEqual(stats.get_value("robotstxt/forbidden"), 2)
        self.assertIsNone(stats.get_value("ledger/failed"))
        self.assertEqual(stats.get_value("ledger/opened"), 5)
        self.assertEqual(stats.get_value("response_received_count"), 3)
        self.assertEqual(stats.get_value("robotstxt/response_status_count/200"), 1)
        self.assertEqual(stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_rules_for_our_user_agent(self):
        """The group naming the crawler's user agent applies, not the * group."""
        self.server.add("/robots.txt", Robots(
            "User-agent: *\nDisallow: /\n\nUser-agent: tinyscrapy\nDisallow: /no\n"))
        start = self.server.add_page("/", links=["/yes", "/no"])
        self.server.add_page("/yes")
        self.server.add_page("/no")
        yield crawl(LinkSpider, OBEY, start_urls=[start])
        self.assertEqual(_paths(self.server), {"/", "/yes"})

    @defer.inlineCallbacks
    def test_fetched_once_per_origin_by_concurrent_requests(self):
        """Sixteen requests at once to two new origins: one robots.txt fetch each."""
        other = serve(self)
        urls = []
        for server in (self.server, other):
            server.add("/robots.txt", Delay(0.2, b"User-agent: *\nDisallow: /x\n"))
            for i in range(8):
                urls.append(server.add_page(f"/p{i}"))
        crawler = yield crawl(LinkSpider, dict(OBEY, CONCURRENT_REQUESTS=16),
                              start_urls=urls)
        for server in (self.server, other):
            self.assertEqual(server.hits["/robots.txt"], 1)
            self.assertEqual(len(_paths(server)), 8)
        self.assertEqual(crawler.stats.get_value("robotstxt/request_count"), 2)

    @defer.inlineCallbacks
    def test_other_hosts_not_held_up(self):
        """While one host's robots.txt is unanswered, another host's pages are fetched:
        the slow robots.txt answers only once the fast host's pages have all arrived."""
        slow = serve(self, interface="127.0.0.2")
        fast_pages_in = _Countdown(3)
        slow.add("/robots.txt", _AnswerWhen(fast_pages_in.done, b"User-agent: *\nAllow: /\n"))
        slow_page = slow.add_page("/")
        self.server.add("/robots.txt", Robots("User-agent: *\nAllow: /\n"))
        fast_pages = [self.server.add(f"/f{i}", _Counted(fast_pages_in)) for i in range(3)]
        crawler = yield crawl(LinkSpider, dict(OBEY, ROBOTSTXT_TIMEOUT=30),
                              start_urls=[slow_page] + fast_pages)
        self.assertTrue(fast_pages_in.done.called)
        self.assertEqual(slow.hits["/"], 1)  # after its robots.txt, which did not time out
        self.assertEqual([key for key in crawler.stats.get_stats()
                          if key.startswith("robotstxt/exception_count/")], [])
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 4)

    @defer.inlineCallbacks
    def test_missing_or_broken_robots_allows_all(self):
        """404, 500, a dropped connection, a timeout or a redirect loop: everything allowed."""
        answers = [Status(404), Status(500), Drop(), NoAnswer(), Redirect("/robots.txt")]
        servers = []
        for answer in answers:
            server = serve(self)
            server.add("/robots.txt", answer)
            server.add_page("/", links=["/page"])
            server.add_page("/page")
            servers.append(server)
        settings = dict(OBEY, ROBOTSTXT_TIMEOUT=0.5, **REDIRECTS)
        crawler = yield crawl(LinkSpider, settings,
                              start_urls=[server.url("/") for server in servers])
        for server in servers:
            self.assertEqual(_paths(server), {"/", "/page"})
        stats = crawler.stats
        self.assertEqual(stats.get_value("robotstxt/response_status_count/404"), 1)
        self.assertEqual(stats.get_value("robotstxt/response_status_count/500"), 1)
        exceptions = sum(value for key, value in stats.get_stats().items()
                         if key.startswith("robotstxt/exception_count/"))
        self.assertEqual(exceptions, 2)  # the dropped connection and the timeout
        self.assertEqual(stats.get_value("robotstxt/too_many_redirects"), 1)
        self.assertEqual(stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_redirects_are_checked(self):
        """A redirect to a disallowed page is dropped; a redirected robots.txt is followed."""
        self.server.add("/robots.txt", Redirect("/real-robots.txt"))
        self.server.add("/real-robots.txt", Robots("User-agent: *\nDisallow: /private\n"))
        start = self.server.add_page("/", links=["/go"])
        self.server.add("/go", Redirect("/private/page"))
        self.server.add_page("/private/page")
        crawler = yield crawl(LinkSpider, dict(OBEY, **REDIRECTS), start_urls=[start])
        self.assertEqual(self.server.hits["/private/page"], 0)
        self.assertEqual(self.server.hits["/go"], 1)
        self.assertEqual(self.server.hits["/real-robots.txt"], 1)
        self.assertEqual(crawler.stats.get_value("ledger/dropped/RobotsDisallowed"), 1)

    @defer.inlineCallbacks
    def test_crawl_delay_observed_at_the_server(self):
        """Crawl-delay: 0.3 spaces every request to the host, robots.txt included."""
        self.server.add("/robots.txt", Robots("User-agent: *\nCrawl-delay: 0.3\n"))
        start = self.server.add_page("/", links=[f"/p{i}" for i in range(4)])
        for i in range(4):
            self.server.add_page(f"/p{i}")
        crawler = yield crawl(LinkSpider, dict(OBEY, CONCURRENT_REQUESTS=8),
                              start_urls=[start])
        times = [request.time for request in self.server.requests]
        self.assertEqual(len(times), 6)
        gaps = [later - earlier for earlier, later in zip(times[:-1], times[1:], strict=True)]
        self.assertGreaterEqual(min(gaps), 0.29, gaps)
        self.assertEqual(crawler.stats.get_value(
            f"robotstxt/crawl_delay/127.0.0.1:{self.server.port}"), 0.3)

    @defer.inlineCallbacks
    def test_errback_gets_the_drop(self):
        """A request's errback gets RobotsDisallowed; dont_obey_robotstxt exempts one."""
        self.server.add("/robots.txt", Robots("User-agent: *\nDisallow: /\n"))
        blocked = self.server.add_page("/blocked")
        exempt = self.server.add_page("/exempt")
        failures = []

        class Errback(Spider):
            name = "errback"

            def start_requests(self):
                yield Request(blocked, errback=self.failed)
                yield Request(exempt, meta={"dont_obey_robotstxt": True})

            def parse(self, response):
                return None

            def failed(self, failure):
                failures.append(failure.type)

        yield crawl(Errback, OBEY)
        self.assertEqual(failures, [RobotsDisallowed])
        self.assertEqual(_paths(self.server), {"/exempt"})

    @defer.inlineCallbacks
    def test_off_by_default(self):
        """Without ROBOTSTXT_OBEY (Scrapy's default for spiders) robots.txt is not read."""
        self.server.add("/robots.txt", Robots("User-agent: *\nDisallow: /\n"))
        start = self.server.add_page("/")
        yield crawl(LinkSpider, start_urls=[start])
        self.assertEqual(dict(self.server.hits), {"/": 1})


class ChunkedRobots(Robots):
    """A robots.txt sent chunked (no Content-Length), in one write."""

    def render(self, request):
        request.setHeader("content-type", "text/plain; charset=utf-8")
        request.write(self.text.encode("utf-8"))
        request.finish()
        return NOT_DONE_YET


class LargeRobotsTests(unittest.TestCase):
    """A robots.txt over 500 KiB: its first 500 KiB apply, as Google documents."""

    @defer.inlineCallbacks
    def test_first_500_kib_apply(self):
        """3 MB robots.txt files (declared length, or chunked): the first rules hold, a
        rule after 500 KiB does not, the cut is counted and logged once per origin."""
        text = ("User-agent: *\nDisallow: /private\n" + "# padding line\n" * 40000
                + "Disallow: /late\n" + "# more\n" * 200000)
        servers = []
        for resource in (Robots(text), ChunkedRobots(text)):
            server = serve(self)
            server.add("/robots.txt", resource)
            server.add_page("/", links=["/private/x", "/late", "/open"])
            for path in ("/private/x", "/late", "/open"):
                server.add_page(path)
            servers.append(server)
        logs = capture_logs(self, "tinyscrapy.downloadermiddlewares.robotstxt")
        crawler = yield crawl(LinkSpider, OBEY, start_urls=[s.url("/") for s in servers])
        for server in servers:
            self.assertEqual(_paths(server), {"/", "/late", "/open"})
        self.assertEqual(crawler.stats.get_value("robotstxt/truncated"), 2)
        self.assertEqual(crawler.stats.get_value("robotstxt/forbidden"), 2)
        warnings = [m for m in logs.messages(logging.WARNING) if "500 KiB" in m]
        self.assertEqual(len(warnings), 2)

    @defer.inlineCallbacks
    def test_exactly_500_kib_is_not_cut(self):
        """A robots.txt of exactly 500 KiB is read whole, and no cut is counted."""
        head = "User-agent: *\nDisallow: /private\n"
        tail = "Disallow: /last\n"
        padding = "#" * (500 * 1024 - len(head) - len(tail) - 1) + "\n"
        server = serve(self)
        server.add("/robots.txt", Robots(head + padding + tail))
        server.add_page("/", links=["/last", "/open"])
        server.add_page("/last")
        server.add_page("/open")
        crawler = yield crawl(LinkSpider, OBEY, start_urls=[server.url("/")])
        self.assertEqual(_paths(server), {"/", "/open"})
        self.assertIsNone(crawler.stats.get_value("robotstxt/truncated"))


class RobotsUnitTests(unittest.TestCase):
    """The middleware's configuration."""

    def test_not_configured_when_off(self):
        """ROBOTSTXT_OBEY off: the middleware switches itself off."""
        from tinyscrapy.exceptions import NotConfigured

        crawler = Crawler(Spider, Settings())
        self.assertRaises(NotConfigured, RobotsTxtMiddleware.from_crawler, crawler)

    def test_crawl_delay_capped_and_shared(self):
        """Crawl-delay is capped by ROBOTSTXT_MAX_CRAWL_DELAY and readable per host."""
        crawler = Crawler(Spider, Settings({"ROBOTSTXT_OBEY": True,
                                            "ROBOTSTXT_MAX_CRAWL_DELAY": 5}))
        middleware = RobotsTxtMiddleware.from_crawler(crawler)
        middleware._set_crawl_delay("http://example.com:8080", 3600.0)
        middleware._set_crawl_delay("http://example.com", 2.0)
        self.assertEqual(middleware.crawl_delay("example.com:8080"), 5.0)
        self.assertEqual(middleware.crawl_delay("example.com"), 5.0)
        self.assertEqual(middleware.crawl_delay("other.com"), 0.0)
        self.assertIs(crawler.robots_delays, middleware.crawl_delays)

"""
Crawl scope: duplicates by canonical URL, depth, allowed domains, non-http links, long
URLs, and HttpResponse.follow / follow_all. Integration tests count at real servers.
"""

import logging

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.core.scraper import Scope
from tinyscrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from tinyscrapy.exceptions import DepthExceeded, InvalidUrl, OffsiteRequest, UrlTooLong
from tinyscrapy.http import HttpResponse
from tinyscrapy.http.request import unchecked_request
from tinyscrapy.link import Link
from tinyscrapy.spidermiddlewares.depth import DepthMiddleware
from tinyscrapy.spidermiddlewares.urllength import UrlLengthMiddleware
from tinyscrapy.statscollectors import StatsCollector

from .helpers import LinkSpider, crawl, serve
from .servers import Page, Redirect, Robots


class FollowAllSpider(LinkSpider):
    """Follows every C{href} with C{response.follow_all}."""

    def parse(self, response):
        yield {"url": response.url}
        yield from response.follow_all(css="a")


class HandMadeSpider(LinkSpider):
    """Builds its Requests by hand, without C{response.follow}."""

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield Request(response.urljoin(href))


class FollowRedirects:
    """Test-only downloader middleware: a 3xx becomes its next hop (as a redirect
    middleware does), so the scope sees redirect targets."""

    def process_response(self, request, response, spider):
        location = response.headers.get("Location")
        if response.status in (301, 302, 303, 307, 308) and location:
            return request.replace(url=response.urljoin(location.decode()))
        return response


REDIRECTS = {"DOWNLOADER_MIDDLEWARES": {FollowRedirects: 600}}


class DedupTests(unittest.TestCase):
    """Each canonical page is fetched once."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def _crawl_ten_spellings(self, spidercls):
        port = self.server.port
        spellings = [
            "/page?x=1&y=2", f"HTTP://127.0.0.1:{port}/page?x=1&y=2", "/page?y=2&x=1",
            "/page?x=1&y=2#top", "/%70age?x=1&y=2", "/p%61ge?%78=1&y=%32", "./page?x=1&y=2",
            "/sub/../page?x=1&y=2", "/page?x=1&&y=2&",
            f"http://127.0.0.1:{port}/./page?y=2&x=1#",
        ]
        start = self.server.add_page("/", links=spellings)
        self.server.add_page("/page", links=spellings + ["/"])
        crawler = yield crawl(spidercls, start_urls=[start])
        return crawler

    @defer.inlineCallbacks
    def test_ten_spellings_one_fetch(self):
        """Ten spellings of one URL, linked from two pages, cost one fetch. (The start
        page is fetched twice, as in Scrapy: its default start request is dont_filter and
        leaves no trace, so /page's link back to it is new; its spellings are not.)"""
        crawler = yield self._crawl_ten_spellings(LinkSpider)
        page_hits = sum(n for path, n in self.server.hits.items() if "age" in path)
        self.assertEqual(page_hits, 1)
        self.assertEqual(self.server.hits["/"], 2)
        self.assertEqual(crawler.stats.get_value("dupefilter/filtered"), 29)
        self.assertEqual(crawler.stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_follow_all_skips_seen_links_early(self):
        """follow_all makes no Request for links already seen: counted, not ledgered."""
        crawler = yield self._crawl_ten_spellings(FollowAllSpider)
        stats = crawler.stats
        page_hits = sum(n for path, n in self.server.hits.items() if "age" in path)
        self.assertEqual(page_hits, 1)
        self.assertEqual(stats.get_value("dupefilter/skipped_early"), 29)
        self.assertIsNone(stats.get_value("dupefilter/filtered"))
        self.assertEqual(stats.get_value("ledger/opened"), 3)  # /, /page, / again
        self.assertEqual(stats.get_value("ledger/missing"), 0)


class DepthTests(unittest.TestCase):
    """DEPTH_LIMIT, depth through redirects, DEPTH_PRIORITY and the depth stats."""

    def setUp(self):
        self.server = serve(self)

    def _calendar(self, months=200):
        """An endless calendar, as far as a crawler can tell: each month links the next."""
        for n in range(months):
            self.server.add_page(f"/cal/{n}", links=[f"/cal/{n + 1}", f"/cal/{n - 1}"])
        return self.server.url("/cal/0")

    @defer.inlineCallbacks
    def test_depth_limit_bounds_a_calendar_trap(self):
        """DEPTH_LIMIT=5: the start month and five more each way (the past is a 404);
        DEPTH_STATS_VERBOSE counts the start page and the requests admitted by depth."""
        crawler = yield crawl(LinkSpider, {"DEPTH_LIMIT": 5, "DEPTH_STATS_VERBOSE": True},
                              start_urls=[self._calendar()])
        fetched = sorted(int(path.rsplit("/", 1)[1]) for path in self.server.hits)
        self.assertEqual(fetched, [-1, 0, 1, 2, 3, 4, 5])
        stats = crawler.stats
        self.assertEqual(stats.get_value("request_depth_max"), 5)
        self.assertEqual(stats.get_value("ledger/dropped/DepthExceeded"), 2)  # from /cal/5
        self.assertEqual(stats.get_value("request_depth_count/0"), 1)
        self.assertEqual(stats.get_value("request_depth_count/1"), 2)  # /cal/1, /cal/-1
        # /cal/0, a start URL (never filtered, so never seen), comes again at depth 2
        self.assertEqual(stats.get_value("request_depth_count/3"), 4)
        self.assertEqual(stats.get_value("request_depth_count/5"), 2)  # /cal/5, /cal/3
        self.assertIsNone(stats.get_value("request_depth_count/6"))
        quiet = yield crawl(LinkSpider, {"DEPTH_LIMIT": 2}, start_urls=[self._calendar()])
        self.assertEqual(quiet.stats.get_value("request_depth_max"), 2)
        self.assertFalse([key for key in quiet.stats.get_stats()
                          if key.startswith("request_depth_count/")])

    @defer.inlineCallbacks
    def test_hand_made_requests_get_a_depth(self):
        """A Request built without response.follow is one link deeper all the same."""
        yield crawl(HandMadeSpider, {"DEPTH_LIMIT": 3}, start_urls=[self._calendar()])
        self.assertEqual(len(self.server.hits), 5)  # -1, 0, 1, 2, 3

    @defer.inlineCallbacks
    def test_depth_kept_through_redirects(self):
        """A redirect hop keeps the depth of the link it continues."""
        start = self.server.add_page("/", links=["/hop"])
        self.server.add("/hop", Redirect("/a"))
        self.server.add_page("/a", links=["/b"])
        self.server.add_page("/b")
        depths = []

        class Depths(LinkSpider):
            def parse(self, response):
                depths.append((response.url.rsplit("/", 1)[1], response.request.depth))
                return super().parse(response)

        settings = dict(REDIRECTS, DEPTH_LIMIT=2)
        yield crawl(Depths, settings, start_urls=[start])
        self.assertEqual(sorted(depths), [("", 0), ("a", 1), ("b", 2)])

    @defer.inlineCallbacks
    def _order(self, depth_priority):
        tree = {"/": ["/a", "/b"], "/a": ["/a1", "/a2"], "/b": ["/b1", "/b2"],
                "/a1": ["/a11"], "/a2": [], "/b1": [], "/b2": [], "/a11": []}
        for path, links in tree.items():
            self.server.add_page(path, links=links)
        yield crawl(LinkSpider, {"CONCURRENT_REQUESTS": 1, "DEPTH_PRIORITY": depth_priority},
                    start_urls=[self.server.url("/")])
        return [request.path for request in self.server.requests]

    @defer.inlineCallbacks
    def test_depth_priority_breadth_first(self):
        """DEPTH_PRIORITY=1: each level before the next."""
        order = yield self._order(1)
        self.assertEqual(order, ["/", "/a", "/b", "/a1", "/a2", "/b1", "/b2", "/a11"])

    @defer.inlineCallbacks
    def test_depth_priority_depth_first(self):
        """DEPTH_PRIORITY=-1: down one branch before the next."""
        order = yield self._order(-1)
        self.assertEqual(order, ["/", "/a", "/a1", "/a11", "/a2", "/b", "/b1", "/b2"])


class OffsiteTests(unittest.TestCase):
    """allowed_domains against links and redirects, on two loopback hosts."""

    def setUp(self):
        self.server = serve(self)
        self.other = serve(self, interface="127.0.0.2")

    @defer.inlineCallbacks
    def test_offsite_links_and_redirects_dropped(self):
        """Links and a redirect to another host are never fetched; counted; logged once."""
        elsewhere = [self.other.url(f"/x{i}") for i in range(3)]
        start = self.server.add_page("/", links=elsewhere + ["/go", "/ok"])
        self.server.add("/go", Redirect(self.other.url("/landing")))
        self.server.add_page("/ok")
        for path in ("/x0", "/x1", "/x2", "/landing"):
            self.other.add_page(path)

        class Allowed(LinkSpider):
            allowed_domains = ["127.0.0.1"]

        with self.assertLogs("tinyscrapy.downloadermiddlewares.offsite", logging.DEBUG) as logs:
            crawler = yield crawl(Allowed, REDIRECTS, start_urls=[start])
        self.assertEqual(self.other.hits, {})
        self.assertEqual(self.server.hits["/ok"], 1)
        stats = crawler.stats
        self.assertEqual(stats.get_value("ledger/dropped/OffsiteRequest"), 4)
        self.assertEqual(stats.get_value("offsite/domains"), 1)
        self.assertEqual(stats.get_value("ledger/missing"), 0)
        offsite_lines = [line for line in logs.output if "offsite" in line]
        self.assertEqual(len(offsite_lines), 1)
        self.assertIn("127.0.0.2", offsite_lines[0])

    @defer.inlineCallbacks
    def test_allow_offsite_meta(self):
        """meta allow_offsite lets one request through."""
        target = self.other.add_page("/special")

        class Special(Spider):
            name = "special"
            allowed_domains = ["127.0.0.1"]

            def start_requests(self):
                yield Request(target, meta={"allow_offsite": True})

            def parse(self, response):
                return None

        yield crawl(Special)
        self.assertEqual(self.other.hits["/special"], 1)


class OnlyThisPort(OffsiteMiddleware):
    """A project's own policy, Scrapy's way: should_follow overridden (only the start
    page's port of an allowed host)."""

    port = None

    def should_follow(self, request, spider):
        from tinyscrapy.utils.httpobj import urlparse_cached
        return urlparse_cached(request).port == self.port


class OffsiteApiTests(unittest.TestCase):
    """OffsiteMiddleware's Scrapy API: should_follow overridden, allowed_domains changed
    by the spider as it goes, process_request."""

    def setUp(self):
        self.server = serve(self)
        self.other = serve(self, interface="127.0.0.2")

    @defer.inlineCallbacks
    def test_overridden_should_follow_decides(self):
        """A subclass's should_follow is asked for every request instead of the host
        check: a link to another port of the same host is dropped."""
        second = serve(self)
        start = self.server.add_page("/", links=["/ok", second.url("/elsewhere")])
        self.server.add_page("/ok")
        second.add_page("/elsewhere")
        OnlyThisPort.port = int(start.rsplit(":", 1)[1].split("/")[0])
        path = f"{__name__}.OnlyThisPort"
        crawler = yield crawl(LinkSpider, {"DOWNLOADER_MIDDLEWARES": {
            "tinyscrapy.downloadermiddlewares.offsite.OffsiteMiddleware": None, path: 50}},
            start_urls=[start])
        self.assertEqual(self.server.hits["/ok"], 1)
        self.assertEqual(second.hits, {})
        self.assertEqual(crawler.stats.get_value("ledger/dropped/OffsiteRequest"), 1)

    @defer.inlineCallbacks
    def test_allowed_domains_changed_while_crawling(self):
        """A callback that adds a domain to allowed_domains lets later links there in."""
        later = self.other.add_page("/later")
        start = self.server.add_page("/", links=["/next"])
        self.server.add_page("/next", links=[later])

        class Growing(LinkSpider):
            allowed_domains = ["127.0.0.1"]

            def parse(self, response):
                if response.url.endswith("/next"):
                    self.allowed_domains.append("127.0.0.2")
                yield from super().parse(response)

        yield crawl(Growing, start_urls=[start])
        self.assertEqual(self.other.hits["/later"], 1)

    def test_chain_leaves_the_checked_hook_out(self):
        """The downloader chain never calls the built-in process_request (every request
        was checked before it was queued); a subclass's own process_request it calls."""
        from tinyscrapy.core.downloader.middleware import DownloaderMiddlewareManager
        from tinyscrapy.utils.test import get_crawler

        class Own(OffsiteMiddleware):
            def process_request(self, request, spider=None):
                return None

        crawler = get_crawler(Spider)
        manager = DownloaderMiddlewareManager(OffsiteMiddleware(), Own(), crawler=crawler)
        self.assertEqual([hook.__func__ for hook in manager.methods["process_request"]],
                         [Own.process_request])

    def test_process_request_as_scrapy(self):
        """process_request drops an off-site request with Scrapy's message; dont_filter
        and allow_offsite let it through."""
        from tinyscrapy.utils.test import get_crawler
        crawler = get_crawler(Spider)
        crawler.spider = Spider("s", allowed_domains=["a.example"])
        middleware = OffsiteMiddleware.from_crawler(crawler)
        middleware.spider_opened(crawler.spider)
        self.assertIsNone(middleware.process_request(Request("https://sub.a.example/")))
        error = self.assertRaises(OffsiteRequest, middleware.process_request,
                                  Request("https://b.example/"))
        self.assertEqual(str(error), "Filtered offsite request to 'b.example'")
        self.assertIsNone(middleware.process_request(Request("https://b.example/",
                                                             dont_filter=True)))
        self.assertIsNone(middleware.process_request(Request(
            "https://b.example/", meta={"allow_offsite": True})))
        self.assertEqual(middleware.get_host_regex(crawler.spider).pattern,
                         r"^(.*\.)?(a\.example)\Z")


def _scope(stats, depth_limit=0, url_length_limit=2083, depth_priority=0):
    """The scope of a crawl with the three built-in rules, as the scraper builds it."""
    rules = [("offsite", OffsiteMiddleware(stats)),
             ("urllength", UrlLengthMiddleware(url_length_limit)),
             ("depth", DepthMiddleware(depth_limit, stats, prio=depth_priority))]
    return Scope(stats, rules)


class ScopeUnitTests(unittest.TestCase):
    """Scope.admit on its own."""

    def setUp(self):
        self.stats = StatsCollector()
        self.scope = _scope(self.stats, depth_limit=3, url_length_limit=60)

    def _spider(self, domains):
        spider = Spider(name="s")
        spider.allowed_domains = domains
        return spider

    def test_subdomains_and_ports(self):
        """A domain admits its subdomains, not look-alikes; an entry with a port only it."""
        spider = self._spider(["example.com", "127.0.0.1:8080"])
        for url in ("http://example.com/", "https://a.b.Example.com/", "http://127.0.0.1:8080/"):
            self.scope.admit(Request(url), spider)
        for url in ("http://badexample.com/", "http://example.com.evil.net/",
                    "http://127.0.0.1:8081/", "http://127.0.0.1/"):
            self.assertRaises(OffsiteRequest, self.scope.admit, Request(url), spider)

    def test_invalid_urls(self):
        """Non-http schemes, no host and bad ports are InvalidUrl, domains or not."""
        spider = self._spider([])
        for url in ("javascript:void(0)", "mailto:a@b", "tel:+1", "data:,x", "file:///etc",
                    "ftp://h/", "http:///x", "http://h:99999/", "http://h:x/", "http://[bad/"):
            self.assertRaises(InvalidUrl, self.scope.admit, unchecked_request(url), spider)

    def test_length_and_depth(self):
        """Over URLLENGTH_LIMIT: UrlTooLong; over DEPTH_LIMIT: DepthExceeded."""
        spider = self._spider([])
        self.assertRaises(UrlTooLong, self.scope.admit, Request("http://h/" + "a" * 60), spider)
        self.scope.admit(Request("http://h/", depth=3), spider)
        self.assertRaises(DepthExceeded, self.scope.admit, Request("http://h/", depth=4), spider)

    def test_depth_priority_once(self):
        """DEPTH_PRIORITY lowers a new request's priority; a redirect keeps it as it is."""
        scope = _scope(self.stats, depth_priority=2)
        request = Request("http://h/", depth=3)
        scope.admit(request, self._spider([]))
        self.assertEqual(request.priority, -6)
        scope.admit(request, self._spider([]), parent=Request("http://h/old"))
        self.assertEqual(request.priority, -6)


class NonHttpLinkTests(unittest.TestCase):
    """Links that are not http(s) never become downloads, and never stop the crawl."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_naive_spider_keeps_going(self):
        """A spider following every href: only http(s) goes to the network, data: is
        answered by its handler (as in Scrapy), the rest is counted."""
        strange = ["javascript:void(0)", "JavaScript:alert(1)", "mailto:a@example.com",
                   "tel:+1 555 0100", "data:text/html,<b>é</b>", "file:///etc/passwd",
                   "ftp://127.0.0.1/x", "http://[bad", "http://127.0.0.1:99999/",
                   "http://127.0.0.1:x/é", "/" + "a" * 2100]
        start = self.server.add_page("/", links=strange + ["/good"])
        self.server.add_page("/good")
        crawler = yield crawl(LinkSpider, start_urls=[start])
        self.assertEqual(dict(self.server.hits), {"/": 1, "/good": 1})
        stats = crawler.stats
        self.assertEqual(stats.get_value("item_scraped_count"), 3)  # /, /good, the data:
        self.assertEqual(stats.get_value("ledger/dropped/InvalidUrl"), 9)
        self.assertEqual(stats.get_value("ledger/dropped/UrlTooLong"), 1)
        self.assertIsNone(stats.get_value("spider_exceptions/ValueError"))
        self.assertEqual(stats.get_value("ledger/missing"), 0)


class FollowTests(unittest.TestCase):
    """HttpResponse.follow, follow_all and urljoin."""

    def _response(self, body=b"", url="http://h/dir/page.html", depth=2):
        return HttpResponse(url, 200, {"Content-Type": "text/html; charset=utf-8"},
                            body, Request(url, depth=depth))

    def test_follow_never_raises(self):
        """Strange hrefs make a Request (for the scope to drop) instead of raising."""
        response = self._response()
        for href in ("javascript:void(0)", "mailto:x@y", "tel:+1 234", "data:,é",
                     "file:///x", "http://[bad", "http://h:x/é", "http://h/\ud800", ""):
            request = response.follow(href)
            self.assertIsInstance(request, Request)
            self.assertEqual(request.depth, 3)

    def test_base_href_and_dot_segments(self):
        """<base href> wins over the page URL; dot segments go even in absolute URLs."""
        response = self._response(b'<html><head><base href="http://other/base/"></head>'
                                  b'<body><a href="x">x</a></body></html>')
        self.assertEqual(response.follow("x").url, "http://other/base/x")
        self.assertEqual(response.urljoin("  ../y\n"), "http://other/y")
        self.assertEqual(response.urljoin("http://h/a/./b/../c"), "http://h/a/c")

    def test_fast_join_agrees_with_urljoin(self):
        """On 100,000 generated hrefs, urljoin's fast path gives urljoin's answer."""
        import random
        from urllib.parse import urljoin

        from tinyscrapy.utils.url import fast_join as _fast_join
        from tinyscrapy.utils.url import join_prefixes as _join_prefixes

        rng = random.Random(7)
        pieces = ["a", "B", "/", "//", ".", "..", "?", "#", ";", ":", "=", "&", "%20", "~",
                  "http://", "https://", "HTTP://", "h", "@", "[", "]", "!", "(", "$", "+",
                  "../", "../../", "./", " ", "\t"]
        bases = ["http://h/dir/page.html", "http://H:8080/a/b/", "https://h", "http://h/a/b/c/d",
                 "http://h/p?q=1#f", "http://h/a;p/b", "https://u@h.com/x/y/z?"]
        fast = 0
        for _ in range(100000):
            href = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 10)))
            base = rng.choice(bases)
            try:
                expected = urljoin(base, href)
            except ValueError:
                continue
            joined = _fast_join(href, *_join_prefixes(base))
            if joined is not None:
                fast += 1
                self.assertEqual(joined, expected, (base, href))
        self.assertGreater(fast, 15000)

    def test_join_prefixes_agree_with_urljoin(self):
        """The directory join_prefixes cuts from a page URL is urljoin(base, "x") less the
        x, on generated http(s) URLs (dot segments, doubled slashes, ports, params)."""
        import random
        from urllib.parse import urljoin, urlsplit

        from tinyscrapy.utils.url import join_prefixes as _join_prefixes

        rng = random.Random(3)
        pieces = ["http://", "https://", "h", "H:80", ":8080", "/", "a", ".", "..", "?",
                  "q=1", "#f", ";p", "//", "@", "%2F", "x.html"]
        checked = 0
        for _ in range(20000):
            base = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
            try:
                parts = urlsplit(base)
                expected = urljoin(base, "x")[:-1]
            except ValueError:
                continue
            if parts.scheme in ("http", "https") and parts.netloc:
                checked += 1
                self.assertEqual(_join_prefixes(base),
                                 (parts.scheme + "://" + parts.netloc, expected), base)
        self.assertGreater(checked, 1000)

    def test_response_urljoin_agrees_with_urljoin(self):
        """response.urljoin gives urljoin's answer (dot segments resolved) for generated
        hrefs: fragments alone, ./ and ../, spaces, on bases with queries and fragments."""
        import random
        from urllib.parse import urljoin

        from tinyscrapy.utils.url import resolve_dot_segments

        rng = random.Random(11)
        pieces = ["#", "#top", "./", "../", "/", "x.html", "?", "q=1", " ", ".", "//", "a"]
        for base in ["http://h/dir/page.html", "http://h/p?q=1#f", "https://h:8443/a/b/"]:
            response = HttpResponse(base, 200, {"Content-Type": "text/html"}, b"<p>",
                                    Request(base))
            for _ in range(5000):
                href = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 5)))
                expected = urljoin(base, href)
                if "/." in expected:
                    expected = resolve_dot_segments(expected)
                self.assertEqual(response.urljoin(href), expected, (base, href))

    def test_follow_accepts_links_and_selectors(self):
        """A Link, an element selector and an attribute selector all work."""
        response = self._response(b'<a href="/s">s</a><span>no link</span>')
        self.assertEqual(response.follow(Link("http://h/l")).url, "http://h/l")
        self.assertEqual(response.follow(response.css("a")[0]).url, "http://h/s")
        self.assertEqual(response.follow(response.css("a::attr(href)")[0]).url, "http://h/s")
        self.assertRaises(ValueError, response.follow, response.css("span")[0])

    def test_follow_all(self):
        """From urls, css or xpath; one of them only; depth one more."""
        response = self._response(b'<a href="/1">1</a><a href="2">2</a><a>no href</a>')
        self.assertEqual([r.url for r in response.follow_all(css="a")],
                         ["http://h/1", "http://h/dir/2"])
        self.assertEqual([r.url for r in response.follow_all(xpath="//a/@href")],
                         ["http://h/1", "http://h/dir/2"])
        requests = response.follow_all(["/3", Link("http://h/4")], priority=5)
        self.assertEqual([(r.url, r.depth, r.priority) for r in requests],
                         [("http://h/3", 3, 5), ("http://h/4", 3, 5)])
        self.assertRaises(ValueError, response.follow_all, ["/x"], css="a")

    def test_follow_all_early_check_only_for_plain_gets(self):
        """dont_filter, POST or a body skip the early duplicate check."""
        from tinyscrapy.dupefilters import SeenUrls
        from tinyscrapy.utils.request import url_fingerprint

        stats = StatsCollector()
        response = self._response()
        response._seen = SeenUrls({url_fingerprint("http://h/seen")}, stats)
        self.assertEqual(response.follow_all(["/seen", "/new"])[0].url, "http://h/new")
        self.assertEqual(len(response.follow_all(["/seen"], dont_filter=True)), 1)
        self.assertEqual(len(response.follow_all(["/seen"], method="POST")), 1)
        self.assertEqual(len(response.follow_all(["/seen"], body=b"x")), 1)
        self.assertEqual(stats.get_value("dupefilter/skipped_early"), 1)


class LongUrlTests(unittest.TestCase):
    """URLLENGTH_LIMIT."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_growing_urls_stop_at_the_limit(self):
        """A page that links to a longer copy of itself stops at URLLENGTH_LIMIT."""

        class Grow(LinkSpider):
            handle_httpstatus_list = (404,)

            def parse(self, response):
                yield response.follow(response.url + "a/")

        self.server.add("/", Page("<html></html>"))
        crawler = yield crawl(Grow, {"URLLENGTH_LIMIT": 100},
                              start_urls=[self.server.url("/")])
        self.assertEqual(crawler.stats.get_value("ledger/dropped/UrlTooLong"), 1)
        longest = max(len(self.server.url(path)) for path in self.server.hits)
        self.assertLessEqual(longest, 100)


class SiteCrawlCommandTests(unittest.TestCase):
    """C{python -m tinyscrapy crawl URL} on a small hostile site: the scope as a whole."""

    def setUp(self):
        self.server = serve(self)
        self.other = serve(self, interface="127.0.0.2")

    @defer.inlineCallbacks
    def test_hostile_site(self):
        """Each canonical page once, the trap bounded by the default depth, nothing
        off-site, non-http or disallowed fetched, robots.txt once."""
        import json
        import os

        from twisted.internet import reactor

        from .helpers import run_command

        port = self.server.port
        self.server.add("/robots.txt", Robots("User-agent: *\nDisallow: /private\n"))
        links = ["/a?x=1&y=2", f"HTTP://127.0.0.1:{port}/a?y=2&x=1#f", "/%61?x=1&y=2",
                 "/b/../a?x=1&y=2", "/private/x", "/cal/0", self.other.url("/off"),
                 "javascript:void(0)", "mailto:a@b", "tel:+1", "data:,x", "/photo.jpg"]
        start = self.server.add_page("/", links=links)
        self.server.add_page("/a", links=links)
        self.server.add_page("/private/x")
        for n in range(200):
            self.server.add_page(f"/cal/{n}", links=[f"/cal/{n + 1}"])
        self.other.add_page("/off")
        out = os.path.abspath(self.mktemp()) + ".jsonl"
        code, _, err = yield run_command(reactor, ["crawl", start, "-O", out, "-L", "INFO"])
        self.assertEqual(code, 0, err)
        self.assertEqual(self.other.hits, {})
        hits = self.server.hits
        self.assertEqual(hits["/robots.txt"], 1)
        self.assertEqual(hits["/private/x"], 0)
        self.assertEqual(sum(n for path, n in hits.items() if path.startswith(("/a", "/%61"))),
                         1)
        calendar = [path for path in hits if path.startswith("/cal/")]
        self.assertEqual(len(calendar), 20)  # depth 1 to 20
        self.assertTrue(all(n == 1 for n in hits.values()))
        with open(out, encoding="utf-8") as f:
            items = [json.loads(line) for line in f]
        self.assertEqual(len(items), len(hits) - 1)  # every page but robots.txt

"""
Cookies: set by a server, returned by domain and path, kept apart by host and by session.
"""

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.downloadermiddlewares.cookies import CookiesMiddleware
from tinyscrapy.http import HttpResponse

from .helpers import crawl, serve
from .recording import Recorder
from .servers import Echo, Redirect, _Leaf, _respond


def cookies_seen(server, path):
    """The Cookie header of each request for C{path}, None where there was none."""
    return [r.headers.get("cookie") for r in server.requests if r.path == path]


class CookieCrawlTests(unittest.TestCase):
    """Whole crawls; the servers record what came back."""

    def setUp(self):
        self.server = serve(self)
        self.other = serve(self, "127.0.0.2")

    @defer.inlineCallbacks
    def test_set_and_returned_to_the_same_host_only(self):
        """A cookie set by one host comes back to it, never to another host."""
        check_here = self.server.url("/check")
        check_there = self.other.url("/check")
        self.server.add("/check", Echo())
        self.other.add("/check", Echo())
        start = self.server.add_page("/login", links=[check_here, check_there],
                                     headers={"Set-Cookie": "session=abc; Path=/"})
        yield crawl(Recorder, start_urls=[start], follow=True)
        self.assertEqual(cookies_seen(self.server, "/check"), ["session=abc"])
        self.assertEqual(cookies_seen(self.other, "/check"), [None])

    @defer.inlineCallbacks
    def test_a_host_cannot_set_cookies_for_another(self):
        """Set-Cookie with Domain=127.0.0.2 from 127.0.0.1 is refused."""
        self.other.add("/check", Echo())
        start = self.server.add_page(
            "/", links=[self.other.url("/check")],
            headers={"Set-Cookie": "stolen=1; Domain=127.0.0.2; Path=/"})
        yield crawl(Recorder, start_urls=[start], follow=True)
        self.assertEqual(cookies_seen(self.other, "/check"), [None])

    @defer.inlineCallbacks
    def test_path_rule(self):
        """A cookie with Path=/private goes to /private/..., not to /public."""
        self.server.add("/private/page", Echo())
        self.server.add("/public", Echo())
        start = self.server.add_page("/private/login", links=["/private/page", "/public"],
                                     headers={"Set-Cookie": "p=1; Path=/private"})
        yield crawl(Recorder, start_urls=[start], follow=True)
        self.assertEqual(cookies_seen(self.server, "/private/page"), ["p=1"])
        self.assertEqual(cookies_seen(self.server, "/public"), [None])

    @defer.inlineCallbacks
    def test_cookiejar_keeps_sessions_apart(self):
        """Two sessions (meta cookiejar) logged in as two users each see their own cookie."""
        server = self.server
        for user in ("1", "2"):
            server.add_page(f"/login{user}", links=["/check"],
                            headers={"Set-Cookie": f"user={user}; Path=/"})
        server.add("/check", Echo())

        class Sessions(Spider):
            name = "sessions"

            def start_requests(self):
                for user in ("1", "2"):
                    yield Request(server.url(f"/login{user}"), meta={"cookiejar": user})

            def parse(self, response):
                if "/login" in response.url:
                    yield response.follow("/check", dont_filter=True,
                                          meta={"cookiejar": response.meta["cookiejar"]})

        yield crawl(Sessions)
        self.assertEqual(sorted(cookies_seen(server, "/check")), ["user=1", "user=2"])

    @defer.inlineCallbacks
    def test_disabled(self):
        """COOKIES_ENABLED=False: nothing is kept; a spider's own Cookie header goes as is."""
        self.server.add("/check", Echo())
        start = self.server.add_page("/", links=["/check"],
                                     headers={"Set-Cookie": "session=abc; Path=/"})

        def make(spider):
            return [Request(start, dont_filter=True),
                    Request(self.server.url("/check?own"), headers={"Cookie": "mine=1"})]

        yield crawl(Recorder, {"COOKIES_ENABLED": False}, make=make, follow=True)
        self.assertEqual(sorted(map(str, cookies_seen(self.server, "/check"))), ["None"])
        self.assertEqual(cookies_seen(self.server, "/check?own"), ["mine=1"])

    @defer.inlineCallbacks
    def test_own_cookie_header_joins_the_jar_for_its_host(self):
        """A Cookie header set by the spider is sent, and kept for that host only."""
        self.server.add("/check", Echo())
        self.other.add("/check", Echo())
        start = self.server.add_page("/", links=["/check", self.other.url("/check")])

        def make(spider):
            return [Request(start, headers={"Cookie": "token=t"}, dont_filter=True)]

        yield crawl(Recorder, make=make, follow=True)
        self.assertEqual(cookies_seen(self.server, "/"), ["token=t"])
        self.assertEqual(cookies_seen(self.server, "/check"), ["token=t"])
        self.assertEqual(cookies_seen(self.other, "/check"), [None])


class CookieUnitTests(unittest.TestCase):
    """The middleware alone."""

    def setUp(self):
        self.mw = CookiesMiddleware()
        self.spider = Spider("s")

    def receive(self, url, *set_cookies):
        request = Request(url)
        response = HttpResponse(url, 200, {"Set-Cookie": list(set_cookies)}, b"", request)
        self.mw.process_response(request, response, self.spider)

    def sent(self, url, **meta):
        request = Request(url, meta=meta)
        self.mw.process_request(request, self.spider)
        value = request.headers.get("Cookie")
        return None if value is None else value.decode()

    def test_parent_domain_cookie_reaches_subdomains_only(self):
        """Domain=example.com covers www.example.com, not example.org."""
        self.receive("http://www.example.com/", "a=1; Domain=example.com; Path=/")
        self.assertEqual(self.sent("http://shop.example.com/x"), "a=1")
        self.assertIsNone(self.sent("http://example.org/"))

    def test_secure_cookie_only_over_https(self):
        """A Secure cookie is sent over https, not http."""
        self.receive("https://example.com/", "s=1; Secure; Path=/")
        self.assertEqual(self.sent("https://example.com/"), "s=1")
        self.assertIsNone(self.sent("http://example.com/"))

    def test_expired_cookie_is_removed(self):
        """Max-Age=0 deletes the cookie."""
        self.receive("http://example.com/", "a=1; Path=/")
        self.receive("http://example.com/", "a=gone; Max-Age=0; Path=/")
        self.assertIsNone(self.sent("http://example.com/"))

    def test_dont_merge_cookies(self):
        """meta dont_merge_cookies: the jar adds nothing."""
        self.receive("http://example.com/", "a=1; Path=/")
        self.assertIsNone(self.sent("http://example.com/", dont_merge_cookies=True))

    def test_header_recomputed_on_a_new_hop(self):
        """A hop carrying the jar's old header gets the jar's current cookies instead."""
        self.receive("http://example.com/", "a=1; Path=/")
        request = Request("http://example.com/")
        self.mw.process_request(request, self.spider)
        self.receive("http://example.com/", "a=2; Path=/")
        hop = request.replace(url="http://example.com/next")
        self.mw.process_request(hop, self.spider)
        self.assertEqual(hop.headers["Cookie"], b"a=2")

    def test_given_cookies_on_https_are_secure_by_default(self):
        """cookies= on an https request are Secure unless secure=False is given."""
        self.mw.process_request(with_cookies("https://example.com/", {"s": "1"}), self.spider)
        self.mw.process_request(
            with_cookies("https://example.com/", [{"name": "p", "value": "2",
                                                   "secure": False}]), self.spider)
        self.assertEqual(self.sent("http://example.com/"), "p=2")
        self.assertEqual(names_in(self.sent("https://example.com/")), {"s", "p"})

    def test_debug_lines(self):
        """COOKIES_DEBUG logs what is sent and received, in Scrapy's words."""
        mw = CookiesMiddleware(debug=True)
        request = Request("http://example.com/")
        response = HttpResponse(request.url, 200, {"Set-Cookie": "a=1; Path=/"}, b"", request)
        with self.assertLogs("tinyscrapy.downloadermiddlewares.cookies", "DEBUG") as logs:
            mw.process_response(request, response)
            mw.process_request(Request("http://example.com/x"))
        self.assertEqual([r.getMessage() for r in logs.records],
                         ["Received cookies from: <200 http://example.com/>\n"
                          "Set-Cookie: a=1; Path=/\n",
                          "Sending cookies to: <GET http://example.com/x>\nCookie: a=1\n"])

    def test_dotless_host(self):
        """localhost keeps its cookies like any host."""
        self.receive("http://localhost:8080/", "a=1; Path=/")
        self.assertEqual(self.sent("http://localhost:8080/x"), "a=1")


class _CookieRequest(Request):
    """A Request carrying C{cookies=} for the tests, while L{Request} has no such argument
    (the request issue adds it; L{with_cookies} then uses L{Request} itself)."""

    __slots__ = ("cookies",)

    def __init__(self, url, cookies=None, **kwargs):
        super().__init__(url, **kwargs)
        self.cookies = cookies

    def replace(self, **changes):
        changes.setdefault("cookies", self.cookies)
        return super().replace(**changes)


def with_cookies(url, cookies, **kwargs):
    """C{Request(url, cookies=cookies, **kwargs)}."""
    try:
        return Request(url, cookies=cookies, **kwargs)
    except TypeError:
        return _CookieRequest(url, cookies=cookies, **kwargs)


class SetMany(_Leaf):
    """A page that sets C{count} cookies C{c0..}, each with a C{size}-byte value."""

    def __init__(self, count, size=1, prefix="c"):
        super().__init__()
        self.count, self.size, self.prefix = count, size, prefix

    def render(self, request):
        for i in range(self.count):
            request.addCookie(f"{self.prefix}{i}", "v" * self.size, path="/")
        return _respond(request, b"<html><body><a href='/check'>next</a></body></html>")


def names_in(header):
    """The cookie names in a Cookie header (a set; None is empty)."""
    if not header:
        return set()
    return {pair.strip().partition("=")[0] for pair in header.split(";")}


class RequestCookiesTests(unittest.TestCase):
    """Request(cookies=...) as Scrapy's cookies middleware handles it, in real crawls."""

    def setUp(self):
        self.server = serve(self)
        self.other = serve(self, "127.0.0.2")
        for server in (self.server, self.other):
            server.add("/check", Echo())
            server.add("/private/check", Echo())

    @defer.inlineCallbacks
    def test_dict_cookies_are_sent_and_kept_for_the_host(self):
        """cookies={...} go with the request and with later requests to that host only."""
        start = self.server.add_page("/", links=["/check", self.other.url("/check")])

        def make(spider):
            return [with_cookies(start, {"lang": "en", "n": 3}, dont_filter=True)]

        yield crawl(Recorder, make=make, follow=True)
        self.assertEqual(cookies_seen(self.server, "/"), ["lang=en; n=3"])
        self.assertEqual(cookies_seen(self.server, "/check"), ["lang=en; n=3"])
        self.assertEqual(cookies_seen(self.other, "/check"), [None])

    @defer.inlineCallbacks
    def test_list_cookies_with_path(self):
        """A list of dicts: a cookie with path=/private goes under /private only."""
        cookies = [{"name": "all", "value": "1"},
                   {"name": "priv", "value": "2", "path": "/private"},
                   {"name": "broken"}]
        start = self.server.add_page("/", links=["/check", "/private/check"])

        def make(spider):
            return [with_cookies(start, cookies, dont_filter=True)]

        yield crawl(Recorder, make=make, follow=True)
        self.assertEqual(cookies_seen(self.server, "/"), ["all=1"])
        self.assertEqual(cookies_seen(self.server, "/check"), ["all=1"])
        self.assertEqual(names_in(cookies_seen(self.server, "/private/check")[0]),
                         {"all", "priv"})

    @defer.inlineCallbacks
    def test_cookie_for_an_ip_address_named_as_its_domain(self):
        """domain="127.0.0.1" on a cookie for http://127.0.0.1:PORT/ is sent, to that
        address only."""
        start = self.server.add_page("/", links=["/check", self.other.url("/check")])

        def make(spider):
            return [with_cookies(start, [{"name": "c", "value": "1", "domain": "127.0.0.1"}],
                                 dont_filter=True)]

        yield crawl(Recorder, make=make, follow=True)
        self.assertEqual(cookies_seen(self.server, "/"), ["c=1"])
        self.assertEqual(cookies_seen(self.server, "/check"), ["c=1"])
        self.assertEqual(cookies_seen(self.other, "/check"), [None])

    @defer.inlineCallbacks
    def test_values_are_sent_utf8_encoded(self):
        """A str, UTF-8 bytes or latin-1 bytes value all arrive as UTF-8 bytes."""
        def make(spider):
            return [with_cookies(self.server.url(f"/check?{i}"), {"c": value},
                                 meta={"cookiejar": i})
                    for i, value in enumerate(("\u00e1", b"\xc3\xa1", b"\xe1"))]

        yield crawl(Recorder, make=make)
        seen = sorted((r.path, r.headers.get("cookie")) for r in self.server.requests)
        # the server reads header bytes as latin-1: "\xc3\xa1" is the UTF-8 of "\xe1"
        self.assertEqual([cookie for _, cookie in seen], ["c=\u00c3\u00a1"] * 3)

    @defer.inlineCallbacks
    def test_cookiejars_keep_given_cookies_apart(self):
        """cookies= given under meta cookiejar "a" are not sent with jar "b"."""
        server = self.server

        class Two(Spider):
            name = "two"

            def start_requests(self):
                yield with_cookies(server.url("/check?a1"), {"who": "a"},
                                   meta={"cookiejar": "a"})

            def parse(self, response):
                if response.url.endswith("a1"):
                    yield Request(server.url("/check?a2"), meta={"cookiejar": "a"})
                    yield Request(server.url("/check?b"), meta={"cookiejar": "b"})

        yield crawl(Two)
        seen = {r.path: r.headers.get("cookie") for r in server.requests}
        self.assertEqual(seen, {"/check?a1": "who=a", "/check?a2": "who=a", "/check?b": None})

    @defer.inlineCallbacks
    def test_dont_merge_cookies(self):
        """dont_merge_cookies: its cookies= are not sent, its own header is, nothing is kept."""
        self.server.add_page("/sets", headers={"Set-Cookie": "srv=1; Path=/"})

        def make(spider):
            return [with_cookies(self.server.url("/check?given"), {"given": "1"},
                                 meta={"dont_merge_cookies": True}),
                    Request(self.server.url("/check?own"), headers={"Cookie": "own=1"},
                            meta={"dont_merge_cookies": True}),
                    Request(self.server.url("/sets"), meta={"dont_merge_cookies": True})]

        yield crawl(Recorder, make=make)
        yield crawl(Recorder, start_urls=[self.server.url("/check?after")])
        seen = {r.path: r.headers.get("cookie") for r in self.server.requests}
        self.assertEqual(seen["/check?given"], None)
        self.assertEqual(seen["/check?own"], "own=1")
        self.assertEqual(seen["/check?after"], None)

    @defer.inlineCallbacks
    def test_redirect_to_another_host_carries_no_given_cookie(self):
        """cookies= given for 127.0.0.1 do not follow a redirect to 127.0.0.2."""
        start = self.server.add("/away", Redirect(self.other.url("/check")))

        def make(spider):
            return [with_cookies(start, {"secret": "1"})]

        crawler = yield crawl(Recorder, make=make)
        self.assertEqual(len(crawler.spider.responses), 1)
        self.assertEqual(cookies_seen(self.server, "/away"), ["secret=1"])
        self.assertEqual(cookies_seen(self.other, "/check"), [None])


class CookieBoundsTests(unittest.TestCase):
    """A hostile server cannot make the jar (or the Cookie header) grow without bound."""

    def setUp(self):
        self.server = serve(self)
        self.other = serve(self, "127.0.0.2")
        for server in (self.server, self.other):
            server.add("/check", Echo())

    @defer.inlineCallbacks
    def test_ten_thousand_cookies_keep_fifty(self):
        """10,000 Set-Cookie headers: the next request carries 50 cookies; 9,950 counted."""
        start = self.server.add("/flood", SetMany(10000))
        with self.assertLogs("tinyscrapy.downloadermiddlewares.cookies", "WARNING") as logs:
            crawler = yield crawl(Recorder, start_urls=[start], follow=True)
        cookie, = cookies_seen(self.server, "/check")
        self.assertEqual(len(names_in(cookie)), 50)
        self.assertLess(len(cookie), 1000)
        stats = crawler.stats
        self.assertEqual(stats.get_value("cookies/dropped/domain_full"), 9950)
        self.assertEqual(stats.get_value("cookies/dropped"), 9950)
        self.assertEqual(len(logs.records), 1)
        self.assertIn(start, logs.records[0].getMessage())

    @defer.inlineCallbacks
    def test_cookie_over_the_size_limit_is_refused(self):
        """A 5,000-byte cookie is not kept; a small one from the same page is."""
        class BigAndSmall(_Leaf):
            def render(self, request):
                request.addCookie("big", "x" * 5000, path="/")
                request.addCookie("small", "1", path="/")
                return _respond(request, b"<html><body><a href='/check'>c</a></body></html>")

        start = self.server.add("/big", BigAndSmall())
        with self.assertLogs("tinyscrapy.downloadermiddlewares.cookies", "WARNING"):
            crawler = yield crawl(Recorder, start_urls=[start], follow=True)
        self.assertEqual(cookies_seen(self.server, "/check"), ["small=1"])
        self.assertEqual(crawler.stats.get_value("cookies/dropped/too_large"), 1)

    @defer.inlineCallbacks
    def test_jar_bound_across_hosts(self):
        """COOKIES_MAX_PER_JAR bounds the jar over all hosts; a replacement still gets in."""
        first = self.server.add_page("/", links=[self.other.url("/many")],
                                     headers={"Set-Cookie": "a0=1; Path=/"})
        self.server.add("/many", SetMany(4, prefix="a"))
        self.other.add("/many", SetMany(4, prefix="b"))

        class Chain(Recorder):
            def parse(self, response):
                self.responses.append(response)
                if response.url == first:  # all of 127.0.0.1's cookies first
                    yield Request(test.server.url("/many"))
                elif response.url == test.server.url("/many"):
                    yield Request(test.other.url("/many"))
                elif response.url == test.other.url("/many"):
                    yield Request(test.other.url("/check"))

        test = self
        with self.assertLogs("tinyscrapy.downloadermiddlewares.cookies", "WARNING"):
            crawler = yield crawl(Chain, {"COOKIES_MAX_PER_JAR": 6}, start_urls=[first])
        self.assertEqual(names_in(cookies_seen(self.other, "/check")[0]), {"b0", "b1"})
        self.assertEqual(crawler.stats.get_value("cookies/dropped/jar_full"), 2)

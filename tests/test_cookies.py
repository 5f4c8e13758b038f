"""
Cookies: set by a server, returned by domain and path, kept apart by host and by session.
"""

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.http import HttpResponse
from tinyscrapy.middleware.cookies import CookiesMiddleware

from .helpers import crawl
from .recording import Recorder
from .servers import Echo, TestServer


def cookies_seen(server, path):
    """The Cookie header of each request for C{path}, None where there was none."""
    return [r.headers.get("cookie") for r in server.requests if r.path == path]


class CookieCrawlTests(unittest.TestCase):
    """Whole crawls; the servers record what came back."""

    def setUp(self):
        self.server = TestServer().start()
        self.addCleanup(self.server.stop)
        self.other = TestServer("127.0.0.2").start()
        self.addCleanup(self.other.stop)

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

    def test_dotless_host(self):
        """localhost keeps its cookies like any host."""
        self.receive("http://localhost:8080/", "a=1; Path=/")
        self.assertEqual(self.sent("http://localhost:8080/x"), "a=1")

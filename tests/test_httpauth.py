"""
HTTP Basic authentication, against a real server: which requests carry the credentials.
"""

import base64

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request
from tinyscrapy.downloadermiddlewares.httpauth import HttpAuthMiddleware, covers
from tinyscrapy.exceptions import UsageError

from .helpers import crawl, serve
from .recording import Recorder
from .servers import Echo, Redirect


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def authorization(server, path):
    """The Authorization header the server saw on C{path} (None: none)."""
    seen = [r.headers.get("authorization") for r in server.requests if r.path == path]
    return seen[0] if seen else None


class HttpAuthCrawlTests(unittest.TestCase):
    """Whole crawls with credentials."""

    def setUp(self):
        self.server = serve(self)
        self.other = serve(self, "127.0.0.2")
        for server in (self.server, self.other):
            server.add("/echo", Echo())

    @defer.inlineCallbacks
    def test_settings_credentials_reach_their_domain_only(self):
        """HTTPAUTH_*: 127.0.0.1 gets the header, 127.0.0.2 does not."""
        settings = {"HTTPAUTH_USER": "ann", "HTTPAUTH_PASS": "s3cret",
                    "HTTPAUTH_DOMAIN": "127.0.0.1"}
        yield crawl(Recorder, settings,
                    start_urls=[self.server.url("/echo"), self.other.url("/echo")])
        self.assertEqual(authorization(self.server, "/echo"), basic("ann", "s3cret"))
        self.assertIsNone(authorization(self.other, "/echo"))

    @defer.inlineCallbacks
    def test_spider_attributes(self):
        """http_user, http_pass and http_auth_domain on the spider are honoured."""
        class AuthRecorder(Recorder):
            http_user, http_pass, http_auth_domain = "bob", "pw", "127.0.0.2"

        yield crawl(AuthRecorder,
                    start_urls=[self.server.url("/echo"), self.other.url("/echo")])
        self.assertIsNone(authorization(self.server, "/echo"))
        self.assertEqual(authorization(self.other, "/echo"), basic("bob", "pw"))

    @defer.inlineCallbacks
    def test_not_carried_by_a_redirect_to_another_host(self):
        """A redirect from the domain to another host does not carry the credentials."""
        self.server.add("/away", Redirect(self.other.url("/echo")))
        settings = {"HTTPAUTH_USER": "ann", "HTTPAUTH_PASS": "pw",
                    "HTTPAUTH_DOMAIN": "127.0.0.1"}
        crawler = yield crawl(Recorder, settings, start_urls=[self.server.url("/away")])
        self.assertEqual(len(crawler.spider.responses), 1)
        self.assertEqual(authorization(self.server, "/away"), basic("ann", "pw"))
        self.assertIsNone(authorization(self.other, "/echo"))

    @defer.inlineCallbacks
    def test_meta_credentials_and_own_header(self):
        """meta http_user/http_pass go with one request; an own Authorization header wins."""
        def make(spider):
            return [
                Request(self.server.url("/echo?meta"),
                        meta={"http_user": "m", "http_pass": "p"}),
                Request(self.server.url("/echo?domain"),
                        meta={"http_user": "m", "http_pass": "p",
                              "http_auth_domain": "example.com"}),
                Request(self.server.url("/echo?own"), headers={"Authorization": "Bearer x"},
                        meta={"http_user": "m", "http_pass": "p"}),
            ]

        yield crawl(Recorder, make=make)
        seen = {r.path: r.headers.get("authorization") for r in self.server.requests}
        self.assertEqual(seen, {"/echo?meta": basic("m", "p"), "/echo?domain": None,
                                "/echo?own": "Bearer x"})

    def test_user_without_domain_is_refused(self):
        """HTTPAUTH_USER without HTTPAUTH_DOMAIN stops the start with one line."""
        d = crawl(Recorder, {"HTTPAUTH_USER": "ann"}, start_urls=[self.server.url("/echo")])
        return self.assertFailure(d, UsageError).addCallback(self._check_refused)

    def _check_refused(self, error):
        self.assertIn("HTTPAUTH_DOMAIN must be set", str(error))
        self.assertEqual(self.server.requests, [])

    @defer.inlineCallbacks
    def test_domain_none_sends_everywhere(self):
        """HTTPAUTH_DOMAIN=None, written explicitly, sends the credentials to every host."""
        settings = {"HTTPAUTH_USER": "ann", "HTTPAUTH_PASS": "pw", "HTTPAUTH_DOMAIN": None}
        yield crawl(Recorder, settings,
                    start_urls=[self.server.url("/echo"), self.other.url("/echo")])
        self.assertEqual(authorization(self.server, "/echo"), basic("ann", "pw"))
        self.assertEqual(authorization(self.other, "/echo"), basic("ann", "pw"))


class CoversTests(unittest.TestCase):
    """Which URLs a domain covers."""

    def test_subdomains_not_lookalikes(self):
        """example.com covers www.example.com on any port, not notexample.com."""
        self.assertTrue(covers("example.com", "https://www.Example.com:8443/x"))
        self.assertTrue(covers("example.com", "http://example.com/"))
        self.assertFalse(covers("example.com", "http://notexample.com/"))
        self.assertFalse(covers("example.com", "http://example.com.evil.org/"))

    def test_domain_with_port(self):
        """127.0.0.1:8080 covers that port only."""
        self.assertTrue(covers("127.0.0.1:8080", "http://127.0.0.1:8080/"))
        self.assertFalse(covers("127.0.0.1:8080", "http://127.0.0.1:8081/"))

    def test_no_credentials_makes_no_headers(self):
        """Without credentials a request's headers are never made (the hot path)."""
        request = Request("http://example.com/")
        HttpAuthMiddleware().process_request(request)
        self.assertIsNone(request._headers)

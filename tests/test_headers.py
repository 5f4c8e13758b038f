"""
The headers every request carries: defaults, the User-Agent, and the Referer.
"""

import json
import os

from twisted.internet import defer
from twisted.trial import unittest

import tinyscrapy
from tinyscrapy import Request
from tinyscrapy.http import Headers
from tinyscrapy.settings import DEFAULTS
from tinyscrapy.spidermiddlewares.referer import referrer_for

from .helpers import ROOT, crawl, serve
from .recording import Recorder
from .servers import Echo


class HeaderCrawlTests(unittest.TestCase):
    """What the server receives."""

    def setUp(self):
        self.server = serve(self)
        self.echo = self.server.add("/echo", Echo())

    def received(self, path="/echo"):
        return [r.headers for r in self.server.requests if r.path == path]

    @defer.inlineCallbacks
    def test_user_agent_names_tinyscrapy_its_version_and_url(self):
        """The default User-Agent is tinyscrapy/<version> (+<project URL>)."""
        yield crawl(Recorder, start_urls=[self.echo])
        headers, = self.received()
        self.assertEqual(headers["user-agent"],
                         f"tinyscrapy/{tinyscrapy.__version__} (+{tinyscrapy.PROJECT_URL})")
        self.assertIn("text/html", headers["accept"])
        self.assertEqual(headers["accept-language"], "en")

    @defer.inlineCallbacks
    def test_user_agent_set_to_none_or_empty_sends_none(self):
        """USER_AGENT = None or "" set by the user: no User-Agent at all, as in Scrapy."""
        yield crawl(Recorder, {"USER_AGENT": None}, start_urls=[self.echo])
        yield crawl(Recorder, {"USER_AGENT": ""}, start_urls=[self.echo])
        self.assertEqual([h.get("user-agent") for h in self.received()], [None, None])

    @defer.inlineCallbacks
    def test_settings_spider_and_request_override(self):
        """USER_AGENT, then the spider's user_agent, then the request's own header win."""
        yield crawl(Recorder, {"USER_AGENT": "from-setting",
                               "DEFAULT_REQUEST_HEADERS": {"X-Extra": "1"}},
                    start_urls=[self.echo])
        yield crawl(Recorder, start_urls=[self.echo], user_agent="from-spider")

        def make(spider):
            return [Request(self.echo, headers={"User-Agent": "own", "Accept": "x/y"})]

        yield crawl(Recorder, make=make)
        agents = [h["user-agent"] for h in self.received()]
        self.assertEqual(agents, ["from-setting", "from-spider", "own"])
        self.assertEqual(self.received()[0]["x-extra"], "1")
        self.assertNotIn("accept", self.received()[0])  # the whole dict was replaced
        self.assertEqual(self.received()[2]["accept"], "x/y")

    @defer.inlineCallbacks
    def test_referer_is_the_page_a_link_was_found_on(self):
        """A followed link carries its page's URL; a start request carries none."""
        start = self.server.add_page("/list", links=["/echo"])
        crawler = yield crawl(Recorder, start_urls=[start], follow=True)
        self.assertNotIn("referer", self.received("/list")[0])
        self.assertEqual(self.received()[0]["referer"], start)
        echoed = json.loads(crawler.spider.responses[-1].body)
        self.assertEqual(echoed["headers"]["referer"], [start])

    @defer.inlineCallbacks
    def test_referrer_policy_header_and_disabled(self):
        """A page's Referrer-Policy: no-referrer is obeyed; REFERER_ENABLED=False sends none."""
        quiet = self.server.add_page("/quiet", links=["/echo?1"],
                                     headers={"Referrer-Policy": "no-referrer"})
        loud = self.server.add_page("/loud", links=["/echo?2"])
        yield crawl(Recorder, start_urls=[quiet], follow=True)
        yield crawl(Recorder, {"REFERER_ENABLED": False}, start_urls=[loud], follow=True)
        self.assertEqual([r.path for r in self.server.requests if r.path.startswith("/echo")],
                         ["/echo?1", "/echo?2"])
        for headers in self.received("/echo?1") + self.received("/echo?2"):
            self.assertNotIn("referer", headers)


class ReferrerPolicyTests(unittest.TestCase):
    """L{referrer_for}, policy by policy."""

    def test_policies(self):
        """Each policy against same-origin, cross-origin and downgrade targets."""
        page = "https://user:pw@a.example/p?q=1#frag"
        full, origin = "https://a.example/p?q=1", "https://a.example/"
        same, cross, down = "https://a.example/x", "https://b.example/x", "http://a.example/x"
        expected = {
            "no-referrer": (None, None, None),
            "no-referrer-when-downgrade": (full, full, None),
            "same-origin": (full, None, None),
            "origin": (origin, origin, origin),
            "strict-origin": (origin, origin, None),
            "origin-when-cross-origin": (full, origin, origin),
            "strict-origin-when-cross-origin": (full, origin, None),
            "unsafe-url": (full, full, full),
        }
        for policy, values in expected.items():
            got = tuple(referrer_for(policy, page, target) for target in (same, cross, down))
            self.assertEqual(got, values, policy)

    def test_local_pages_do_not_refer(self):
        """data: pages never refer; file: pages not under the default policy (Scrapy's)."""
        self.assertIsNone(referrer_for("unsafe-url", "data:text/html,x", "http://a/"))
        self.assertIsNone(referrer_for("scrapy-default", "file:///etc/passwd", "http://a/"))
        self.assertEqual(referrer_for("unsafe-url", "file:///etc/passwd", "http://a/"),
                         "file:///etc/passwd")


class DocumentedTests(unittest.TestCase):
    """The settings and middlewares of this layer are documented."""

    NAMES = ("DOWNLOADER_MIDDLEWARES_BASE", "SPIDER_MIDDLEWARES_BASE",
             "DEFAULT_REQUEST_HEADERS", "USER_AGENT", "REDIRECT_ENABLED", "REDIRECT_MAX_TIMES",
             "REDIRECT_PRIORITY_ADJUST", "METAREFRESH_ENABLED", "METAREFRESH_MAXDELAY",
             "METAREFRESH_IGNORE_TAGS", "RETRY_ENABLED", "RETRY_TIMES", "RETRY_HTTP_CODES",
             "RETRY_PRIORITY_ADJUST", "RETRY_BACKOFF_BASE", "RETRY_BACKOFF_MAX",
             "RETRY_AFTER_MAX", "COOKIES_ENABLED", "COOKIES_DEBUG", "REFERER_ENABLED",
             "REFERRER_POLICY", "HTTPPROXY_ENABLED", "HTTPPROXY_AUTH_ENCODING")

    def read(self, name):
        with open(os.path.join(ROOT, "docs", name), encoding="utf-8") as f:
            return f.read()

    def test_settings(self):
        """Each setting has a default and a row in docs/settings.md."""
        text = self.read("settings.md")
        for name in self.NAMES:
            self.assertIn(name, DEFAULTS)
            self.assertTrue(f"| `{name}` |" in text or f"### `{name}`" in text, name)

    def test_middlewares(self):
        """Each built-in middleware is in docs/middlewares.md."""
        text = self.read("middlewares.md")
        for base in ("DOWNLOADER_MIDDLEWARES_BASE", "SPIDER_MIDDLEWARES_BASE"):
            for path in DEFAULTS[base]:
                self.assertIn(f"`{path}`", text)


class HeadersObjectTests(unittest.TestCase):
    """L{Headers} with Scrapy's semantics: any casing, values in bytes."""

    def test_case_insensitive_bytes(self):
        """Names in any casing (str or bytes) find the value, which is bytes."""
        headers = Headers({"Content-Type": "text/html", "X-Count": 3})
        self.assertEqual(headers["content-type"], b"text/html")
        self.assertEqual(headers.get(b"CONTENT-TYPE"), b"text/html")
        self.assertEqual(headers["x-count"], b"3")
        self.assertIn("CONTENT-type", headers)
        self.assertEqual(sorted(headers), [b"Content-Type", b"X-Count"])
        self.assertEqual(dict(headers), {b"Content-Type": [b"text/html"], b"X-Count": [b"3"]})

    def test_lists(self):
        """getlist, setlist, appendlist, setlistdefault: several values of one name."""
        headers = Headers()
        given = ["a=1", "b=2"]
        headers.setlist("Set-Cookie", given)
        headers.appendlist("set-cookie", "c=3")
        self.assertEqual(headers.getlist("SET-COOKIE"), [b"a=1", b"b=2", b"c=3"])
        self.assertEqual(headers["Set-Cookie"], b"c=3")  # the last value
        self.assertIsNot(headers.getlist("Set-Cookie"), given)
        self.assertEqual(headers.setlistdefault("Set-Cookie", ["x"]), [b"a=1", b"b=2", b"c=3"])
        self.assertEqual(headers.setlistdefault("Vary", ["a", "b"]), [b"a", b"b"])
        self.assertEqual(headers.getlist("Missing"), [])
        self.assertEqual(headers.getlist("Missing", "d"), [b"d"])

    def test_none_dropped_and_bad_values(self):
        """None means no value; a value that is not str, bytes or int is a TypeError."""
        headers = Headers({"A": "1"})
        headers["A"] = None
        self.assertIsNone(headers.get("A"))
        self.assertEqual(headers.getlist("A"), [])
        self.assertRaises(TypeError, Headers, {"A": object()})
        self.assertRaises(TypeError, headers.__setitem__, "B", object())

    def test_update_delete_copy(self):
        """update() folds casings together; del and pop take any casing; copy is separate."""
        headers = Headers()
        headers.update([("x-a", "1"), ("X-A", "2")])
        self.assertEqual(headers.getlist("X-A"), [b"1", b"2"])
        copy = headers.copy()
        copy.appendlist("x-a", "3")
        self.assertEqual(headers.getlist("X-A"), [b"1", b"2"])
        self.assertIsInstance(copy, Headers)
        del headers["x-A"]
        self.assertNotIn("X-A", headers)
        self.assertEqual(copy.pop("X-a"), [b"1", b"2", b"3"])

    def test_encoding_and_unicode_dict(self):
        """Headers(encoding=) encodes str values; to_unicode_dict joins several with ','."""
        self.assertEqual(Headers({"A": "\u00a3"}, encoding="latin-1")["A"], b"\xa3")
        self.assertEqual(Headers({"A": "\u00a3"})["A"], b"\xc2\xa3")
        text = Headers({"Accept": ["a", "b"], "X-P": "\u00a3"}).to_unicode_dict()
        self.assertEqual((text["accept"], text["X-P"]), ("a,b", "\u00a3"))
        self.assertIn("ACCEPT", text)

    def test_request_headers_copied(self):
        """Request(headers=other.headers) copies them: the two requests stay apart."""
        first = Request("http://h/", headers={"X-A": "1"})
        second = Request("http://h/", headers=first.headers)
        second.headers["X-A"] = "2"
        self.assertEqual((first.headers["X-A"], second.headers["X-A"]), (b"1", b"2"))

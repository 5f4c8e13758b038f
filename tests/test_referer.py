"""
Referrer policies from the page's header, the request's meta and the settings, in real
crawls: what the server saw is the evidence.
"""

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request
from tinyscrapy.exceptions import UsageError
from tinyscrapy.spidermiddlewares.referer import (
    OriginPolicy,
    RefererMiddleware,
    ReferrerPolicy,
    policy_of,
    referrer_for,
)

from .helpers import crawl, serve
from .recording import Recorder
from .servers import Echo


class MetaFollower(Recorder):
    """Follows each link with C{meta["referrer_policy"]} set to C{link_policy}."""

    link_policy = None

    def parse(self, response):
        self.responses.append(response)
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, meta={"referrer_policy": self.link_policy})


class RefererPolicyCrawlTests(unittest.TestCase):
    """The policy a followed link is sent under."""

    def setUp(self):
        self.server = serve(self)
        self.server.add("/echo", Echo())

    def referer(self, path="/echo"):
        seen, = [r.headers.get("referer") for r in self.server.requests if r.path == path]
        return seen

    @defer.inlineCallbacks
    def test_empty_header_is_the_default_policy(self):
        """Referrer-Policy: (empty) means no-referrer-when-downgrade, whatever the crawl's."""
        start = self.server.add_page("/page", links=["/echo"], headers={"Referrer-Policy": ""})
        yield crawl(Recorder, {"REFERRER_POLICY": "no-referrer"}, start_urls=[start],
                    follow=True)
        self.assertEqual(self.referer(), start)

    @defer.inlineCallbacks
    def test_unknown_header_falls_back_to_the_crawl_policy(self):
        """An unknown Referrer-Policy token is skipped: the last known one, else the crawl's."""
        self.server.add_page("/a", links=["/echo?a"], headers={"Referrer-Policy": "bogus"})
        self.server.add_page("/b", links=["/echo?b"],
                             headers={"Referrer-Policy": "unsafe-url, bogus"})
        yield crawl(Recorder, {"REFERRER_POLICY": "no-referrer"}, follow=True,
                    start_urls=[self.server.url("/a"), self.server.url("/b")])
        self.assertIsNone(self.referer("/echo?a"))
        self.assertEqual(self.referer("/echo?b"), self.server.url("/b"))

    @defer.inlineCallbacks
    def test_misspelt_meta_policy_falls_back_to_the_crawl_policy(self):
        """meta referrer_policy that names no policy: the crawl's policy, as in Scrapy."""
        start = self.server.add_page("/page", links=["/echo"])
        yield crawl(MetaFollower, {"REFERRER_POLICY": "no-referrer"}, start_urls=[start],
                    link_policy="no-refferer-when-downgrade")
        self.assertIsNone(self.referer())

    def test_unknown_setting_raises_what_scrapy_raises(self):
        """REFERRER_POLICY that names no policy stops the start: RuntimeError, one line."""
        d = crawl(Recorder, {"REFERRER_POLICY": "sometimes"},
                  start_urls=[self.server.url("/echo")])
        return self.assertFailure(d, RuntimeError).addCallback(self._check_refused)

    def _check_refused(self, error):
        self.assertIsInstance(error, UsageError)
        self.assertIn("Could not load referrer policy 'sometimes'", str(error))
        self.assertEqual(self.server.requests, [])

    @defer.inlineCallbacks
    def test_own_referer_is_kept(self):
        """A request the spider gives its own Referer keeps it."""
        start = self.server.add_page("/page", links=["/echo"])

        class OwnReferer(Recorder):
            def parse(self, response):
                self.responses.append(response)
                yield Request(test.server.url("/echo"), headers={"Referer": "http://mine/"})

        test = self
        yield crawl(OwnReferer, start_urls=[start])
        self.assertEqual(self.referer(), "http://mine/")

    @defer.inlineCallbacks
    def test_scrapy_default_is_accepted(self):
        """REFERRER_POLICY="scrapy-default" (Scrapy's default) sends the page's URL."""
        start = self.server.add_page("/page", links=["/echo"])
        yield crawl(Recorder, {"REFERRER_POLICY": "scrapy-default"}, start_urls=[start],
                    follow=True)
        self.assertEqual(self.referer(), start)


class Fixed(ReferrerPolicy):
    """A policy of one's own: always the same referrer."""

    name = "fixed"

    def referrer(self, response_url, request_url):
        return "http://fixed.example/"


class PolicyClassCrawlTests(unittest.TestCase):
    """REFERRER_POLICY as a class or a dotted path, as Scrapy allows."""

    def setUp(self):
        self.server = serve(self)
        self.server.add("/echo", Echo())

    def referer(self):
        seen, = [r.headers.get("referer") for r in self.server.requests if r.path == "/echo"]
        return seen

    @defer.inlineCallbacks
    def test_scrapy_path_own_class_and_class_object(self):
        """Scrapy's path of OriginPolicy, a project's own class path, and a class work."""
        start = self.server.add_page("/page", links=["/echo"])
        for policy, expected in (
                ("scrapy.spidermiddlewares.referer.OriginPolicy", self.server.url("/")),
                ("tests.test_referer.Fixed", "http://fixed.example/"),
                (OriginPolicy, self.server.url("/"))):
            self.server.requests.clear()
            yield crawl(Recorder, {"REFERRER_POLICY": policy}, start_urls=[start],
                        follow=True)
            self.assertEqual(self.referer(), expected, policy)


class PolicyOfTests(unittest.TestCase):
    """Reading a Referrer-Policy header."""

    def test_header_values(self):
        """Last known token wins; bytes work; empty is the W3C empty policy."""
        self.assertEqual(policy_of(b"origin", "unsafe-url"), "origin")
        self.assertEqual(policy_of("same-origin, Origin", "unsafe-url"), "origin")
        self.assertEqual(policy_of("", "unsafe-url"), "no-referrer-when-downgrade")
        self.assertEqual(policy_of(None, "unsafe-url"), "unsafe-url")
        self.assertEqual(RefererMiddleware("Same-Origin").default_policy.name, "same-origin")

    def test_values_as_scrapy_gives_them(self):
        """No slash added to an empty path, the host's case kept, default ports dropped."""
        self.assertEqual(referrer_for("unsafe-url", "http://Example.com", "http://a/"),
                         "http://Example.com")
        self.assertEqual(referrer_for("unsafe-url", "https://u:p@e.com:443/p?q#f", "http://a/"),
                         "https://e.com/p?q")
        self.assertEqual(referrer_for("origin", "http://e.com:8080/p?q", "http://a/"),
                         "http://e.com:8080/")
        for page, sent in [("http://e.com/p?", "http://e.com/p"),
                           ("http://e.com:80/p", "http://e.com/p"),
                           ("http://e.com/p#f", "http://e.com/p"),
                           ("http://e.com?q=1", "http://e.com?q=1"),
                           ("https://[::1]:443/x", "https://[::1]/x"),
                           ("http://e.com/a b", "http://e.com/a b"),
                           ("http://e.com/plain/page.html", "http://e.com/plain/page.html"),
                           ("http://e.com:8080/p", "http://e.com:8080/p"),
                           ("http://e.com:8080/p#f", "http://e.com:8080/p"),
                           ("https://e.com:443/p", "https://e.com/p")]:
            self.assertEqual(referrer_for("unsafe-url", page, "http://a/"), sent, page)


class PythonOrgPolicy(ReferrerPolicy):
    """Always refers from python.org (a policy of the project's own)."""

    def referrer(self, response_url, request_url):
        return "https://python.org/"


def _page(url="https://example.com/", **headers):
    from tinyscrapy.http import HttpResponse
    return HttpResponse(url, 200, headers, b"", Request(url))


class ScrapyApiTests(unittest.TestCase):
    """The middleware's API as Scrapy 2.19 documents it."""

    def middleware(self, **settings):
        from tinyscrapy.settings import Settings
        return RefererMiddleware(Settings(settings))

    def test_policy_names(self):
        """The POLICY_* constants are the policies' names."""
        from tinyscrapy.spidermiddlewares import referer
        self.assertEqual(referer.POLICY_NO_REFERRER, "no-referrer")
        self.assertEqual(referer.POLICY_STRICT_ORIGIN_WHEN_CROSS_ORIGIN,
                         "strict-origin-when-cross-origin")
        self.assertEqual(referer.POLICY_SCRAPY_DEFAULT, referer.DEFAULT_POLICY)
        self.assertIs(referer.policy_class(referer.POLICY_ORIGIN), OriginPolicy)

    def test_policy_method_precedence(self):
        """policy(response, request): meta, then the page's header, then the settings."""
        mw = self.middleware(REFERRER_POLICY="origin")
        plain = Request("https://a.example/")
        self.assertIsInstance(mw.policy(_page(), plain), OriginPolicy)
        header = _page(**{"Referrer-Policy": "no-referrer"})
        self.assertEqual(mw.policy(header, plain).name, "no-referrer")
        meta = Request("https://a.example/", meta={"referrer_policy": "unsafe-url"})
        self.assertEqual(mw.policy(header, meta).name, "unsafe-url")

    def test_policy_method_arguments(self):
        """Both arguments are required; a URL for the response is deprecated."""
        from tinyscrapy.exceptions import ScrapyDeprecationWarning
        mw = self.middleware()
        request = Request("https://a.example/")
        self.assertRaises(TypeError, mw.policy, request=request)
        self.assertRaises(TypeError, mw.policy, response=_page())
        with self.assertWarnsRegex(ScrapyDeprecationWarning, "Passing a response URL"):
            policy = mw.policy("https://example.com/", request)
        self.assertEqual(policy.name, "scrapy-default")

    def test_unknown_meta_policy_warns(self):
        """A meta policy that names nothing warns and the crawl's policy is used."""
        mw = self.middleware(REFERRER_POLICY="origin")
        request = Request("https://a.example/", meta={"referrer_policy": "ssscrapy-default"})
        with self.assertWarnsRegex(RuntimeWarning, "Could not load referrer policy"):
            policy = mw.policy(_page(), request)
        self.assertIsInstance(policy, OriginPolicy)

    def test_header_never_loads_code(self):
        """A dotted path in a Referrer-Policy header warns that only names are allowed."""
        mw = self.middleware(REFERRER_POLICY="no-referrer")
        page = _page(**{"Referrer-Policy": "tinyscrapy.spidermiddlewares.referer.UnsafeUrlPolicy"})
        with self.assertWarnsRegex(RuntimeWarning, "import paths from the response"):
            out = list(mw.process_spider_output(page, [Request("https://example.com/b")]))
        self.assertNotIn("Referer", out[0].headers)

    def test_referrer_policies_setting(self):
        """REFERRER_POLICIES adds a name (a class or its path) and removes one (None)."""
        mw = self.middleware(REFERRER_POLICIES={
            "python": f"{__name__}.PythonOrgPolicy", "unsafe-url": None})
        request = Request("https://example.com/b")
        self.assertIsInstance(mw.policy(_page(**{"Referrer-Policy": "python"}), request),
                              PythonOrgPolicy)
        with self.assertWarnsRegex(RuntimeWarning, "'unsafe-url'"):
            mw.policy(_page(**{"Referrer-Policy": "unsafe-url"}), request)

    def test_async_output(self):
        """process_spider_output_async sets Referer on what an async iterable yields."""
        mw = self.middleware(REFERRER_POLICY="origin")

        async def results():
            yield Request("https://example.com/b")
            yield {"item": 1}

        async def collect():
            return [each async for each in mw.process_spider_output_async(
                _page("https://example.com/a?q"), results())]

        out = self.successResultOf(defer.ensureDeferred(collect()))
        self.assertEqual(out[0].headers.get("Referer"), b"https://example.com/")
        self.assertEqual(out[1], {"item": 1})

    def test_no_settings_is_deprecated(self):
        """RefererMiddleware() warns (Scrapy's deprecation) and uses the default policy."""
        from tinyscrapy.exceptions import ScrapyDeprecationWarning
        with self.assertWarnsRegex(ScrapyDeprecationWarning, "without a 'settings'"):
            mw = RefererMiddleware()
        self.assertEqual(mw.default_policy.name, "scrapy-default")


class RefererPoliciesCrawlTests(unittest.TestCase):
    """REFERRER_POLICIES in a real crawl."""

    def setUp(self):
        self.server = serve(self)
        self.server.add("/echo", Echo())

    @defer.inlineCallbacks
    def test_header_names_a_project_policy(self):
        """A page's Referrer-Policy header may name a policy REFERRER_POLICIES added."""
        start = self.server.add_page("/page", links=["/echo"],
                                     headers={"Referrer-Policy": "python"})
        yield crawl(Recorder, {"REFERRER_POLICIES": {"python": PythonOrgPolicy}},
                    start_urls=[start], follow=True)
        seen, = [r.headers.get("referer") for r in self.server.requests if r.path == "/echo"]
        self.assertEqual(seen, "https://python.org/")

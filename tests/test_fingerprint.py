"""
Unit tests of canonical URLs and fingerprints: the fast path agrees with w3lib, ten
spellings of one page make one fingerprint, and nothing raises.
"""

import random

from twisted.internet import defer
from twisted.trial import unittest
from w3lib.url import canonicalize_url

from tinyscrapy.dupefilters import SeenUrls
from tinyscrapy.http import Request
from tinyscrapy.statscollectors import StatsCollector
from tinyscrapy.utils.request import fingerprint, request_fingerprint, url_fingerprint
from tinyscrapy.utils.url import _PLAIN_URL, _drop_default_port, canonical_url, url_origin

from .helpers import serve

TEN_SPELLINGS = [
    "http://example.com/a/b?x=1&y=2",
    "HTTP://EXAMPLE.COM/a/b?x=1&y=2",            # scheme and host case
    "http://example.com:80/a/b?x=1&y=2",          # default port
    "http://example.com/a/b?y=2&x=1",             # query order
    "http://example.com/a/b?x=1&y=2#reviews",     # fragment
    "http://example.com/a/%62?x=1&y=2",           # an escaped unreserved character
    "http://example.com/%61/b?%78=1&y=%32",       # more of them, in the query too
    "http://example.com/a/./c/../b?x=1&y=2",      # dot segments
    "http://example.com/a/b?x=1&&y=2&",           # empty query parts
    "http://Example.com:0080/a/b?y=2&x=1#",       # all at once
]


def _generated_urls(count, seed=1):
    """Random URLs built from pieces that exercise both paths."""
    rng = random.Random(seed)
    schemes = ["http", "https", "HTTP", "Https"]
    hosts = ["h", "Example.COM", "a-b.c0m", "127.0.0.1", "[::1]", "xn--bcher-kva.example"]
    ports = ["", ":80", ":8080", ":443", ":", ":0080"]
    segments = ["a", "B", "~u", "a.b", "a!b", "a'b", "(x)", "*", "a+b", "a,b", "a;b", "a=b",
                ":x", "@y", "&z", "$", "", ".x", "..", ".", "%7e", "%41", "%2F", "%zz", "é",
                "a b", "%C3%A9", "a%20b"]
    queries = ["", "?", "?a=1", "?b=2&a=1", "?a", "?a=&b", "?&", "?a=1&&b=2", "?x=y=z",
               "?_=1&-=2", "?a=1&a=0", "?A=1&a=1", "?=v", "?q=a+b", "?q=a%20b", "?q=%7E",
               "?q=é", "?a=%3D", "?a/b=c?d"]
    fragments = ["", "#", "#f", "#a?b"]
    for _ in range(count):
        url = rng.choice(schemes) + "://" + rng.choice(hosts) + rng.choice(ports)
        if rng.random() < 0.9:
            url += "/" + "/".join(rng.choice(segments) for _ in range(rng.randint(0, 3)))
        yield url + rng.choice(queries) + rng.choice(fragments)


class CanonicalUrlTests(unittest.TestCase):
    """canonical_url: w3lib's answer, without default ports, fast when it can be."""

    def test_fast_path_agrees_with_w3lib(self):
        """On 20,000 generated URLs, canonical_url equals w3lib's canonicalize_url minus
        the default port."""
        compared = fast = 0
        for url in _generated_urls(20000):
            try:
                expected = _drop_default_port(canonicalize_url(url))
            except ValueError:
                continue
            compared += 1
            fast += _PLAIN_URL.match(url) is not None
            self.assertEqual(canonical_url(url), expected, url)
        self.assertGreater(compared, 15000)
        self.assertGreater(fast, 5000)  # the fast path is really taken

    def test_ten_spellings_one_url(self):
        """Case, default port, query order, fragment, escapes, dot segments: one URL."""
        canonical = {canonical_url(url) for url in TEN_SPELLINGS}
        self.assertEqual(canonical, {"http://example.com/a/b?x=1&y=2"})

    def test_ten_spellings_one_fingerprint(self):
        """Their requests have one fingerprint, a 64-bit int."""
        fingerprints = {request_fingerprint(Request(url)) for url in TEN_SPELLINGS}
        self.assertEqual(len(fingerprints), 1)
        fingerprint = fingerprints.pop()
        self.assertIsInstance(fingerprint, int)
        self.assertLess(fingerprint, 2 ** 64)

    def test_different_pages_differ(self):
        """Path case, another port, another value, the method and the body all count."""
        base = url_fingerprint("http://example.com/a?x=1")
        for other in ("http://example.com/A?x=1", "http://example.com:8080/a?x=1",
                      "http://example.com/a?x=2", "https://example.com/a?x=1",
                      "http://example.com/a/?x=1"):
            self.assertNotEqual(url_fingerprint(other), base, other)
        self.assertNotEqual(url_fingerprint("http://example.com/a?x=1", "POST"), base)
        self.assertNotEqual(url_fingerprint("http://example.com/a?x=1", body=b"b"), base)

    def test_fields_cannot_run_into_each_other(self):
        """GET /foo and GET /f with the body oo, or a method spilling into the URL: each
        its own fingerprint (the hashed bytes carry each field's length)."""
        self.assertNotEqual(url_fingerprint("http://h/foo"),
                            url_fingerprint("http://h/f", "GET", b"oo"))
        self.assertNotEqual(url_fingerprint("http://h/a", "GET", b"b=1"),
                            url_fingerprint("http://h/a?b=1"))
        self.assertNotEqual(request_fingerprint(Request("http://h/foo")),
                            request_fingerprint(Request("http://h/f", body=b"oo")))

    def test_scrapy_fingerprint_options(self):
        """fingerprint(): bytes; include_headers and keep_fragments tell requests apart."""
        first, second = Request("http://h/a#x"), Request("http://h/a#y")
        self.assertEqual(fingerprint(first), fingerprint(second))
        self.assertIsInstance(fingerprint(first), bytes)
        self.assertNotEqual(fingerprint(first, keep_fragments=True),
                            fingerprint(second, keep_fragments=True))
        english = Request("http://h/", headers={"Accept-Language": "en"})
        french = Request("http://h/", headers={"accept-language": "fr"})
        self.assertEqual(fingerprint(english), fingerprint(french))
        self.assertNotEqual(fingerprint(english, include_headers=["Accept-Language"]),
                            fingerprint(french, include_headers=["ACCEPT-LANGUAGE"]))

    def test_verbatim_url_is_its_own_identity(self):
        """meta verbatim_url: the URL as written, fragment and query order included."""
        def verbatim(url):
            return Request(url, meta={"verbatim_url": True})

        self.assertNotEqual(request_fingerprint(verbatim("http://h/q?a=1&b=2")),
                            request_fingerprint(verbatim("http://h/q?b=2&a=1")))
        self.assertNotEqual(fingerprint(verbatim("http://h/t#f")), fingerprint(verbatim("http://h/t")))
        self.assertEqual(fingerprint(verbatim("http://h/t#f"), keep_fragments=True),
                         fingerprint(verbatim("http://h/t#f")))
        self.assertEqual(request_fingerprint(Request("http://h/q?a=1&b=2")),
                         request_fingerprint(Request("http://h/q?b=2&a=1")))

    def test_default_ports(self):
        """:80 goes for http and :443 for https, but not the other way round."""
        self.assertEqual(canonical_url("https://h:443/x"), "https://h/x")
        self.assertEqual(canonical_url("https://h:80/x"), "https://h:80/x")
        self.assertEqual(canonical_url("http://h:443/x"), "http://h:443/x")
        self.assertEqual(canonical_url("http://user:pw@h:80/x%20"), "http://user:pw@h/x%20")
        self.assertEqual(canonical_url("http://[::1]:80/%7e"), "http://[::1]/~")

    def test_never_raises(self):
        """A bad port, a broken IPv6 host or a lone surrogate give a string back."""
        for url in ("http://h:99999/x#f", "http://h:x/é", "http://[bad/", "http://h/\ud800"):
            self.assertIsInstance(canonical_url(url), str)
            self.assertIsInstance(url_fingerprint(url), int)
        self.assertEqual(canonical_url("http://h:99999/x#f"), "http://h:99999/x")


class UrlOriginTests(unittest.TestCase):
    """url_origin: the scheme, host and port a robots.txt belongs to."""

    def test_origins(self):
        """Lower case, no credentials, no default port; None without a host."""
        self.assertEqual(url_origin("HTTP://User@Example.COM:80/x?y"), "http://example.com")
        self.assertEqual(url_origin("https://h:8443/"), "https://h:8443")
        self.assertEqual(url_origin("http://h:443/"), "http://h:443")
        self.assertIsNone(url_origin("mailto:a@b"))
        self.assertIsNone(url_origin("http:///x"))


class SeenUrlsTests(unittest.TestCase):
    """The early duplicate check follow_all uses."""

    def test_skips_seen_and_repeated(self):
        """Seen fingerprints and repeats on the page are skipped and counted."""
        stats = StatsCollector()
        seen = {url_fingerprint("http://h/seen")}
        check = SeenUrls(seen, stats)
        kept = check.unseen(["http://h/seen", "http://h/new", "http://H/new#x",
                             "http://h:80/seen", "http://h/other"])
        self.assertEqual(kept, ["http://h/new", "http://h/other"])
        self.assertEqual(stats.get_value("dupefilter/skipped_early"), 3)
        self.assertEqual(seen, {url_fingerprint("http://h/seen")})  # read, never written

    def test_only_for_the_default_fingerprint(self):
        """A scheduler with its own fingerprint function or no local set gets no check."""
        from tinyscrapy.core.scheduler import Scheduler

        self.assertIsNotNone(SeenUrls.of(Scheduler(), StatsCollector()))
        self.assertIsNone(SeenUrls.of(Scheduler(fingerprint=repr), StatsCollector()))
        self.assertIsNone(SeenUrls.of(object(), StatsCollector()))


class FingerprintCrawlTests(unittest.TestCase):
    """Requests that differ only in how URL and body split are both fetched."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_url_and_body_do_not_collide(self):
        """GET /foo and GET /f with the body oo both reach the server."""
        from tinyscrapy import Spider

        from .helpers import crawl
        foo, f = self.server.add_page("/foo"), self.server.add_page("/f")

        class Pair(Spider):
            name = "pair"

            def start_requests(self):
                yield Request(foo)
                yield Request(f, body=b"oo")

            def parse(self, response):
                pass

        yield crawl(Pair)
        self.assertEqual((self.server.hits["/foo"], self.server.hits["/f"]), (1, 1))

"""
HTTPS: certificates verified by default, a CA bundle to trust, verification off for a
crawl, and policies that never share a connection. The server's certificate is made
at test time (L{tests.servers.make_certificate}).
"""

import treq
from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import Spider
from tinyscrapy.core.downloader.handlers.http11 import HttpFetcher
from tinyscrapy.core.downloader.handlers.pool import CrawlAgent, CrawlPool
from tinyscrapy.core.downloader.tls import https_policy
from tinyscrapy.exceptions import CertificateError, UsageError
from tinyscrapy.settings import Settings

from .fetchutil import failure_of, get, make_fetcher
from .helpers import crawl
from .servers import TlsTestServer


class PagesSpider(Spider):
    """One item per page, no links followed."""

    name = "pages"

    def parse(self, response):
        yield {"url": response.url}


class TlsTests(unittest.TestCase):
    """A self-signed HTTPS server on 127.0.0.1."""

    def setUp(self):
        self.server = TlsTestServer().start()
        self.addCleanup(self.server.stop)
        self.url = self.server.add_page("/", body="secret")

    def bundle(self, pem=None):
        """A CA bundle file holding C{pem} (the server's certificate by default)."""
        path = self.mktemp()
        with open(path, "wb") as f:
            f.write(pem or self.server.certificate_pem)
        return path

    @defer.inlineCallbacks
    def test_self_signed_refused_by_default(self):
        """Verification is on by default: a clear CertificateError, nothing fetched."""
        fetcher = make_fetcher(self)
        failure, _ = yield failure_of(get(fetcher, self.url))
        self.assertIsInstance(failure, CertificateError)
        self.assertIn("certificate verify failed", str(failure))
        self.assertIn("DOWNLOAD_CA_BUNDLE", str(failure))
        self.assertEqual(self.server.requests, [])

    @defer.inlineCallbacks
    def test_refusal_counted_and_logged_in_a_crawl(self):
        """In a crawl the refusal is counted by class name and the crawl ends normally."""
        crawler = yield crawl(PagesSpider, start_urls=[self.url])
        stats = crawler.stats
        self.assertEqual(
            stats.get_value("downloader/exception_type_count/tinyscrapy.exceptions.CertificateError"),
            1)
        self.assertEqual(stats.get_value("finish_reason"), "finished")
        self.assertIsNone(stats.get_value("item_scraped_count"))

    @defer.inlineCallbacks
    def test_ca_bundle_trusts_the_server(self):
        """DOWNLOAD_CA_BUNDLE with the server's certificate: the page is fetched."""
        fetcher = make_fetcher(self, {"DOWNLOAD_CA_BUNDLE": self.bundle()})
        response = yield get(fetcher, self.url)
        self.assertIn(b"secret", response.body)

    @defer.inlineCallbacks
    def test_bundle_does_not_trust_another_host(self):
        """A trusted certificate issued for another name is still refused."""
        other = TlsTestServer(hostname="example.com").start()
        self.addCleanup(other.stop)
        url = other.add_page("/")
        fetcher = make_fetcher(self, {"DOWNLOAD_CA_BUNDLE": self.bundle(other.certificate_pem)})
        failure, _ = yield failure_of(get(fetcher, url))
        self.assertIsInstance(failure, CertificateError)
        self.assertIn("another host", str(failure))

    @defer.inlineCallbacks
    def test_verification_off(self):
        """DOWNLOAD_VERIFY_CERTIFICATES=False accepts the self-signed server."""
        fetcher = make_fetcher(self, {"DOWNLOAD_VERIFY_CERTIFICATES": False})
        response = yield get(fetcher, self.url)
        self.assertIn(b"secret", response.body)

    @defer.inlineCallbacks
    def test_policies_never_share_a_connection(self):
        """Two agents with different policies on one pool: each opens its own connection,
        though each one reuses its own."""
        pool = CrawlPool(reactor)
        self.addCleanup(pool.closeCachedConnections)
        trusting = Settings({"DOWNLOAD_VERIFY_CERTIFICATES": False})
        bundled = Settings({"DOWNLOAD_CA_BUNDLE": self.bundle()})
        agents = [CrawlAgent(reactor, pool, https_policy(s), label)
                  for s, label in [(trusting, "unverified"), (bundled, "bundle")]]
        for agent in agents * 2:
            response = yield agent.request(b"GET", self.url.encode())
            yield treq.content(response)
        self.assertEqual(self.server.connections, 2)
        self.assertEqual(len(self.server.requests), 4)

    @defer.inlineCallbacks
    def test_separate_fetchers_separate_connections(self):
        """Two crawls (fetchers) with different policies: two connections."""
        unverified = make_fetcher(self, {"DOWNLOAD_VERIFY_CERTIFICATES": False})
        bundled = make_fetcher(self, {"DOWNLOAD_CA_BUNDLE": self.bundle()})
        for fetcher in (unverified, bundled, unverified, bundled):
            yield get(fetcher, self.url)
        self.assertEqual(self.server.connections, 2)

    def test_bad_bundle_is_a_usage_error(self):
        """A missing or empty bundle stops the start with one clear line."""
        with self.assertRaises(UsageError):
            HttpFetcher(reactor, Settings({"DOWNLOAD_CA_BUNDLE": self.mktemp()}))
        empty = self.bundle(b"not a certificate")
        with self.assertRaises(UsageError):
            HttpFetcher(reactor, Settings({"DOWNLOAD_CA_BUNDLE": empty}))


class TlsVersionTests(unittest.TestCase):
    """DOWNLOAD_TLS_MIN_VERSION and DOWNLOAD_TLS_MAX_VERSION against a server that goes no
    higher than TLS 1.2."""

    def setUp(self):
        from twisted.internet.ssl import TLSVersion
        self.server = TlsTestServer(max_version=TLSVersion.TLSv1_2).start()
        self.addCleanup(self.server.stop)
        self.url = self.server.add_page("/", body="secret")

    @defer.inlineCallbacks
    def test_minimum_above_the_server_fails_the_handshake(self):
        """A crawl that wants TLS 1.3 fails the handshake with a TLS 1.2 server (TlsError,
        nothing fetched); one whose maximum is TLS 1.2 gets the page."""
        from tinyscrapy.exceptions import TlsError
        fetcher = make_fetcher(self, {"DOWNLOAD_VERIFY_CERTIFICATES": False,
                                      "DOWNLOAD_TLS_MIN_VERSION": "TLSv1.3"})
        failure, _ = yield failure_of(get(fetcher, self.url))
        self.assertIsInstance(failure, TlsError)
        self.assertEqual(self.server.requests, [])
        fetcher = make_fetcher(self, {"DOWNLOAD_VERIFY_CERTIFICATES": False,
                                      "DOWNLOAD_TLS_MAX_VERSION": "TLSv1.2"})
        response = yield get(fetcher, self.url)
        self.assertIn(b"secret", response.body)

    @defer.inlineCallbacks
    def test_verified_between_versions(self):
        """Verification on, with a bundle and version bounds: the page, checked."""
        path = self.mktemp()
        with open(path, "wb") as f:
            f.write(self.server.certificate_pem)
        fetcher = make_fetcher(self, {"DOWNLOAD_CA_BUNDLE": path,
                                      "DOWNLOAD_TLS_MIN_VERSION": "TLSv1.2"})
        response = yield get(fetcher, self.url)
        self.assertIn(b"secret", response.body)

    def test_bad_versions_are_usage_errors(self):
        """A version name that is not one, or a minimum above the maximum: one line."""
        for settings in ({"DOWNLOAD_TLS_MIN_VERSION": "TLS1.2"},
                         {"DOWNLOAD_TLS_MIN_VERSION": "TLSv1.3",
                          "DOWNLOAD_TLS_MAX_VERSION": "TLSv1.2"}):
            with self.assertRaises(UsageError):
                https_policy(Settings(settings))

    def test_context_factories_deprecated(self):
        """Scrapy's context factories are there, each warning that it is deprecated."""
        from tinyscrapy.core.downloader import contextfactory
        from tinyscrapy.exceptions import ScrapyDeprecationWarning
        policy = contextfactory.ScrapyClientContextFactory()
        self.assertIsNotNone(policy.creatorForNetloc(b"127.0.0.1", 443))
        contextfactory.BrowserLikeContextFactory()
        contextfactory.load_context_factory_from_settings(Settings(), None)
        warned = [w for w in self.flushWarnings()
                  if w["category"] is ScrapyDeprecationWarning]
        self.assertEqual(len(warned), 3)


"""
Proxies: http through a forward proxy, https through a CONNECT tunnel, the environment's
proxies, and credentials that reach the proxy and never the site.
"""

import base64
import json
import os

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import Request, signals
from tinyscrapy.core.downloader.handlers.http11 import HttpFetcher
from tinyscrapy.downloadermiddlewares.httpproxy import HttpProxyMiddleware
from tinyscrapy.exceptions import CertificateError, TunnelError
from tinyscrapy.settings import Settings

from .helpers import crawl, serve
from .proxies import ConnectProxy, ForwardProxy, TLSTestServer
from .recording import Recorder
from .servers import Echo

BASIC = "Basic " + base64.b64encode(b"user:pass").decode()


def set_environment(test, **values):
    """Set environment variables for one test (None removes one); restored in cleanup."""
    saved = {name: os.environ.get(name) for name in values}
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    test.addCleanup(_restore, saved)


def _restore(saved):
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


class TrustingRecorder(Recorder):
    """A L{Recorder} whose fetcher trusts C{tls_policy} for sites reached through tunnels."""

    tls_policy = None

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.trust, signals.engine_started)
        return spider

    def trust(self, spider):
        self.crawler.engine.downloader.fetcher.proxies.tls_policy = self.tls_policy


class ForwardProxyTests(unittest.TestCase):
    """http URLs through twisted.web's forward proxy."""

    def setUp(self):
        no_proxy = {name: None for name in ("http_proxy", "https_proxy", "no_proxy",
                                            "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")}
        set_environment(self, **no_proxy)
        self.server = serve(self)
        self.proxy = ForwardProxy()
        self.addCleanup(self.proxy.stop)
        self.echo = self.server.add("/echo", Echo())

    @defer.inlineCallbacks
    def test_meta_proxy_with_credentials(self):
        """meta proxy with user:pass: the proxy gets the absolute URL and the credentials."""

        def make(spider):
            return [Request(self.echo, meta={"proxy": self.proxy.url("user:pass")})]

        crawler = yield crawl(Recorder, make=make)
        seen, = self.proxy.requests
        self.assertEqual(seen.path, self.echo)
        self.assertEqual(seen.headers["proxy-authorization"], BASIC)
        self.assertEqual(self.server.hits["/echo"], 1)
        response, = crawler.spider.responses
        self.assertEqual(response.meta["proxy"], self.proxy.url())  # credentials left it
        self.assertNotIn("proxy-authorization", json.loads(response.body)["headers"])

    @defer.inlineCallbacks
    def test_environment_proxy_and_no_proxy(self):
        """http_proxy sends http URLs through the proxy; no_proxy and meta proxy None don't."""
        set_environment(self, http_proxy=self.proxy.url("user:pass"))
        yield crawl(Recorder, start_urls=[self.echo + "?env"])

        def make(spider):
            return [Request(self.echo + "?none", meta={"proxy": None})]

        yield crawl(Recorder, make=make)
        set_environment(self, no_proxy="example.com, 127.0.0.1")
        yield crawl(Recorder, start_urls=[self.echo + "?bypass"])
        self.assertEqual([r.path for r in self.proxy.requests], [self.echo + "?env"])
        self.assertEqual(self.proxy.requests[0].headers["proxy-authorization"], BASIC)
        self.assertEqual(sorted(self.server.hits), ["/echo?bypass", "/echo?env", "/echo?none"])

    @defer.inlineCallbacks
    def test_proxy_credentials_never_go_direct(self):
        """A Proxy-Authorization header on a request without a proxy is not sent."""

        def make(spider):
            return [Request(self.echo, headers={"Proxy-Authorization": BASIC})]

        yield crawl(Recorder, make=make)
        received, = self.server.requests
        self.assertNotIn("proxy-authorization", received.headers)

    @defer.inlineCallbacks
    def test_disabled(self):
        """HTTPPROXY_ENABLED=False ignores the environment."""
        set_environment(self, http_proxy=self.proxy.url())
        yield crawl(Recorder, {"HTTPPROXY_ENABLED": False}, start_urls=[self.echo])
        self.assertEqual(self.proxy.requests, [])
        self.assertEqual(self.server.hits["/echo"], 1)

    @defer.inlineCallbacks
    def test_bad_proxy_port_names_the_proxy(self):
        """A meta['proxy'] whose port cannot be: the download fails with an error naming
        the proxy (its password hidden) and the URL, and nothing reaches the proxy."""
        fetcher = HttpFetcher(reactor, Settings())
        self.addCleanup(fetcher.close)
        request = Request(self.echo, meta={"proxy": "http://user:pw-secret@127.0.0.1:99999"})
        try:
            yield fetcher.fetch(request)
        except ValueError as e:
            message = str(e)
        else:
            self.fail("the download did not fail")
        self.assertIn("bad proxy http://user:***@127.0.0.1:99999", message)
        self.assertIn(self.echo, message)
        self.assertNotIn("pw-secret", message)


class ProxyAsWrittenTests(unittest.TestCase):
    """meta["proxy"] as written, the auth encoding for the environment's proxies, and
    no_proxy read on each request."""

    def setUp(self):
        no_proxy = {name: None for name in ("http_proxy", "https_proxy", "no_proxy",
                                            "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")}
        set_environment(self, **no_proxy)
        self.server = serve(self)
        self.proxy = ForwardProxy()
        self.addCleanup(self.proxy.stop)
        self.echo = self.server.add("/echo", Echo())

    @defer.inlineCallbacks
    def test_meta_proxy_is_kept_as_written(self):
        """meta proxy "127.0.0.1:PORT" (no scheme) is used and stays as the spider wrote it."""
        written = f"127.0.0.1:{self.proxy.port}"

        def make(spider):
            return [Request(self.echo, meta={"proxy": written})]

        crawler = yield crawl(Recorder, make=make)
        response, = crawler.spider.responses
        self.assertEqual(response.meta["proxy"], written)
        self.assertEqual([r.path for r in self.proxy.requests], [self.echo])

    @defer.inlineCallbacks
    def test_empty_meta_proxy_names_none(self):
        """meta proxy "//" (no host) names no proxy: cleared to None and fetched direct."""
        def make(spider):
            return [Request(self.echo, meta={"proxy": "//"})]

        crawler = yield crawl(Recorder, make=make)
        response, = crawler.spider.responses
        self.assertIsNone(response.meta["proxy"])
        self.assertEqual(self.proxy.requests, [])
        self.assertEqual(self.server.hits["/echo"], 1)

    @defer.inlineCallbacks
    def test_auth_encoding_applies_to_the_environment(self):
        """HTTPPROXY_AUTH_ENCODING=utf-8 encodes the credentials of http_proxy too."""
        url = f"http://us%C3%A9r:p%C3%A1ss@127.0.0.1:{self.proxy.port}"
        set_environment(self, http_proxy=url)
        yield crawl(Recorder, {"HTTPPROXY_AUTH_ENCODING": "utf-8"}, start_urls=[self.echo])
        seen, = self.proxy.requests
        expected = "Basic " + base64.b64encode("usér:páss".encode("utf-8")).decode()
        self.assertEqual(seen.headers["proxy-authorization"], expected)

    @defer.inlineCallbacks
    def test_no_proxy_is_read_on_each_request(self):
        """no_proxy set during the crawl sends the next request direct."""
        set_environment(self, http_proxy=self.proxy.url())
        test = self

        class Changer(Recorder):
            def parse(self, response):
                self.responses.append(response)
                if len(self.responses) == 1:
                    os.environ["no_proxy"] = "127.0.0.1"
                    yield Request(test.echo + "?after", errback=self.errback)

        yield crawl(Changer, start_urls=[self.echo + "?before"])
        self.assertEqual([r.path for r in self.proxy.requests], [self.echo + "?before"])
        self.assertEqual(sorted(self.server.hits), ["/echo?after", "/echo?before"])


class ConnectTunnelTests(unittest.TestCase):
    """https URLs through a CONNECT proxy."""

    def setUp(self):
        self.site = TLSTestServer().start()
        self.addCleanup(self.site.stop)
        self.echo = self.site.add("/echo", Echo())

    def fetcher(self):
        fetcher = HttpFetcher(reactor, Settings({"DOWNLOAD_TIMEOUT": 10}))
        fetcher.proxies.tls_policy = self.site.trust()
        self.addCleanup(fetcher.close)
        return fetcher

    @defer.inlineCallbacks
    def test_credentials_go_to_the_proxy_only(self):
        """CONNECT carries Proxy-Authorization; the site, over TLS, never sees it."""
        proxy = ConnectProxy(auth=BASIC)
        self.addCleanup(proxy.stop)
        request = Request(self.echo, headers={"Proxy-Authorization": BASIC},
                          meta={"proxy": proxy.url()})
        response = yield self.fetcher().fetch(request)
        self.assertEqual(response.status, 200)
        connect, = proxy.requests
        self.assertEqual((connect.method, connect.path), ("CONNECT", f"127.0.0.1:{self.site.port}"))
        self.assertEqual(connect.headers["proxy-authorization"], BASIC)
        received, = self.site.requests
        self.assertEqual(received.path, "/echo")  # origin form, inside the tunnel
        self.assertNotIn("proxy-authorization", received.headers)

    @defer.inlineCallbacks
    def test_crawl_through_the_tunnel(self):
        """A crawl with credentials in meta proxy fetches https pages through the tunnel."""
        proxy = ConnectProxy(auth=BASIC)
        self.addCleanup(proxy.stop)
        self.site.add_page("/", links=["/echo"])

        def make(spider):
            return [Request(self.site.url("/"), meta={"proxy": proxy.url("user:pass")})]

        crawler = yield crawl(TrustingRecorder, make=make, tls_policy=self.site.trust())
        self.assertEqual([r.status for r in crawler.spider.responses], [200])
        self.assertEqual(len(proxy.requests), 1)
        self.assertNotIn("proxy-authorization", self.site.requests[0].headers)

    @defer.inlineCallbacks
    def test_refused_tunnel(self):
        """Wrong credentials: a TunnelError with the 407, not retried, nothing reaches the site."""
        proxy = ConnectProxy(auth=BASIC)
        self.addCleanup(proxy.stop)

        def make(spider):
            return [Request(self.echo, meta={"proxy": proxy.url("user:wrong")},
                            errback=spider.errback)]

        crawler = yield crawl(TrustingRecorder, make=make, tls_policy=self.site.trust())
        failure, = crawler.spider.failures
        self.assertTrue(failure.check(TunnelError))
        self.assertEqual(failure.value.status, 407)
        self.assertEqual(len(proxy.requests), 1)
        self.assertEqual(self.site.requests, [])

    @defer.inlineCallbacks
    def test_untrusted_certificate_fails(self):
        """Through a tunnel the site's certificate is still checked."""
        proxy = ConnectProxy()
        self.addCleanup(proxy.stop)
        fetcher = self.fetcher()
        other = TLSTestServer().start()
        self.addCleanup(other.stop)
        fetcher.proxies.tls_policy = other.trust()  # trusts another certificate only
        request = Request(self.echo, meta={"proxy": proxy.url()})
        try:
            yield fetcher.fetch(request)
        except CertificateError as e:
            self.assertIn("certificate verify failed", str(e))
        else:
            self.fail("an untrusted certificate was accepted")
        self.assertEqual(self.site.requests, [])


    @defer.inlineCallbacks
    def test_untrusted_certificate_in_a_crawl_is_not_retried(self):
        """A certificate that fails verification reaches the errback at the first try."""
        proxy = ConnectProxy()
        self.addCleanup(proxy.stop)
        other = TLSTestServer().start()
        self.addCleanup(other.stop)

        def make(spider):
            return [Request(self.echo, meta={"proxy": proxy.url()}, errback=spider.errback)]

        crawler = yield crawl(TrustingRecorder, make=make, tls_policy=other.trust())
        failure, = crawler.spider.failures
        self.assertTrue(failure.check(CertificateError))
        self.assertEqual(len(proxy.requests), 1)
        self.assertIsNone(crawler.stats.get_value("retry/count"))

    @defer.inlineCallbacks
    def test_silent_proxy_times_out(self):
        """A proxy that never answers CONNECT: the download times out and is retried."""
        proxy = ConnectProxy(silent=True)
        self.addCleanup(proxy.stop)

        def make(spider):
            return [Request(self.echo, meta={"proxy": proxy.url()}, errback=spider.errback)]

        crawler = yield crawl(TrustingRecorder, {"DOWNLOAD_TIMEOUT": 0.2,
                                                 "RETRY_BACKOFF_BASE": 0.01},
                              make=make, tls_policy=self.site.trust())
        self.assertEqual(len(crawler.spider.failures), 1)
        self.assertEqual(len(proxy.requests), 3)
        self.assertEqual(crawler.stats.get_value("retry/max_reached"), 1)
        self.assertEqual(self.site.requests, [])


class ProxyMiddlewareUnitTests(unittest.TestCase):
    """Which proxy a request gets, from meta and from a given environment."""

    def process(self, mw, url, **meta):
        request = Request(url, meta=meta)
        mw.process_request(request, None)
        return request

    def test_environment_by_scheme(self):
        """http_proxy for http URLs, HTTPS_PROXY (upper case) for https, no_proxy respected."""
        mw = HttpProxyMiddleware(environ={"http_proxy": "http://u:p@p1:3128",
                                          "HTTPS_PROXY": "p2:8080", "no_proxy": ".internal"})
        plain = self.process(mw, "http://example.com/")
        self.assertEqual(plain.meta["proxy"], "http://p1:3128")
        self.assertEqual(plain.headers["Proxy-Authorization"],
                         b"Basic " + base64.b64encode(b"u:p"))
        secure = self.process(mw, "https://example.com/")
        self.assertEqual(secure.meta["proxy"], "http://p2:8080")
        self.assertNotIn("Proxy-Authorization", secure.headers)
        self.assertNotIn("proxy", self.process(mw, "http://db.internal/").meta)

    def test_changed_proxy_loses_the_old_credentials(self):
        """A request moved to another proxy does not carry the first proxy's credentials."""
        mw = HttpProxyMiddleware(environ={})
        request = self.process(mw, "http://example.com/", proxy="http://u:p@p1:3128")
        self.assertIn("Proxy-Authorization", request.headers)
        request.meta["proxy"] = "http://p2:3128"
        mw.process_request(request, None)
        self.assertNotIn("Proxy-Authorization", request.headers)
        request.meta["proxy"] = None
        mw.process_request(request, None)
        self.assertNotIn("Proxy-Authorization", request.headers)

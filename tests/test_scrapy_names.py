"""
Scrapy names a ported project relies on: C{BaseRedirectMiddleware} as the base of a
user's own redirect middleware, and C{ContractFail}.
"""

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Spider
from tinyscrapy.downloadermiddlewares.redirect import (
    BaseRedirectMiddleware,
    MetaRefreshMiddleware,
    RedirectMiddleware,
)
from tinyscrapy.exceptions import ContractFail, NotConfigured
from tinyscrapy.utils.test import get_crawler

from .helpers import crawl, serve
from .logs import capture_logs


class HeaderRedirect(BaseRedirectMiddleware):
    """A user's redirect middleware: a 200 with an C{X-Go} header goes there."""

    enabled_setting = "HEADER_REDIRECT_ENABLED"

    def __init__(self, settings):  # Scrapy's constructor: settings only
        super().__init__(settings)

    def process_response(self, request, response, spider=None):
        target = response.headers.get("X-Go")
        if not target:
            return response
        return self._redirect(request, response, response.urljoin(target.decode()), "x-go",
                              to_get=False)


class PagesSpider(Spider):
    name = "pages"

    def parse(self, response):
        yield {"url": response.url}


class BaseRedirectMiddlewareTests(unittest.TestCase):
    """A subclass of BaseRedirectMiddleware in a real crawl."""

    def test_base_of_both(self):
        """Both built-in redirect middlewares are BaseRedirectMiddleware subclasses."""
        self.assertTrue(issubclass(RedirectMiddleware, BaseRedirectMiddleware))
        self.assertTrue(issubclass(MetaRefreshMiddleware, BaseRedirectMiddleware))

    @defer.inlineCallbacks
    def test_user_subclass_redirects(self):
        """The hop is fetched once, with a Referer, and counted in redirect/count."""
        server = serve(self)
        start = server.add_page("/", headers={"X-Go": "/there"})
        server.add_page("/there")
        capture_logs(self)
        crawler = yield crawl(PagesSpider, {
            "HEADER_REDIRECT_ENABLED": True,
            "DOWNLOADER_MIDDLEWARES": {HeaderRedirect: 650}}, start_urls=[start])
        there = [r for r in server.requests if r.path == "/there"]
        self.assertEqual(len(there), 1)
        self.assertEqual(there[0].headers.get("referer"), start)
        self.assertEqual(crawler.stats.get_value("redirect/count"), 1)
        self.assertEqual(crawler.stats.get_value("redirect/reason_count/x-go"), 1)

    def test_enabled_setting(self):
        """Off by its own enabled_setting: NotConfigured, as in Scrapy."""
        crawler = get_crawler(settings_dict={"HEADER_REDIRECT_ENABLED": False})
        with self.assertRaises(NotConfigured):
            HeaderRedirect.from_crawler(crawler)


class ContractFailTests(unittest.TestCase):
    """Scrapy's ContractFail."""

    def test_is_an_assertion_error(self):
        """ContractFail is an AssertionError, so a contract's assert-style check fits."""
        self.assertTrue(issubclass(ContractFail, AssertionError))
        with self.assertRaises(AssertionError):
            raise ContractFail("expected 1 item")


class ScrapyHelperNamesTests(unittest.TestCase):
    """Helpers that Scrapy projects, plugins and Scrapy's own test servers import."""

    def test_dummy_spider_loader(self):
        """DummySpiderLoader finds no spider and says so with a KeyError."""
        from tinyscrapy.settings import Settings
        from tinyscrapy.spiderloader import DummySpiderLoader
        loader = DummySpiderLoader.from_settings(Settings())
        self.assertEqual(loader.list(), [])
        self.assertEqual(loader.find_by_request(None), [])
        self.assertRaises(KeyError, loader.load, "anything")

    def test_responsetypes(self):
        """responsetypes answers each clue as Scrapy's does."""
        from tinyscrapy.http import Headers, HtmlResponse, JsonResponse, Response, XmlResponse
        from tinyscrapy.responsetypes import responsetypes
        self.assertIs(responsetypes.from_mimetype("text/html"), HtmlResponse)
        self.assertIs(responsetypes.from_mimetype("application/octet-stream"), Response)
        self.assertIs(responsetypes.from_content_type(b"application/json; charset=utf-8"),
                      JsonResponse)
        self.assertIs(responsetypes.from_content_type("text/html", b"gzip"), Response)
        self.assertIs(responsetypes.from_content_disposition(
            b'attachment; filename="feed.xml"'), XmlResponse)
        self.assertIs(responsetypes.from_headers(Headers({"Content-Type": "text/html"})),
                      HtmlResponse)
        self.assertIs(responsetypes.from_args(url="http://127.0.0.1/a.json"), JsonResponse)
        self.assertIs(responsetypes.from_args(filename="page.html", body=b"{}"),
                      HtmlResponse)
        self.assertIs(responsetypes.from_body(b"<html><body>hi</body></html>"),
                      HtmlResponse)

    def test_accepted_encodings(self):
        """ACCEPTED_ENCODINGS is what the Accept-Encoding header offers."""
        from tinyscrapy.downloadermiddlewares.httpcompression import (
            ACCEPTED_ENCODINGS,
            accept_encoding,
        )
        self.assertEqual(accept_encoding().encode().split(b", "), ACCEPTED_ENCODINGS)
        self.assertEqual(ACCEPTED_ENCODINGS[:2], [b"gzip", b"deflate"])

    def test_listen_tcp(self):
        """listen_tcp takes the first free port of a range; a bad range is a ValueError."""
        from twisted.internet import protocol, reactor

        from tinyscrapy.utils.reactor import listen_tcp
        factory = protocol.Factory()
        first = listen_tcp([], "127.0.0.1", factory)
        self.addCleanup(first.stopListening)
        taken = first.getHost().port
        # the range starts at the taken port; the next one may be another process's, so the
        # range runs on for a while (a port taken by chance is skipped as this one is)
        second = listen_tcp([taken, taken + 64], "127.0.0.1", factory, reactor=reactor)
        self.addCleanup(second.stopListening)
        self.assertGreater(second.getHost().port, taken)
        self.assertLessEqual(second.getHost().port, taken + 64)
        self.assertRaises(ValueError, listen_tcp, [3, 2], "127.0.0.1", factory)

    def test_tls_version_names(self):
        """Scrapy's TLS version names map to Twisted's; the keywords bound a context."""
        from twisted.internet.ssl import CertificateOptions, TLSVersion

        from tinyscrapy.core.downloader.tls import _TWISTED_VERSION_MAP
        from tinyscrapy.utils.ssl import _get_cert_options_version_kwargs
        self.assertIs(_TWISTED_VERSION_MAP["TLSv1.2"], TLSVersion.TLSv1_2)
        kwargs = _get_cert_options_version_kwargs(TLSVersion.TLSv1_3, None)
        self.assertEqual(kwargs, {"raiseMinimumTo": TLSVersion.TLSv1_3})
        self.assertEqual(_get_cert_options_version_kwargs(None, None), {})
        CertificateOptions(**_get_cert_options_version_kwargs(TLSVersion.TLSv1_2,
                                                             TLSVersion.TLSv1_3))

    def test_python_robot_parser(self):
        """PythonRobotParser reads rules and Crawl-delay with the standard library."""
        from tinyscrapy.robotstxt import PythonRobotParser
        parser = PythonRobotParser.from_crawler(None, b"User-agent: *\nDisallow: /private\n"
                                                      b"Crawl-delay: 2\n")
        self.assertFalse(parser.allowed("http://127.0.0.1/private/page", "bot"))
        self.assertTrue(parser.allowed(b"http://127.0.0.1/open", b"bot"))
        self.assertEqual(parser.crawl_delay("bot"), 2.0)

    def test_runner_base_and_event_loop(self):
        """CrawlerRunnerBase is the runners' base; set_asyncio_event_loop answers the
        current loop, or one of the class asked for."""
        import asyncio

        from tinyscrapy.crawler import CrawlerProcess, CrawlerRunner, CrawlerRunnerBase
        from tinyscrapy.utils.reactor import set_asyncio_event_loop
        self.assertTrue(issubclass(CrawlerRunner, CrawlerRunnerBase))
        self.assertTrue(issubclass(CrawlerProcess, CrawlerRunnerBase))
        loop = set_asyncio_event_loop(None)
        self.assertIs(set_asyncio_event_loop(None), loop)
        self.assertIsInstance(set_asyncio_event_loop("asyncio.SelectorEventLoop"),
                              asyncio.SelectorEventLoop)

    def test_invalid_output_is_the_middleware_error(self):
        """A hook's wrong result raises Scrapy's _InvalidOutput (as MiddlewareError)."""
        from tinyscrapy.core.spidermw import SpiderMiddlewareManager
        from tinyscrapy.exceptions import _InvalidOutput

        class Wrong:
            def process_spider_input(self, response):
                return "not None"

        chain = SpiderMiddlewareManager(Wrong(), crawler=get_crawler(Spider))
        self.assertRaises(_InvalidOutput, chain.process_input, None, None)

    def test_settings_attributes(self):
        """SettingsAttribute keeps a value with its priority; settings.attributes shows
        each setting so."""
        from tinyscrapy.settings import Settings, SettingsAttribute
        attribute = SettingsAttribute("value", 10)
        attribute.set("lower", 5)
        self.assertEqual((attribute.value, attribute.priority), ("value", 10))
        attribute.set("higher", 20)
        self.assertEqual((attribute.value, attribute.priority), ("higher", 20))
        settings = Settings({"DOWNLOAD_DELAY": 2}, priority="cmdline")
        shown = settings.attributes["DOWNLOAD_DELAY"]
        self.assertEqual((shown.value, shown.priority), (2, 40))

    def test_cookie_jar(self):
        """Scrapy's CookieJar keeps a response's cookies and sends them back by path."""
        from tinyscrapy.http import HtmlResponse, Request
        from tinyscrapy.http.cookies import CookieJar
        jar = CookieJar()
        request = Request("http://127.0.0.1/shop/a")
        response = HtmlResponse(request.url, body=b"", request=request,
                                headers={"Set-Cookie": "cart=1; Path=/shop"})
        jar.extract_cookies(response, request)
        self.assertEqual(len(jar), 1)
        inside, outside = Request("http://127.0.0.1/shop/b"), Request("http://127.0.0.1/c")
        jar.add_cookie_header(inside)
        jar.add_cookie_header(outside)
        self.assertEqual(inside.headers.get("Cookie"), b"cart=1")
        self.assertIsNone(outside.headers.get("Cookie"))

    def test_verify_installed_reactor(self):
        """verify_installed_reactor and verify_installed_asyncio_event_loop say when the
        installed reactor (or its loop) is not the one named."""
        from twisted.internet import reactor

        from tinyscrapy.utils.reactor import reactor_path, verify_installed_reactor
        verify_installed_reactor(reactor_path(reactor))
        self.assertRaises(RuntimeError, verify_installed_reactor,
                          "twisted.internet.pollreactor.PollReactor"
                          if "Poll" not in type(reactor).__name__ else
                          "twisted.internet.selectreactor.SelectReactor")

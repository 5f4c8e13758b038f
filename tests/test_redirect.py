"""
Redirects and meta refresh, against real servers: each hop is a new request that passes the
same rules as any other, and what the server saw is the evidence.
"""

import json

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import FormRequest, Request
from tinyscrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from tinyscrapy.exceptions import TooManyRedirects
from tinyscrapy.http import HttpResponse
from tinyscrapy.settings import Settings
from tinyscrapy.spiders import Spider
from tinyscrapy.statscollectors import StatsCollector

from .helpers import crawl, serve
from .recording import Recorder
from .servers import Echo, MetaRefresh, Page, Redirect, Sequence, _Leaf, _respond

REDIRECTING = Spider("redirecting")



def _plain_start(url):
    """A start request without dont_filter (a site crawl's, a CrawlSpider's rule links):
    its URL is remembered, so a hop back to it is a duplicate."""
    def make(spider):
        return [Request(url, errback=spider.errback)]
    return make

class Endless(_Leaf):
    """Redirects C{?i=N} to C{?i=N+1}, for ever."""

    def render(self, request):
        step = int(request.args.get(b"i", [b"0"])[0]) + 1
        return _respond(request, b"", 302, headers={"location": f"?i={step}"})


class RedirectCrawlTests(unittest.TestCase):
    """Whole crawls through redirects."""

    def setUp(self):
        self.server = serve(self)

    def crawl(self, settings=None, **spider_args):
        return crawl(Recorder, settings, **spider_args)

    @defer.inlineCallbacks
    def test_chain_is_followed_and_kept_on_the_response(self):
        """301, 302, 307 and 308 in a row reach the page; the chain is in meta."""
        server = self.server
        start = server.add("/r1", Redirect("/r2", 301))
        server.add("/r2", Redirect(server.url("/r3"), 302))
        server.add("/r3", Redirect("r4", 307))
        server.add("/r4", Redirect("/final", 308))
        server.add_page("/final")
        crawler = yield self.crawl(start_urls=[start])
        spider = crawler.spider
        self.assertEqual([r.url for r in spider.responses], [server.url("/final")])
        meta = spider.responses[0].meta
        self.assertEqual(meta["redirect_urls"], [server.url(p) for p in ("r1", "r2", "r3", "r4")])
        self.assertEqual(meta["redirect_reasons"], [301, 302, 307, 308])
        self.assertEqual(meta["redirect_times"], 4)
        self.assertEqual(dict(server.hits), {"/r1": 1, "/r2": 1, "/r3": 1, "/r4": 1, "/final": 1})
        stats = crawler.stats
        self.assertEqual(stats.get_value("redirect/count"), 4)
        self.assertEqual(stats.get_value("redirect/reason_count/302"), 1)
        self.assertEqual(stats.get_value("ledger/opened"), 1)
        self.assertEqual(stats.get_value("ledger/handled"), 1)
        self.assertEqual(stats.get_value("ledger/missing"), 0)

    def assert_loop_ended(self, crawler, hits):
        """The crawl closed cleanly, each page was fetched once, the hop back was dropped as
        a duplicate (one ledger entry), and the loop was counted."""
        spider, stats = crawler.spider, crawler.stats
        self.assertEqual((spider.responses, spider.failures), ([], []))
        self.assertEqual(dict(self.server.hits), hits)
        self.assertEqual(stats.get_value("finish_reason"), "finished")
        self.assertEqual(stats.get_value("redirect/loop"), 1)
        self.assertEqual(stats.get_value("ledger/opened"), 1)
        self.assertEqual(stats.get_value("ledger/duplicate"), 1)
        self.assertEqual(stats.get_value("dupefilter/filtered"), 1)
        self.assertEqual(stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_loop_ends_at_the_duplicate_filter(self):
        """/a -> /b -> /a: the hop back is returned, as in Scrapy, and the duplicate filter
        drops it: nothing is fetched twice, and the loop is counted and logged once."""
        start = self.server.add("/a", Redirect("/b"))
        self.server.add("/b", Redirect("/a"))
        with self.assertLogs("tinyscrapy.downloadermiddlewares.redirect", "INFO") as logs:
            crawler = yield self.crawl(make=_plain_start(start))
        self.assert_loop_ended(crawler, {"/a": 1, "/b": 1})
        loops = [line for line in logs.output if "Redirect loop" in line]
        self.assertEqual(len(loops), 1)
        self.assertIn(f"{start} -> {self.server.url('/b')} -> {start}", loops[0])

    @defer.inlineCallbacks
    def test_redirect_to_itself_is_a_loop(self):
        """A page redirecting to itself is fetched once."""
        start = self.server.add("/self", Redirect("/self", 301))
        crawler = yield self.crawl(make=_plain_start(start))
        self.assert_loop_ended(crawler, {"/self": 1})

    @defer.inlineCallbacks
    def test_loop_from_a_dont_filter_start_url(self):
        """A dont_filter start URL (Scrapy's default start requests) leaves no trace in the
        seen set, as in Scrapy: the hop back to it is fetched once more, then the hop after
        that is the duplicate. Bounded either way."""
        start = self.server.add("/self", Redirect("/self", 301))
        crawler = yield self.crawl(start_urls=[start])
        self.assertEqual(dict(self.server.hits), {"/self": 2})
        self.assertEqual(crawler.stats.get_value("dupefilter/filtered"), 1)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")

    @defer.inlineCallbacks
    def test_endless_chain_stops_at_max_times(self):
        """A chain of new URLs stops after REDIRECT_MAX_TIMES hops, with TooManyRedirects."""
        start = self.server.add("/endless", Endless())
        crawler = yield self.crawl({"REDIRECT_MAX_TIMES": 3}, start_urls=[start])
        self.assertEqual(len(self.server.requests), 4)  # the first request and 3 hops
        self.assertTrue(crawler.spider.failures[0].check(TooManyRedirects))
        self.assertEqual(crawler.stats.get_value("redirect/max_reached"), 1)
        self.assertEqual(crawler.stats.get_value("ledger/dropped/TooManyRedirects"), 1)

    @defer.inlineCallbacks
    def test_default_max_times_is_twenty(self):
        """Without a setting, 20 hops are followed and the 21st refused."""
        start = self.server.add("/endless", Endless())
        crawler = yield self.crawl(start_urls=[start])
        self.assertEqual(len(self.server.requests), 21)
        self.assertTrue(crawler.spider.failures[0].check(TooManyRedirects))

    @defer.inlineCallbacks
    def test_non_http_targets_are_refused(self):
        """Redirects to file:, data: and ftp: go nowhere: the 3xx goes on, as in Scrapy."""
        paths = {"/file": "file:///etc/passwd", "/data": "data:text/html,<p>hi</p>",
                 "/ftp": "ftp://127.0.0.1/x"}
        for path, target in paths.items():
            self.server.add(path, Redirect(target))
        self.server.add_page("/after")
        crawler = yield self.crawl(start_urls=[self.server.url(p) for p in paths])
        spider = crawler.spider
        self.assertEqual(spider.responses, [])
        self.assertEqual(sorted(self.server.hits), ["/data", "/file", "/ftp"])
        stats = crawler.stats
        self.assertEqual(stats.get_value("redirect/refused_scheme"), 3)
        self.assertEqual(stats.get_value("httperror/response_ignored_status_count/302"), 3)
        self.assertEqual(stats.get_value("ledger/missing"), 0)

        def make(spider):
            return [Request(self.server.url("/file"), meta={"handle_httpstatus_list": [302]},
                            dont_filter=True)]

        crawler = yield self.crawl(make=make)
        response, = crawler.spider.responses
        self.assertEqual(response.status, 302)

    @defer.inlineCallbacks
    def test_offsite_target_is_dropped(self):
        """A redirect to a host outside allowed_domains is never fetched."""
        other = serve(self, "127.0.0.2")
        other.add_page("/page")
        start = self.server.add("/out", Redirect(other.url("/page")))
        crawler = yield self.crawl(start_urls=[start], allowed_domains=["127.0.0.1"])
        self.assertEqual(other.hits["/page"], 0)
        self.assertEqual(crawler.stats.get_value("ledger/dropped/OffsiteRequest"), 1)

    @defer.inlineCallbacks
    def test_target_passes_the_duplicate_filter(self):
        """Two links redirecting to the same page: the page is fetched once."""
        start = self.server.add_page("/", links=["/one", "/two"])
        self.server.add("/one", Redirect("/final"))
        self.server.add("/two", Redirect("/final"))
        self.server.add_page("/final")
        crawler = yield self.crawl(start_urls=[start], follow=True)
        self.assertEqual(self.server.hits["/final"], 1)
        self.assertEqual(crawler.stats.get_value("dupefilter/filtered"), 1)
        self.assertEqual(crawler.stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_303_after_post_becomes_get(self):
        """303 (and 302) after a POST: a GET without body or body headers; 307 keeps POST."""
        server = self.server
        server.add("/form303", Redirect("/echo303", 303))
        server.add("/form302", Redirect("/echo302", 302))
        server.add("/form307", Redirect("/echo307", 307))
        for code in ("303", "302", "307"):
            server.add("/echo" + code, Echo())

        def make(spider):
            return [FormRequest(server.url("/form" + code), formdata={"q": "1"},
                                errback=spider.errback) for code in ("303", "302", "307")]

        crawler = yield self.crawl(make=make)
        echoes = {json.loads(r.body)["path"]: json.loads(r.body)
                  for r in crawler.spider.responses}
        for path in ("/echo303", "/echo302"):
            self.assertEqual(echoes[path]["method"], "GET")
            self.assertEqual(echoes[path]["body"], "")
            self.assertNotIn("content-type", echoes[path]["headers"])
        self.assertEqual(echoes["/echo307"]["method"], "POST")
        self.assertEqual(echoes["/echo307"]["body"], "q=1")

    @defer.inlineCallbacks
    def test_credentials_and_cookies_dropped_when_the_host_changes(self):
        """Authorization and Cookie follow a same-host hop, not a hop to another host."""
        other = serve(self, "127.0.0.2")
        other.add("/echo", Echo())
        self.server.add("/here", Redirect("/echo"))
        self.server.add("/echo", Echo())
        self.server.add("/away", Redirect(other.url("/echo")))
        headers = {"Authorization": "Basic c2VjcmV0", "Cookie": "session=secret"}

        def make(spider):
            return [Request(self.server.url(path), headers=headers, dont_filter=True)
                    for path in ("/here", "/away")]

        yield self.crawl(make=make)
        here = [r for r in self.server.requests if r.path == "/echo"][0]
        self.assertEqual(here.headers["authorization"], "Basic c2VjcmV0")
        self.assertIn("session=secret", here.headers["cookie"])
        away = other.requests[0]
        self.assertNotIn("authorization", away.headers)
        self.assertNotIn("cookie", away.headers)

    @defer.inlineCallbacks
    def test_meta_refresh_is_followed(self):
        """A meta refresh within METAREFRESH_MAXDELAY is a redirect with its reason."""
        start = self.server.add("/refresh", MetaRefresh("/target", delay=1))
        self.server.add_page("/target")
        crawler = yield self.crawl(start_urls=[start])
        response, = crawler.spider.responses
        self.assertEqual(response.url, self.server.url("/target"))
        self.assertEqual(response.meta["redirect_reasons"], ["meta refresh"])
        self.assertEqual(crawler.stats.get_value("redirect/reason_count/meta refresh"), 1)

    @defer.inlineCallbacks
    def test_meta_refresh_too_slow_reaches_the_spider(self):
        """A refresh after METAREFRESH_MAXDELAY or more is a page."""
        slow = self.server.add("/slow", MetaRefresh("/target", delay=100))
        self.server.add_page("/target")
        crawler = yield self.crawl(start_urls=[slow])
        self.assertEqual([r.url for r in crawler.spider.responses], [slow])
        self.assertEqual(self.server.hits["/target"], 0)

    @defer.inlineCallbacks
    def test_meta_refresh_to_itself_is_a_loop(self):
        """A page refreshing to itself is a hop back, as in Scrapy: fetched once, dropped."""
        start = self.server.add("/again", MetaRefresh("/again", delay=0))
        crawler = yield self.crawl(make=_plain_start(start))
        self.assert_loop_ended(crawler, {"/again": 1})

    @defer.inlineCallbacks
    def test_meta_refresh_loop(self):
        """Two pages refreshing to each other: each fetched once, the crawl ends."""
        start = self.server.add("/ping", MetaRefresh("/pong"))
        self.server.add("/pong", MetaRefresh("/ping"))
        crawler = yield self.crawl(make=_plain_start(start))
        self.assert_loop_ended(crawler, {"/ping": 1, "/pong": 1})

    @defer.inlineCallbacks
    def test_dont_redirect_and_handled_status(self):
        """meta dont_redirect, or a status the spider handles, gives the 3xx to the spider."""
        self.server.add("/moved", Redirect("/final", 301))
        self.server.add_page("/final")

        def make(spider):
            return [Request(self.server.url("/moved"), meta={"dont_redirect": True,
                                                             "handle_httpstatus_list": [301]})]

        crawler = yield self.crawl(make=make)
        self.assertEqual([r.status for r in crawler.spider.responses], [301])
        self.assertEqual(self.server.hits["/final"], 0)

    @defer.inlineCallbacks
    def test_redirect_disabled(self):
        """REDIRECT_ENABLED=False: the 302 is refused as an HTTP error."""
        start = self.server.add("/moved", Redirect("/final"))
        self.server.add_page("/final")
        crawler = yield self.crawl({"REDIRECT_ENABLED": False}, start_urls=[start])
        self.assertEqual(self.server.hits["/final"], 0)
        self.assertEqual(
            crawler.stats.get_value("httperror/response_ignored_status_count/302"), 1)

    @defer.inlineCallbacks
    def test_cookie_check_redirect_to_itself(self):
        """A page that sets a cookie and redirects to itself is fetched again, with it."""
        class SetAndRedirect(_Leaf):
            def render(self, request):
                request.addCookie("checked", "1", path="/")
                return _respond(request, b"", 302, headers={"location": "/check"})

        start = self.server.add("/check", Sequence([SetAndRedirect(), Page("<p>ok</p>")]))
        crawler = yield self.crawl(start_urls=[start])
        self.assertEqual(len(crawler.spider.responses), 1)
        second = self.server.requests[1]
        self.assertEqual(second.headers.get("cookie"), "checked=1")


class RedirectUnitTests(unittest.TestCase):
    """The middleware alone."""

    def setUp(self):
        self.stats = StatsCollector()
        self.mw = RedirectMiddleware(Settings(), self.stats)

    def response(self, request, status, location):
        return HttpResponse(request.url, status, {"Location": location}, b"", request)

    def test_hop_keeps_depth_and_raises_priority(self):
        """The hop keeps the request's depth, callback and meta; priority goes up by 2."""
        request = Request("http://a.example/x", depth=3, priority=1, meta={"k": "v"})
        hop = self.mw.process_response(request, self.response(request, 302, "/y"), REDIRECTING)
        self.assertEqual((hop.url, hop.depth, hop.priority), ("http://a.example/y", 3, 3))
        self.assertEqual(hop.meta["k"], "v")
        self.assertFalse(hop.dont_filter)

    def test_redirect_ttl_and_max_redirect_times(self):
        """meta redirect_ttl bounds one chain; max_redirect_times is Scrapy's attribute."""
        request = Request("http://a.example/0", meta={"redirect_ttl": 1})
        hop = self.mw.process_response(request, self.response(request, 302, "/1"), REDIRECTING)
        self.assertEqual(hop.meta["redirect_ttl"], 0)
        with self.assertRaises(TooManyRedirects):
            self.mw.process_response(hop, self.response(hop, 302, "/2"), REDIRECTING)
        self.mw.max_redirect_times = 1
        hop = self.mw.process_response(Request("http://a.example/0"),
                                       self.response(request, 302, "/1"), REDIRECTING)
        with self.assertRaises(TooManyRedirects):
            self.mw.process_response(hop, self.response(hop, 302, "/2"), REDIRECTING)

    def test_missing_location_is_a_response(self):
        """A 302 without Location goes on as a response."""
        request = Request("http://a.example/x")
        response = HttpResponse(request.url, 302, {}, b"", request)
        self.assertIs(self.mw.process_response(request, response, REDIRECTING), response)

    def test_scheme_relative_and_utf8_location(self):
        """//host/path takes the request's scheme; a UTF-8 Location is read back as sent."""
        request = Request("https://a.example/x")
        hop = self.mw.process_response(
            request, self.response(request, 301, b"//b.example/caf\xc3\xa9"), REDIRECTING)
        self.assertEqual(hop.url, "https://b.example/caf%C3%A9")

    def test_hop_to_another_origin_drops_credentials(self):
        """Authorization is dropped on a hop to another host, port or scheme; Cookie on one
        to another host or from https to http (as in Scrapy)."""
        headers = {"Authorization": "Basic eA==", "Cookie": "a=1"}
        cookie_kept = {"http://b.example/": False, "http://a.example:8080/": True,
                       "https://a.example/": True}
        for target, kept in cookie_kept.items():
            request = Request("http://a.example/x", headers=headers)
            hop = self.mw.process_response(request, self.response(request, 302, target),
                                           REDIRECTING)
            self.assertNotIn("Authorization", hop.headers)
            self.assertEqual("Cookie" in hop.headers, kept, target)
        secure = Request("https://a.example/x", headers=headers)
        hop = self.mw.process_response(secure, self.response(secure, 302, "http://a.example/"),
                                       REDIRECTING)
        self.assertNotIn("Cookie", hop.headers)
        hop = self.mw.process_response(request, self.response(request, 302, "/y"), REDIRECTING)
        self.assertEqual(hop.headers["Authorization"], b"Basic eA==")

    def test_unparsable_location_is_a_response(self):
        """A Location that is not a URL: the 3xx goes on (to the HTTP-error rule)."""
        request = Request("http://a.example/x")
        response = self.response(request, 302, "http://[bad/")
        self.assertIs(self.mw.process_response(request, response, REDIRECTING), response)

    def test_referer_follows_the_policy_across_origins(self):
        """https -> http hop drops the Referer under the default policy."""
        request = Request("https://a.example/x", headers={"Referer": "https://a.example/"})
        hop = self.mw.process_response(
            request, self.response(request, 302, "http://b.example/"), REDIRECTING)
        self.assertNotIn("Referer", hop.headers)

    def test_environment_proxy_dropped_when_the_scheme_changes(self):
        """A proxy chosen from the environment for http is chosen again for an https hop."""
        request = Request("http://a.example/x", headers={"Proxy-Authorization": "Basic eA=="},
                          meta={"proxy": "http://p:3128", "_scheme_proxy": True})
        hop = self.mw.process_response(
            request, self.response(request, 302, "https://a.example/x"), REDIRECTING)
        self.assertNotIn("proxy", hop.meta)
        self.assertNotIn("Proxy-Authorization", hop.headers)

    def test_meta_refresh_only_in_html(self):
        """A refresh tag in a text/plain body is not followed."""
        mw = MetaRefreshMiddleware(Settings(), self.stats)
        request = Request("http://a.example/x")
        body = b'<meta http-equiv="refresh" content="0; url=/y">'
        plain = HttpResponse(request.url, 200, {"Content-Type": "text/plain"}, body, request)
        html = HttpResponse(request.url, 200, {"Content-Type": "text/html"}, body, request)
        self.assertIs(mw.process_response(request, plain, REDIRECTING), plain)
        self.assertEqual(mw.process_response(request, html, REDIRECTING).url, "http://a.example/y")
        bad = b'<meta http-equiv="refresh" content="0; url=http://[bad/">'
        broken = HttpResponse(request.url, 200, {"Content-Type": "text/html"}, bad, request)
        self.assertIs(mw.process_response(request, broken, REDIRECTING), broken)
        for spelling in (b"HTTP-EQUIV", b"Http-Equiv", b"http-eQuiv"):
            upper = HttpResponse(request.url, 200, {"Content-Type": "text/html"},
                                 body.replace(b"http-equiv", spelling), request)
            self.assertEqual(mw.process_response(request, upper, REDIRECTING).url,
                             "http://a.example/y", spelling)


class LocationCrawlTests(unittest.TestCase):
    """How a Location header is read, as Scrapy reads it, in whole crawls."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_latin1_location_is_sent_as_its_bytes(self):
        """Location: /a\\xe7\\xe3o (latin-1) is fetched as /a%E7%E3o, not re-encoded as UTF-8."""
        start = self.server.add("/moved", Page(b"", 302, headers={"location": b"/a\xe7\xe3o"}))
        self.server.add_page("/a%E7%E3o")
        crawler = yield crawl(Recorder, start_urls=[start])
        self.assertEqual([r.url for r in crawler.spider.responses],
                         [self.server.url("/a%E7%E3o")])
        self.assertEqual(self.server.hits["/a%E7%E3o"], 1)

    @defer.inlineCallbacks
    def test_fragment_is_carried_to_a_target_without_one(self):
        """/from#part -> /to is requested as /to#part; a target's own fragment wins (the
        responses' URLs have none, as in Scrapy)."""
        self.server.add("/from", Redirect("/to"))
        self.server.add("/other", Redirect("/own#own"))
        self.server.add_page("/to")
        self.server.add_page("/own")

        def make(spider):
            return [Request(self.server.url(path), dont_filter=True)
                    for path in ("/from#part", "/other#part")]

        crawler = yield crawl(Recorder, make=make)
        self.assertEqual(sorted(r.request.url for r in crawler.spider.responses),
                         [self.server.url("/own#own"), self.server.url("/to#part")])
        self.assertEqual(sorted(r.url for r in crawler.spider.responses),
                         [self.server.url("/own"), self.server.url("/to")])

    @defer.inlineCallbacks
    def test_triple_slash_location_names_a_host(self):
        """Location: ///127.0.0.1:PORT/to is http://127.0.0.1:PORT/to, as in Scrapy."""
        target = "///127.0.0.1:%d/to" % self.server.port
        start = self.server.add("/moved", Redirect(target))
        self.server.add_page("/to")
        crawler = yield crawl(Recorder, start_urls=[start])
        self.assertEqual([r.url for r in crawler.spider.responses], [self.server.url("/to")])


class MetaRefreshCrawlTests(unittest.TestCase):
    """Meta refresh edge cases, in whole crawls."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_refresh_to_file_keeps_the_page(self):
        """A refresh to file: is not followed: the page reaches the spider, the target is
        counted."""
        start = self.server.add("/refresh", MetaRefresh("file:///etc/passwd"))
        crawler = yield crawl(Recorder, start_urls=[start])
        self.assertEqual([r.url for r in crawler.spider.responses], [start])
        stats = crawler.stats
        self.assertEqual(stats.get_value("metarefresh/refused_scheme"), 1)
        self.assertEqual(stats.get_value("metarefresh/refused_scheme/file"), 1)
        self.assertEqual(stats.get_value("ledger/dropped/InvalidUrl"), None)

    @defer.inlineCallbacks
    def test_refresh_inside_noscript_is_ignored_by_default(self):
        """A refresh inside <noscript> is not followed (METAREFRESH_IGNORE_TAGS default)."""
        body = ('<html><head><noscript><meta http-equiv="refresh" content="0; url=/to">'
                '</noscript></head><body>page</body></html>')
        start = self.server.add("/page", Page(body))
        self.server.add_page("/to")
        crawler = yield crawl(Recorder, start_urls=[start])
        self.assertEqual([r.url for r in crawler.spider.responses], [start])
        self.assertEqual(self.server.hits["/to"], 0)
        crawler = yield crawl(Recorder, {"METAREFRESH_IGNORE_TAGS": []}, start_urls=[start])
        self.assertEqual([r.url for r in crawler.spider.responses], [self.server.url("/to")])

    @defer.inlineCallbacks
    def test_refresh_at_the_maximum_delay_is_not_followed(self):
        """A refresh of exactly METAREFRESH_MAXDELAY seconds is a page (Scrapy: below it)."""
        start = self.server.add("/slow", MetaRefresh("/to", delay=5))
        self.server.add_page("/to")
        crawler = yield crawl(Recorder, {"METAREFRESH_MAXDELAY": 5}, start_urls=[start])
        self.assertEqual([r.url for r in crawler.spider.responses], [start])
        self.assertEqual(self.server.hits["/to"], 0)

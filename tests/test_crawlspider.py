"""
L{CrawlSpider} and L{Rule}: real crawls of small sites on 127.0.0.1, and the rules'
requests through the C{--jobdir} codec (a paused and resumed crawl is in
C{test_crawlspider_jobdir}).
"""

import logging
from operator import itemgetter

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import CrawlSpider, Request, Rule
from tinyscrapy.dupefilters import SeenUrls
from tinyscrapy.exceptions import UsageError
from tinyscrapy.frontier.codec import request_from_bytes, request_to_bytes
from tinyscrapy.http import HttpResponse
from tinyscrapy.linkextractors.lxmlhtml import LinkExtractor
from tinyscrapy.statscollectors import StatsCollector

from .helpers import crawl, serve
from .logs import capture_logs
from .servers import Page


def _site(server):
    """
    /            -> /cat/a /cat/b /item/1 /item/1 (twice) /item/1#top /login /missing
    /cat/a       -> /item/2 /item/1 /cat/b /
    /cat/b       -> /item/3
    /item/N      -> /related/N (followed only by rules that follow item pages)
    /related/N   -> nothing
    """
    server.add_page("/", links=["/cat/a", "/cat/b", "/item/1", "/item/1", "/item/1#top",
                                "/login", "/missing"], title="home")
    server.add_page("/cat/a", links=["/item/2", "/item/1", "/cat/b", "/"])
    server.add_page("/cat/b", links=["/item/3"])
    for n in (1, 2, 3):
        server.add_page(f"/item/{n}", links=[f"/related/{n}"], title=f"Item {n}")
        server.add_page(f"/related/{n}", title=f"Related {n}")
    server.add_page("/login")
    return server.url("/")


def _title(response):
    return response.css("title::text").get()


def item_function(response, **kwargs):
    """A rule's callback given as a plain function, not a method."""
    return {"title": _title(response), "by": "function", **kwargs}


class Shop(CrawlSpider):
    """Categories are followed, items are parsed; /login is never fetched."""

    name = "shop"
    rules = (
        Rule(LinkExtractor(allow=r"/cat/|/login", deny=r"/login")),  # deny wins
        Rule(LinkExtractor(allow=r"/item/"), callback="parse_item"),
    )

    def parse_item(self, response):
        yield {"title": _title(response), "depth": response.request.depth}


def _titles(crawler):
    return sorted(item["title"] for item in crawler.items)


class Collect:
    """An item pipeline that keeps the items on the crawler (C{crawler.items})."""

    @classmethod
    def from_crawler(cls, crawler):
        pipeline = cls()
        crawler.items = pipeline.items = []
        return pipeline

    def process_item(self, item, spider):
        self.items.append(item)
        return item


SETTINGS = {"ITEM_PIPELINES": {Collect: 100}}


class RuleTests(unittest.TestCase):
    """Rules alone, without a crawl."""

    def test_follow_defaults(self):
        """follow is True without a callback, False with one, as given otherwise."""
        self.assertTrue(Rule().follow)
        self.assertFalse(Rule(callback="parse_item").follow)
        self.assertTrue(Rule(callback="parse_item", follow=True).follow)
        self.assertFalse(Rule(follow=False).follow)

    def test_default_link_extractor(self):
        """A rule without a link extractor has a plain LinkExtractor: every link."""
        self.assertIsInstance(Rule().link_extractor, LinkExtractor)

    def test_unknown_method_name(self):
        """A name the spider has no method for fails when the spider is made, with a
        UsageError naming the rule, the spider and the name."""
        class Broken(CrawlSpider):
            name = "broken"
            rules = (Rule(), Rule(callback="parse", process_links="nope"))
        e = self.assertRaises(UsageError, Broken)
        self.assertEqual(str(e), "rule 1 of spider 'broken': process_links 'nope' is not a "
                                 "method of the spider")

    def test_overriding_parse_warns(self):
        """A CrawlSpider that overrides parse is warned about once, when it is made."""
        logs = capture_logs(self)

        class Overrides(CrawlSpider):
            name = "overrides"

            def parse(self, response):
                return None
        Overrides()
        Shop()
        warnings = logs.messages(logging.WARNING)
        self.assertEqual(len(warnings), 1, warnings)
        self.assertIn("Overrides overrides parse()", warnings[0])

    def test_rules_compiled_per_spider(self):
        """Names are bound to each spider's own methods; the class's Rules are unchanged."""
        first, second = Shop(), Shop()
        self.assertEqual(first._rules[1].callback, first.parse_item)
        self.assertEqual(second._rules[1].callback, second.parse_item)
        self.assertEqual(Shop.rules[1].callback, "parse_item")


class CrawlTests(unittest.TestCase):
    """Real crawls of the small site of L{_site}."""

    timeout = 20

    def setUp(self):
        self.server = serve(self)
        self.start = _site(self.server)

    def _crawl(self, spidercls, **spargs):
        return crawl(spidercls, SETTINGS, start_urls=[self.start], **spargs)

    @defer.inlineCallbacks
    def test_allow_deny_and_callback_by_name(self):
        """Categories followed, items parsed and not followed, /login denied, every page
        fetched once."""
        crawler = yield self._crawl(Shop)
        self.assertEqual(_titles(crawler), ["Item 1", "Item 2", "Item 3"])
        self.assertEqual(set(self.server.hits),
                         {"/", "/cat/a", "/cat/b", "/item/1", "/item/2", "/item/3"})
        self.assertEqual(set(self.server.hits.values()), {1}, self.server.hits)
        self.assertEqual(crawler.stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_follow_links_setting_off(self):
        """CRAWLSPIDER_FOLLOW_LINKS=False: the start page is parsed, no rule follows."""
        class Start(Shop):
            def parse_start_url(self, response):
                return {"title": _title(response)}

        crawler = yield crawl(Start, {**SETTINGS, "CRAWLSPIDER_FOLLOW_LINKS": False},
                              start_urls=[self.start])
        self.assertEqual(_titles(crawler), ["home"])
        self.assertEqual(set(self.server.hits), {"/"})

    @defer.inlineCallbacks
    def test_no_request_for_a_duplicate_link(self):
        """Links repeated on a page or seen before get no Request: nothing reaches the
        duplicate filter, and the ledger opens one entry per page."""
        crawler = yield self._crawl(Shop)
        stats = crawler.stats
        self.assertEqual(stats.get_value("dupefilter/filtered", 0), 0)
        self.assertGreater(stats.get_value("dupefilter/skipped_early", 0), 0)
        self.assertEqual(stats.get_value("ledger/opened"), 6)

    @defer.inlineCallbacks
    def test_callback_callable_and_cb_kwargs(self):
        """A plain function as callback gets the rule's cb_kwargs."""
        class Spider(CrawlSpider):
            name = "function"
            rules = (Rule(LinkExtractor(allow=r"/item/1$"), callback=item_function,
                          cb_kwargs={"shelf": 7}),)
        crawler = yield self._crawl(Spider)
        self.assertEqual(crawler.items, [{"title": "Item 1", "by": "function", "shelf": 7}])

    @defer.inlineCallbacks
    def test_follow_true_with_a_callback(self):
        """follow=True: the rules apply to the item pages too, so /related/N is fetched."""
        class Spider(Shop):
            rules = (
                Rule(LinkExtractor(allow=r"/cat/")),
                Rule(LinkExtractor(allow=r"/item/"), callback="parse_item", follow=True),
                Rule(LinkExtractor(allow=r"/related/"), callback="parse_item", follow=False),
            )
        crawler = yield self._crawl(Spider)
        self.assertEqual(_titles(crawler), ["Item 1", "Item 2", "Item 3",
                                            "Related 1", "Related 2", "Related 3"])
        self.assertEqual(set(self.server.hits.values()), {1}, self.server.hits)

    @defer.inlineCallbacks
    def test_follow_false_without_a_callback(self):
        """A rule with follow=False and no callback fetches its pages and does nothing
        with them."""
        class Spider(Shop):
            rules = (Rule(LinkExtractor(allow=r"/cat/"), follow=False),)
        crawler = yield self._crawl(Spider)
        self.assertEqual(crawler.items, [])
        self.assertEqual(set(self.server.hits), {"/", "/cat/a", "/cat/b"})

    @defer.inlineCallbacks
    def test_first_rule_wins(self):
        """A link two rules extract goes to the first; its process_request dropping it
        does not hand it to the second."""
        class Spider(Shop):
            rules = (
                Rule(LinkExtractor(allow=r"/item/[12]$"), callback="parse_first",
                     process_request="drop_two"),
                Rule(LinkExtractor(allow=r"/item/"), callback="parse_item"),
                Rule(LinkExtractor(allow=r"/cat/")),
            )

            def parse_first(self, response):
                return {"title": _title(response), "rule": "first"}

            def drop_two(self, request, response):
                return None if request.url.endswith("/item/2") else request
        crawler = yield self._crawl(Spider)
        self.assertEqual(sorted((item["title"], item.get("rule")) for item in crawler.items),
                         [("Item 1", "first"), ("Item 3", None)])
        self.assertNotIn("/item/2", self.server.hits)

    @defer.inlineCallbacks
    def test_process_links_and_process_request(self):
        """process_links filters the Links (text included); process_request changes the
        request (a header, its cb_kwargs, passed on to the callback) or drops it."""
        class Spider(CrawlSpider):
            name = "processing"
            rules = (Rule(LinkExtractor(allow=r"/item/|/cat/|/login"), callback="parse_item",
                          cb_kwargs={"rule_kwarg": 1}, follow=True,
                          process_links="not_item_3", process_request=_tag),)

            def not_item_3(self, links):
                self.texts = sorted(link.text for link in links)
                return [link for link in links if not link.url.endswith("/item/3")]

            def parse_item(self, response, rule_kwarg, request_kwarg):
                yield {"title": _title(response), "kwargs": (rule_kwarg, request_kwarg),
                       "header": response.request.headers.get("X-Rule"),
                       "link_text": response.meta["link_text"]}

        crawler = yield self._crawl(Spider)
        items = sorted(crawler.items, key=itemgetter("title"))
        self.assertEqual([item["title"] for item in items],
                         ["/cat/a", "/cat/b", "Item 1", "Item 2"])
        self.assertEqual({item["kwargs"] for item in items}, {(1, "from request")})
        self.assertEqual({item["header"] for item in items}, {b"yes"})
        self.assertEqual(items[2]["link_text"], "/item/1")
        self.assertNotIn("/item/3", self.server.hits)
        self.assertNotIn("/login", self.server.hits)  # dropped by process_request

    @defer.inlineCallbacks
    def test_errback(self):
        """A rule's errback (by name) gets the failure of its requests; its output is
        handled like a callback's."""
        class Spider(CrawlSpider):
            name = "errback"
            rules = (Rule(LinkExtractor(allow=r"/missing|/item/1"), callback="parse_page",
                          errback="failed"),)

            def parse_page(self, response):
                return {"ok": response.url}

            def failed(self, failure):
                yield {"failed": failure.request.url,
                       "status": failure.value.response.status}
        crawler = yield self._crawl(Spider)
        self.assertEqual(sorted(crawler.items, key=str), [
            {"failed": self.server.url("/missing"), "status": 404},
            {"ok": self.server.url("/item/1")}])

    @defer.inlineCallbacks
    def test_parse_start_url(self):
        """parse_start_url's output comes first, then the start page's links are followed."""
        class Spider(Shop):
            def parse_start_url(self, response):
                return {"title": "start: " + _title(response)}
        crawler = yield self._crawl(Spider)
        self.assertEqual(crawler.items[0], {"title": "start: home"})
        self.assertEqual(len(crawler.items), 4)

    @defer.inlineCallbacks
    def test_async_callback(self):
        """An async def rule callback is awaited; following goes on after it."""
        class Spider(Shop):
            rules = (
                Rule(LinkExtractor(allow=r"/cat/|/item/|/related/"), callback="parse_async",
                     follow=True),
            )

            async def parse_async(self, response):
                return [{"title": _title(response)}]
        crawler = yield self._crawl(Spider)
        self.assertEqual(_titles(crawler), ["/cat/a", "/cat/b", "Item 1", "Item 2",
                                            "Item 3", "Related 1", "Related 2", "Related 3"])


    @defer.inlineCallbacks
    def test_link_text_of_links_that_need_encoding(self):
        """A link with a space or a non-ASCII character keeps its text in
        meta["link_text"], and so does one that process_links makes relative."""
        self.server.add_page("/words", links=["/p q.html", "/café.html", "/plain.html"])
        for path in ("/p%20q.html", "/caf%C3%A9.html", "/plain.html", "/rel%20x.html"):
            self.server.add_page(path, title=path)

        class Spider(CrawlSpider):
            name = "texts"
            start_urls = [self.server.url("/words")]
            rules = (Rule(LinkExtractor(allow=r"\.html"), callback="parse_page",
                          process_links="relative"),)

            def relative(self, links):
                for link in links:
                    if link.url.endswith("/plain.html"):
                        link.url = "rel x.html"
                return links

            def parse_page(self, response):
                return {"path": _title(response), "text": response.meta["link_text"]}
        crawler = yield crawl(Spider, SETTINGS)
        self.assertEqual(sorted((item["path"], item["text"]) for item in crawler.items), [
            ("/caf%C3%A9.html", "/café.html"), ("/p%20q.html", "/p q.html"),
            ("/rel%20x.html", "/plain.html")])


    @defer.inlineCallbacks
    def test_rules_follow_links_of_html_pages_only(self):
        """An XML page with <a href> gets its callback (parse_start_url or the rule's),
        but the rules follow no link on it, as Scrapy's follow only HtmlResponse."""
        feed = '<?xml version="1.0"?><feed><a href="/item/1">x</a><a href="/feed2">f</a></feed>'
        self.server.add_page("/home", links=["/feed2"])
        self.server.add("/feed", Page(feed, content_type="application/xml"))
        self.server.add("/feed2", Page(feed.replace("/feed2", "/cat/a"),
                                       content_type="text/xml"))

        class Spider(CrawlSpider):
            name = "xml"
            rules = (Rule(LinkExtractor(allow=r"/feed|/item/|/cat/"), callback="parse_page",
                          follow=True),)

            def parse_start_url(self, response):
                return {"start": response.url}

            def parse_page(self, response):
                return {"page": response.url}
        crawler = yield crawl(Spider, SETTINGS, start_urls=[self.server.url("/feed"),
                                                             self.server.url("/home")])
        self.assertEqual(sorted(map(str, crawler.items)), sorted(map(str, [
            {"start": self.server.url("/feed")}, {"start": self.server.url("/home")},
            {"page": self.server.url("/feed2")}])))
        self.assertEqual(set(self.server.hits), {"/feed", "/home", "/feed2"})


def _tag(request, response):
    """A process_request given as a function: drops /login, changes the others."""
    if request.url.endswith("/login"):
        return None
    request.headers["X-Rule"] = "yes"
    request.cb_kwargs["request_kwarg"] = "from request"
    return request


def _page(body, url="http://example.com/"):
    return HttpResponse(url, 200, {"Content-Type": "text/html"}, body, Request(url))


class RequestsTests(unittest.TestCase):
    """The requests of one page, without a crawl."""

    def test_one_request_per_canonical_url(self):
        """Two spellings of one URL make one request with the crawl's early check (which
        the rule's extractor then leaves to); without it (a page parsed outside a crawl),
        one per spelling, as in Scrapy, and the duplicate filter keeps one."""
        body = b'<a href="/cat/x?a=1&b=2">one</a><a href="/cat/x?b=2&a=1">two</a>'
        spellings = ["http://example.com/cat/x?a=1&b=2", "http://example.com/cat/x?b=2&a=1"]
        for seen, expected in ((None, spellings),
                               (SeenUrls(set(), StatsCollector()), spellings[:1])):
            page = _page(body)
            page._seen = seen
            requests = list(Shop().parse(page))
            self.assertEqual([r.url for r in requests], expected)
            self.assertEqual(requests[0].meta["link_text"], "one")

    def test_round_trip_through_the_codec(self):
        """A rule's request is stored and loaded for another spider, whose callback then
        runs the same rule."""
        spider = Shop()
        requests = list(spider.parse(_page(b'<a href="/item/1">one</a><a href="/cat/a">cat</a>')))
        self.assertEqual([r.url for r in requests],
                         ["http://example.com/cat/a", "http://example.com/item/1"])
        other = Shop()
        loaded = [request_from_bytes(request_to_bytes(r, spider), other) for r in requests]
        self.assertEqual([r.callback for r in loaded], [other._callback] * 2)
        self.assertEqual([r.meta for r in loaded], [{"rule": 0, "link_text": "cat"},
                                                    {"rule": 1, "link_text": "one"}])
        item_page = HttpResponse(loaded[1].url, 200, {"Content-Type": "text/html"},
                                 b"<title>One</title>", loaded[1])
        self.assertEqual(list(loaded[1].callback(item_page, **loaded[1].cb_kwargs)),
                         [{"title": "One", "depth": 1}])

"""
The middleware chains: order, Deferred and C{async def} hooks, answers that skip the
download or replace the request, wrong return types; and real crawls through them.
"""

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial import unittest

from tinyscrapy import IgnoreRequest, Request, Spider
from tinyscrapy.core.downloader.middleware import DownloaderMiddlewareManager
from tinyscrapy.core.spidermw import SpiderMiddlewareManager
from tinyscrapy.http import HttpResponse
from tinyscrapy.middleware import MiddlewareError
from tinyscrapy.utils.test import get_crawler

from .helpers import crawl, make_engine, serve
from .servers import Drop


class Recording:
    """A downloader middleware that logs each hook call as C{(name, hook)}."""

    def __init__(self, name, log):
        self.name = name
        self.log = log

    def process_request(self, request, spider):
        self.log.append((self.name, "request"))

    def process_response(self, request, response, spider):
        self.log.append((self.name, "response"))
        return response

    def process_exception(self, request, exception, spider):
        self.log.append((self.name, "exception"))


def chain_of(*middlewares):
    return DownloaderMiddlewareManager(*middlewares, crawler=get_crawler(Spider),
                                       paths=[f"mw.{i}" for i in range(len(middlewares))])


def ok_fetch(request, spider):
    return defer.succeed(HttpResponse(request.url, 200, {}, b"ok", request))


def failing_fetch(request, spider):
    return defer.fail(ConnectionRefusedError("refused"))


REQUEST = Request("http://127.0.0.1/x")


class DownloaderChainTests(unittest.TestCase):
    """The contract of each downloader hook, one chain at a time."""

    def test_requests_forward_responses_reversed(self):
        """process_request first to last; process_response last to first."""
        log = []
        chain = chain_of(Recording("a", log), Recording("b", log), Recording("c", log))
        response = self.successResultOf(chain.download(REQUEST, None, ok_fetch))
        self.assertEqual(response.body, b"ok")
        self.assertEqual(log, [("a", "request"), ("b", "request"), ("c", "request"),
                               ("c", "response"), ("b", "response"), ("a", "response")])

    def test_download_async_and_added_middleware(self):
        """download_async (Scrapy's form) runs the chain around a coroutine download
        function; a middleware given to _add_middleware later is called too."""
        log = []
        chain = chain_of(Recording("a", log))
        chain._add_middleware(Recording("late", log))

        async def download_func(request):
            return HttpResponse(request.url, 200, {}, b"async", request)

        response = self.successResultOf(defer.ensureDeferred(
            chain.download_async(download_func, REQUEST)))
        self.assertEqual(response.body, b"async")
        self.assertEqual(log, [("a", "request"), ("late", "request"), ("late", "response"),
                               ("a", "response")])
        self.assertEqual(len(chain.methods["process_request"]), 2)

    def test_download_func_returning_none(self):
        """A download function that returns None is a MiddlewareError (Scrapy's
        _InvalidOutput), not a response."""
        from tinyscrapy.exceptions import _InvalidOutput
        chain = chain_of(Recording("a", []))

        async def download_func(request):
            return None

        failure = self.failureResultOf(defer.ensureDeferred(
            chain.download_async(download_func, REQUEST)))
        self.assertTrue(failure.check(_InvalidOutput))

    def test_exceptions_reversed_then_errback(self):
        """process_exception last to first; nobody recovers: the failure goes on."""
        log = []
        chain = chain_of(Recording("a", log), Recording("b", log))
        self.failureResultOf(chain.download(REQUEST, None, failing_fetch),
                             ConnectionRefusedError)
        self.assertEqual(log, [("a", "request"), ("b", "request"),
                               ("b", "exception"), ("a", "exception")])

    def test_deferred_and_async_hooks_are_waited_for(self):
        """A hook returning a Deferred, and an async def hook, hold the chain until done."""
        clock = Clock()
        log = []

        class Later:
            def process_request(self, request, spider):
                d = defer.Deferred()
                clock.callLater(1, d.callback, None)
                log.append("later asked")
                return d

        class Async:
            async def process_response(self, request, response, spider):
                log.append("async response")
                return HttpResponse(response.url, 200, {}, b"changed", request)

        fetched = []

        def fetch(request, spider):
            fetched.append(request)
            return ok_fetch(request, spider)

        d = chain_of(Later(), Async()).download(REQUEST, None, fetch)
        self.assertNoResult(d)
        self.assertEqual((log, fetched), (["later asked"], []))
        clock.advance(1)
        self.assertEqual(self.successResultOf(d).body, b"changed")
        self.assertEqual(log, ["later asked", "async response"])

    def test_response_from_process_request_skips_the_download(self):
        """A response from process_request: later process_request hooks and the download
        are skipped, every process_response still sees it."""
        log = []

        class Cache:
            def process_request(self, request, spider):
                log.append(("cache", "request"))
                return HttpResponse(request.url, 200, {}, b"cached", request)

        def fetch(request, spider):
            raise AssertionError("downloaded")

        chain = chain_of(Recording("a", log), Cache(), Recording("c", log))
        response = self.successResultOf(chain.download(REQUEST, None, fetch))
        self.assertEqual(response.body, b"cached")
        self.assertEqual(log, [("a", "request"), ("cache", "request"),
                               ("c", "response"), ("a", "response")])

    def test_request_from_a_hook_replaces_the_request(self):
        """A Request from process_request or process_response is the chain's answer."""
        new = Request("http://127.0.0.1/new")

        class Rewrite:
            def process_response(self, request, response, spider):
                return new

        log = []
        chain = chain_of(Recording("a", log), Rewrite(), Recording("c", log))
        self.assertIs(self.successResultOf(chain.download(REQUEST, None, ok_fetch)), new)
        # the middlewares before it (nearer the engine) see no response
        self.assertEqual(log, [("a", "request"), ("c", "request"), ("c", "response")])

    def test_exception_recovered_with_a_response(self):
        """A response from process_exception recovers; process_response hooks see it."""
        log = []

        class Recover:
            def process_exception(self, request, exception, spider):
                return HttpResponse(request.url, 200, {}, b"fallback", request)

        chain = chain_of(Recording("a", log), Recover(), Recording("c", log))
        response = self.successResultOf(chain.download(REQUEST, None, failing_fetch))
        self.assertEqual(response.body, b"fallback")
        self.assertEqual(log, [("a", "request"), ("c", "request"), ("c", "exception"),
                               ("c", "response"), ("a", "response")])

    def test_wrong_return_type_names_the_middleware(self):
        """A hook returning a string: MiddlewareError naming path and hook, not offered to
        process_exception (it is a bug, not a download failure)."""
        log = []

        class Wrong:
            def process_request(self, request, spider):
                return "oops"

        chain = chain_of(Recording("a", log), Wrong())
        failure = self.failureResultOf(chain.download(REQUEST, None, ok_fetch),
                                       MiddlewareError)
        self.assertIn("mw.1.process_request must return HttpResponse or Request, got str",
                      str(failure.value))
        self.assertEqual(log, [("a", "request")])

    def test_response_hook_returning_none_is_an_error(self):
        """process_response must return something: None is an error naming the hook."""

        class Forgot:
            def process_response(self, request, response, spider):
                response.flags = "seen"

        failure = self.failureResultOf(chain_of(Forgot()).download(REQUEST, None, ok_fetch),
                                       MiddlewareError)
        self.assertIn("mw.0.process_response", str(failure.value))


class Tag:
    """A spider middleware that tags every item with its name."""

    def __init__(self, name, log):
        self.name = name
        self.log = log

    def process_spider_output(self, response, result, spider):
        self.log.append(self.name)
        for each in result:
            if isinstance(each, dict):
                each.setdefault("tags", []).append(self.name)
            yield each


class SpiderChainTests(unittest.TestCase):
    """process_spider_output wraps the callback's output, nearest the spider first."""

    def test_output_wrapped_nearest_the_spider_first(self):
        """The highest-ordered middleware sees the callback's output first."""
        log = []
        chain = SpiderMiddlewareManager(Tag("low", log), Tag("high", log),
                                        crawler=get_crawler(Spider), paths=["low", "high"])
        output = chain.wrap_output(None, iter([{"n": 1}]), None)
        self.assertEqual(log, [], "nothing runs before the output is iterated")
        self.assertEqual(list(output), [{"n": 1, "tags": ["high", "low"]}])

    def test_deferred_output(self):
        """A process_spider_output returning a Deferred: the chain answers with one."""
        log = []

        class Later:
            def process_spider_output(self, response, result, spider):
                return defer.succeed([each for each in result if each.get("keep")])

        chain = SpiderMiddlewareManager(Tag("tag", log), Later(), crawler=get_crawler(Spider),
                                        paths=["tag", "later"])
        d = chain.wrap_output(None, iter([{"keep": 1}, {"keep": 0}]), None)
        self.assertEqual(list(self.successResultOf(d)), [{"keep": 1, "tags": ["tag"]}])

    def test_async_generator_output(self):
        """An async generator process_spider_output is gathered, then the chain goes on."""

        class AsyncGen:
            async def process_spider_output(self, response, result, spider):
                for each in result:
                    yield {**each, "async": True}

        chain = SpiderMiddlewareManager(AsyncGen(), crawler=get_crawler(Spider),
                                        paths=["agen"])
        d = chain.wrap_output(None, iter([{"n": 1}]), None)
        self.assertEqual(list(self.successResultOf(d)), [{"n": 1, "async": True}])

    def test_wrong_output_type_names_the_middleware(self):
        """Returning None or a single dict raises MiddlewareError naming the hook."""

        class Single:
            def process_spider_output(self, response, result, spider):
                return {"one": "item"}

        chain = SpiderMiddlewareManager(Single(), crawler=get_crawler(Spider),
                                        paths=["mine.Single"])
        error = self.assertRaises(MiddlewareError, chain.wrap_output, None, iter([]), None)
        self.assertIn("mine.Single.process_spider_output must return an iterable, got dict",
                      str(error))


class WithoutSpider:
    """Scrapy 2.13's hooks: no spider argument (and one with an optional spider)."""

    def __init__(self, log):
        self.log = log

    def process_request(self, request):
        self.log.append("request")

    def process_response(self, request, response, spider=None):
        self.log.append(("response", spider))
        return response

    def process_exception(self, request, exception):
        self.log.append("exception")

    def process_spider_output(self, response, result):
        for each in result:
            yield {**each, "seen": True}

    def process_spider_exception(self, response, exception):
        return [{"recovered": type(exception).__name__}]


class SignatureTests(unittest.TestCase):
    """Hooks get the spider only when their signature asks for it, as in Scrapy."""

    def test_downloader_hooks_without_spider(self):
        """process_request(request), process_response(..., spider=None) and
        process_exception(request, exception) are called without the spider."""
        log = []
        chain = chain_of(WithoutSpider(log))
        self.successResultOf(chain.download(REQUEST, "spider", ok_fetch))
        self.failureResultOf(chain.download(REQUEST, "spider", failing_fetch))
        self.assertEqual(log, ["request", ("response", None), "request", "exception"])

    def test_old_hooks_still_get_the_spider(self):
        """A hook whose signature names spider gets it, whatever its position."""
        log = []
        chain = chain_of(Recording("a", log))
        self.successResultOf(chain.download(REQUEST, "spider", ok_fetch))
        self.assertEqual(log, [("a", "request"), ("a", "response")])

    def test_spider_hooks_without_spider(self):
        """process_spider_output(response, result) and process_spider_exception(response,
        exception) are called without the spider."""
        chain = SpiderMiddlewareManager(WithoutSpider([]), crawler=get_crawler(Spider),
                                        paths=["mw"])
        self.assertEqual(list(chain.wrap_output(None, iter([{"n": 1}]), "spider")),
                         [{"n": 1, "seen": True}])
        self.assertEqual(chain.handle_exception(None, KeyError("k"), "spider"),
                         [{"recovered": "KeyError"}])

    def test_takes_spider(self):
        """takes_spider reads a signature: a required spider, or one positional too many."""
        from tinyscrapy.middleware import takes_spider

        def old(item, spider):
            pass

        def new(item):
            pass

        def optional(item, spider=None):
            pass

        def renamed(item, sp):
            pass

        self.assertEqual([takes_spider(f, 1) for f in (old, new, optional, renamed, len)],
                         [True, False, False, True, False])


class PagesSpider(Spider):
    """Starts at C{start}, follows links, one item per page."""

    name = "pages"

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


class AnswerFromCache:
    """Answers /cached itself: the server never sees it."""

    def process_request(self, request, spider):
        if request.url.endswith("/cached"):
            return HttpResponse(request.url, 200, {"Content-Type": "text/html"},
                                b"<html>from the middleware</html>", request)


class MoveOld:
    """Sends /old to /new, as a redirect middleware would (a new Request)."""

    def process_response(self, request, response, spider):
        if request.url.endswith("/old"):
            return request.replace(url=request.url.replace("/old", "/new"))
        return response


class RetryDropped:
    """Retries a failed download once with a new Request, as a retry middleware would."""

    def process_exception(self, request, exception, spider):
        if not request.meta.get("retried"):
            return request.replace(meta={"retried": True}, dont_filter=True)


class KeepOutPrivate:
    """Refuses /private with an IgnoreRequest (as a robots middleware would)."""

    def process_request(self, request, spider):
        if request.url.endswith("/private"):
            raise IgnoreRequest("private")


class DropEvenUrls:
    """A spider middleware that filters the callback's items."""

    def process_spider_output(self, response, result, spider):
        for each in result:
            if isinstance(each, dict) and each["url"].endswith("/a"):
                continue
            yield each


class MiddlewareCrawlTests(unittest.TestCase):
    """Middlewares in a real crawl against a local server."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_answers_redirects_retries_and_refusals(self):
        """A response from a middleware skips the server; a new Request from
        process_response or process_exception continues its parent's ledger entry; an
        IgnoreRequest is a drop, not an error."""
        start = self.server.add_page("/", links=["/cached", "/old", "/flaky", "/private"])
        self.server.add_page("/old")
        self.server.add_page("/new")
        self.server.add("/flaky", Drop())
        crawler = yield crawl(PagesSpider, {"DOWNLOADER_MIDDLEWARES": {
            AnswerFromCache: 100, MoveOld: 200, RetryDropped: 300, KeepOutPrivate: 400,
        }, "RETRY_ENABLED": False}, start=start)
        stats = crawler.stats
        self.assertEqual(self.server.hits["/cached"], 0)
        self.assertEqual(self.server.hits["/new"], 1)
        self.assertEqual(self.server.hits["/flaky"], 2, "tried, then retried once")
        self.assertEqual(self.server.hits["/private"], 0)
        self.assertEqual(stats.get_value("item_scraped_count"), 3)  # /, /cached, /new
        self.assertEqual(crawler.ledger.opened, 5)  # /, /cached, /old, /flaky, /private
        self.assertEqual(stats.get_value("ledger/handled"), 3)
        self.assertEqual(stats.get_value("ledger/failed"), 1)
        self.assertEqual(stats.get_value("ledger/dropped/IgnoreRequest"), 1)
        self.assertEqual(stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_spider_middleware_filters_output(self):
        """A spider middleware's filter applies to a real crawl's items."""
        start = self.server.add_page("/", links=["/a", "/b"])
        self.server.add_page("/a")
        self.server.add_page("/b")
        crawler = yield crawl(PagesSpider, {"SPIDER_MIDDLEWARES": {DropEvenUrls: 10}},
                              start=start)
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 2)  # / and /b

    @defer.inlineCallbacks
    def test_broken_middleware_is_counted_crawl_goes_on(self):
        """A middleware with a wrong return type fails each request, named, counted."""

        class Broken:
            def process_request(self, request, spider):
                return 42

        start = self.server.add_page("/")
        crawler = yield crawl(PagesSpider, {"DOWNLOADER_MIDDLEWARES": {Broken: 1}},
                              start=start)
        self.assertEqual(crawler.stats.get_value("ledger/failed/MiddlewareError"), 1)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")


class GeneratorTimingTests(unittest.TestCase):
    """When a callback's generator runs (docs/extending.md explains it)."""

    def test_generator_runs_after_the_callback_returns_one_item_at_a_time(self):
        """Calling the callback runs none of its body; each item's pipeline finishes
        before the generator is resumed for the next one."""
        events = []
        clock_holder = []

        class SlowPipeline:
            def process_item(self, item, spider):
                events.append(f"pipeline {item['n']}")
                d = defer.Deferred()
                clock_holder[0].callLater(1, d.callback, item)
                return d

        class Gen(Spider):
            name = "gen"

            def start_requests(self):
                yield Request("http://127.0.0.1/")

            def parse(self, response):
                events.append("body starts")
                for n in range(3):
                    events.append(f"yield {n}")
                    yield {"n": n}
                events.append("body ends")

        class WatchCall:
            def process_spider_output(self, response, result, spider):
                events.append("callback returned")
                yield from result

        engine, clock, downloader, crawler = make_engine(
            Gen, {"ITEM_PIPELINES": {SlowPipeline: 1}, "SPIDER_MIDDLEWARES": {WatchCall: 1}})
        clock_holder.append(clock)
        clock.advance(0)
        downloader.answer()
        self.assertEqual(events, ["callback returned", "body starts", "yield 0", "pipeline 0"])
        clock.advance(1)
        self.assertEqual(events[-2:], ["yield 1", "pipeline 1"])
        clock.advance(1)
        clock.advance(1)
        self.assertEqual(events[-1], "body ends")
        clock.advance(0)
        self.assertTrue(engine.start().called)

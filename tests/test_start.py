"""
C{async def start()} beside C{start_requests()}: which one runs, items from the start, the
lazy pull, awaiting inside it, and what a spider that awaits asyncio code is told.
"""

import asyncio
import logging

from twisted.internet import defer, reactor, task
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.settings import Settings

from .helpers import crawl_and_collect as run
from .helpers import make_engine, serve
from .logs import capture_logs


class Pages(Spider):
    """One item per page: its path."""

    name = "pages"
    base = None

    def parse(self, response):
        yield {"page": response.url.rsplit("/", 1)[1]}


class AsyncStart(Pages):
    """An async start that awaits a Deferred between two requests, and yields an item."""

    async def start(self):
        yield Request(self.base + "a")
        await task.deferLater(reactor, 0.01, _nothing)
        yield {"from": "start"}
        yield Request(self.base + "b")


class Both(Pages):
    """Defines both: Scrapy runs start() only."""

    def start_requests(self):
        yield Request(self.base + "old")

    async def start(self):
        yield Request(self.base + "new")


class SyncOnly(Pages):
    """TinyScrapy's start_requests(), with an item among the requests."""

    def start_requests(self):
        yield {"from": "start_requests"}
        yield Request(self.base + "a")


class Broken(Pages):
    """An async start that raises after its first request."""

    async def start(self):
        yield Request(self.base + "a")
        raise ValueError("no more")


class AwaitsAsyncio(Pages):
    """A callback that awaits asyncio code, under the default reactor."""

    async def parse(self, response):
        await asyncio.sleep(0.01)
        return {"page": "never"}


class AddsOne:
    """A Scrapy 2.13 spider middleware: process_start wraps the start, adds a request."""

    async def process_start(self, start):
        async for each in start:
            yield each
        yield Request(AddsOne.extra)


class MarksStart(Pages):
    """Records meta['is_start_request'] of the start page and of the page it follows."""

    def parse(self, response):
        yield {"page": response.url.rsplit("/", 1)[1],
               "start": response.meta.get("is_start_request")}
        if response.url.endswith("/a"):
            yield Request(self.base + "b")


def _nothing():
    return None


class StartTests(unittest.TestCase):
    """start() is driven as Scrapy drives it, against a real server."""

    def setUp(self):
        self.server = serve(self)
        for path in ("a", "b", "old", "new"):
            self.server.add_page("/" + path)
        self.base = self.server.url("/")

    @defer.inlineCallbacks
    def test_async_start_with_await_and_items(self):
        """An async start() that awaits: both requests crawled, its item piped."""
        crawler, items = yield run(AsyncStart, base=self.base)
        self.assertEqual(sorted(self.server.hits), ["/a", "/b"])
        self.assertIn({"from": "start"}, items)
        self.assertEqual(sorted(i.get("page", "") for i in items), ["", "a", "b"])
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 3)

    @defer.inlineCallbacks
    def test_start_wins_over_start_requests(self):
        """A spider with both runs start(), as Scrapy 2.19 does."""
        yield run(Both, base=self.base)
        self.assertEqual(list(self.server.hits), ["/new"])

    @defer.inlineCallbacks
    def test_start_requests_still_drive_and_yield_items(self):
        """Without start(), start_requests() runs; an item it yields is piped."""
        _, items = yield run(SyncOnly, base=self.base)
        self.assertEqual(list(self.server.hits), ["/a"])
        self.assertIn({"from": "start_requests"}, items)

    @defer.inlineCallbacks
    def test_process_start_middleware(self):
        """A middleware's process_start wraps start() and start_requests() alike."""
        AddsOne.extra = self.base + "b"
        middlewares = {"SPIDER_MIDDLEWARES": {AddsOne: 100}}
        yield run(Both, middlewares, base=self.base)
        yield run(SyncOnly, middlewares, base=self.base)
        self.assertEqual(dict(self.server.hits), {"/new": 1, "/b": 2, "/a": 1})

    @defer.inlineCallbacks
    def test_start_requests_are_marked(self):
        """A start request has meta['is_start_request'] True, as Scrapy marks it; others not."""
        _, items = yield run(MarksStart, base=self.base, start_urls=[self.base + "a"])
        self.assertEqual(sorted(items, key=str), [{"page": "a", "start": True},
                                                  {"page": "b", "start": None}])

    @defer.inlineCallbacks
    def test_default_start_reads_start_urls(self):
        """Neither overridden: start_urls are fetched."""
        _, items = yield run(Pages, start_urls=[self.base + "a"])
        self.assertEqual(items, [{"page": "a"}])

    @defer.inlineCallbacks
    def test_start_that_raises_is_counted_and_crawl_goes_on(self):
        """An async start that raises: counted, logged once, what it yielded is crawled."""
        logs = capture_logs(self)
        crawler, items = yield run(Broken, base=self.base)
        self.assertEqual(items, [{"page": "a"}])
        self.assertEqual(crawler.stats.get_value("start_requests/exception"), 1)
        self.assertEqual(len([m for m in logs.messages(logging.ERROR) if "start()" in m]), 1)

    @defer.inlineCallbacks
    def test_awaiting_asyncio_names_the_setting(self):
        """Awaiting asyncio code under the default reactor: one error naming the setting."""
        logs = capture_logs(self)
        crawler, items = yield run(AwaitsAsyncio, start_urls=[self.base + "a"])
        self.assertEqual(items, [])
        self.assertEqual(crawler.stats.get_value("spider_exceptions/AsyncioReactorNeeded"), 1)
        errors = [r for r in logs.records if r.levelno >= logging.ERROR]
        self.assertEqual(len(errors), 1)
        self.assertIn("TWISTED_REACTOR", str(errors[0].exc_info[1]))
        self.assertIn(self.base + "a", errors[0].getMessage())


class ReactorChoiceTests(unittest.TestCase):
    """Which reactor a spider asks for when TWISTED_REACTOR is not set."""

    def test_a_module_that_imports_asyncio_asks_for_it(self):
        """This module imports asyncio: its spiders ask for the asyncio reactor; the
        embedded spiders do not; TWISTED_REACTOR always wins."""
        from tinyscrapy.commands.crawl import SiteCrawler
        from tinyscrapy.utils.reactor import ASYNCIO_REACTOR, wanted_reactor
        self.assertEqual(wanted_reactor(Settings(), AwaitsAsyncio), ASYNCIO_REACTOR)
        self.assertIsNone(wanted_reactor(Settings(), SiteCrawler))
        chosen = Settings({"TWISTED_REACTOR": "twisted.internet.pollreactor.PollReactor"})
        self.assertEqual(wanted_reactor(chosen, AwaitsAsyncio),
                         "twisted.internet.pollreactor.PollReactor")


class LazyStartTests(unittest.TestCase):
    """The engine pulls from start() only as places free up."""

    def test_async_start_is_pulled_lazily(self):
        """An endless async start: never more pulled than the engine can take."""
        pulled = []

        class Endless(Spider):
            name = "endless"

            async def start(self):
                for i in range(10**9):
                    pulled.append(i)
                    yield Request(f"http://127.0.0.1/{i}")

            def parse(self, response):
                return None

        engine, clock, downloader, crawler = make_engine(Endless, {"CONCURRENT_REQUESTS": 2})
        clock.advance(0)
        self.assertEqual(len(downloader.pending), 2)
        self.assertLessEqual(len(pulled), 3)
        downloader.answer()
        clock.advance(0)
        self.assertEqual(len(downloader.pending), 2)
        self.assertLessEqual(len(pulled), 4)

    def test_waiting_start_keeps_the_crawl_open(self):
        """While start() awaits, the crawl neither closes nor spins; it goes on after."""
        gate = defer.Deferred()

        class Waits(Spider):
            name = "waits"

            async def start(self):
                await gate
                yield Request("http://127.0.0.1/late")

            def parse(self, response):
                return None

        engine, clock, downloader, crawler = make_engine(Waits)
        clock.advance(0)
        clock.advance(0)
        self.assertFalse(engine.start().called)
        self.assertEqual([c.getTime() for c in clock.getDelayedCalls()], [5.0])  # heartbeat
        gate.callback(None)
        clock.advance(0)
        self.assertEqual(downloader.fetched, ["http://127.0.0.1/late"])
        downloader.answer()
        clock.advance(0)
        clock.advance(0)
        self.assertEqual(engine.start().result, "finished")

    def test_closing_while_start_awaits(self):
        """A crawl closed while start() awaits closes; what start() yields later is
        dropped."""
        gate = defer.Deferred()

        class Waits(Spider):
            name = "waits"

            async def start(self):
                await gate
                yield Request("http://127.0.0.1/late")

        engine, clock, downloader, _ = make_engine(Waits)
        clock.advance(0)
        engine.close_spider("shutdown")
        clock.advance(0)
        self.assertEqual(engine.start().result, "shutdown")
        gate.callback(None)
        clock.advance(0)
        self.assertFalse(engine.scheduler.has_pending_requests())
        self.assertEqual(downloader.fetched, [])

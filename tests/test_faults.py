"""
The fault matrix: every user hook x every fault, each a real crawl in the test's reactor
against a site on 127.0.0.1.

The site is a home page linking to two plain pages and to the page the fault is about
(C{/hit}). The faults: the hook raises; returns (or awaits, or yields) a Deferred that
errbacks a moment later; returns one that never fires; returns the wrong type. In every
cell the crawl ends, the error is logged once (once in all the records at WARNING and
above, with the URL when it has one), the pages the fault did not touch are all scraped,
the ledger balances, and nothing is left as "Unhandled error in Deferred". A Deferred that
never fires is no error by itself: where the crawl waits for it, the test stops the crawl
(as a signal or C{close_spider} would) once it is reached, and the crawl ends within the
close's grace period, what was in flight counted as cancelled. A component that cannot
start (a failing C{open_spider}, an extension whose C{from_crawler} fails) stops the
start with a L{StartError} naming it.
"""

import gc
import logging

from twisted.internet import defer, reactor
from twisted.python.failure import Failure
from twisted.trial import unittest

from tinyscrapy import Request, Spider, signals
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import StartError, UsageError
from tinyscrapy.settings import Settings

from .helpers import serve, until
from .logs import capture_logs
from .servers import Drop, Status

GRACE = 0.3  # CLOSE_GRACE_PERIOD in the matrix: a stopped crawl ends within 2 x GRACE
FAULTS = ("raises", "errbacks_later", "never_fires", "wrong_type")


class FaultError(Exception):
    """The error a hook raises, or its Deferred fails with."""


class Cell:
    """
    One cell of the matrix: which hook misbehaves, and how.

    @ivar reached: fires once the fault was injected.
    """

    def __init__(self, hook, fault):
        self.hook = hook
        self.fault = fault
        self.marker = f"fault in {hook}: {fault}"
        self.reached = defer.Deferred()

    def _reach(self):
        if not self.reached.called:
            self.reached.callback(None)

    def result(self):
        """What a hook returns: raises, a Deferred (failing later, or never firing), 42."""
        self._reach()
        if self.fault == "raises":
            raise FaultError(self.marker)
        if self.fault == "errbacks_later":
            d = defer.Deferred()
            reactor.callLater(0.01, d.errback, Failure(FaultError(self.marker)))
            return d
        if self.fault == "never_fires":
            return defer.Deferred()
        return 42

    async def awaited(self):
        """The fault inside a coroutine: raised, awaited, or returned (42)."""
        result = self.result()
        if isinstance(result, defer.Deferred):
            await result
        return result

    def yielded(self):
        """The fault inside a generator: what it yields (it raises for "raises")."""
        return self.result()


def _is_hit(url):
    return url.rsplit("/", 1)[-1] in ("hit", "hit500", "drop")


class FaultSpider(Spider):
    """Home links to /a, /b and the page of the fault; one item per page."""

    name = "faults"
    cell = None
    base = None

    def start_requests(self):
        yield Request(self.base + "/")
        if self.cell.hook == "start_requests":
            yield self.cell.yielded()

    def parse(self, response):
        yield {"url": response.url}
        hook = self.cell.hook
        for path in ("/a", "/b"):
            yield Request(self.base + path, callback=self.parse_page)
        hit = {"errback": "/hit500", "process_exception": "/drop"}.get(hook, "/hit")
        callback = {"callback": self.hit_plain, "callback_generator": self.hit_generator,
                    "callback_async": self.hit_async,
                    "callback_async_generator": self.hit_async_generator,
                    "process_spider_exception": self.hit_raises}.get(hook, self.parse_page)
        errback = self.hit_errback if hook == "errback" else None
        yield Request(self.base + hit, callback=callback, errback=errback)

    def parse_page(self, response):
        return [{"url": response.url}]

    def hit_plain(self, response):
        return self.cell.result()

    def hit_generator(self, response):
        yield self.cell.yielded()
        yield {"url": response.url}

    async def hit_async(self, response):
        return await self.cell.awaited()

    async def hit_async_generator(self, response):
        yield await self.cell.awaited()

    def hit_raises(self, response):
        raise ValueError("the callback of /hit raised, for process_spider_exception")

    def hit_errback(self, failure):
        return self.cell.result()

    def closed(self, reason):
        if self.cell.hook == "closed":
            return self.cell.result()
        return None


class StartFaultSpider(FaultSpider):
    """The same, with Scrapy 2.13's C{async def start()}."""

    async def start(self):
        yield Request(self.base + "/")
        yield await self.cell.awaited()


def _cell_of(crawler):
    return crawler.spidercls.cell


class FaultDownloaderMiddleware:
    def __init__(self, cell):
        self.cell = cell

    @classmethod
    def from_crawler(cls, crawler):
        return cls(_cell_of(crawler))

    def process_request(self, request):
        if self.cell.hook == "process_request" and _is_hit(request.url):
            return self.cell.result()
        return None

    def process_response(self, request, response):
        if self.cell.hook == "process_response" and _is_hit(request.url):
            return self.cell.result()
        return response

    def process_exception(self, request, exception):
        if self.cell.hook == "process_exception" and _is_hit(request.url):
            return self.cell.result()
        return None


class FaultSpiderMiddleware:
    def __init__(self, cell):
        self.cell = cell

    @classmethod
    def from_crawler(cls, crawler):
        return cls(_cell_of(crawler))

    def process_spider_output(self, response, result):
        if self.cell.hook == "process_spider_output" and _is_hit(response.url):
            return self.cell.result()
        return result

    def process_spider_exception(self, response, exception):
        if self.cell.hook == "process_spider_exception":
            return self.cell.result()
        return None

    def process_start_requests(self, start_requests, spider):
        yield from start_requests
        if self.cell.hook == "process_start_requests":
            yield self.cell.yielded()


class FaultStartMiddleware:
    """A spider middleware with Scrapy 2.13's C{process_start} only."""

    def __init__(self, cell):
        self.cell = cell

    @classmethod
    def from_crawler(cls, crawler):
        return cls(_cell_of(crawler))

    async def process_start(self, start):
        async for each in start:
            yield each
        yield await self.cell.awaited()


class FaultPipeline:
    def __init__(self, cell):
        self.cell = cell

    @classmethod
    def from_crawler(cls, crawler):
        return cls(_cell_of(crawler))

    def open_spider(self):
        if self.cell.hook == "open_spider":
            return self.cell.result()
        return None

    def process_item(self, item):
        if self.cell.hook == "process_item" and _is_hit(item["url"]):
            return self.cell.result()
        return item

    def close_spider(self):
        if self.cell.hook == "close_spider":
            return self.cell.result()
        return None


SIGNAL_HOOKS = ("spider_opened", "spider_idle", "item_scraped", "response_received",
                "request_scheduled", "engine_started", "spider_closed")


class FaultExtension:
    """Connects the receiver of the cell's signal; or is the extension that cannot be
    made."""

    def __init__(self, cell):
        self.cell = cell
        self._idled = False

    @classmethod
    def from_crawler(cls, crawler):
        cell = _cell_of(crawler)
        if cell.hook == "extension_from_crawler":
            return cell.result()
        extension = cls(cell)
        if cell.hook in SIGNAL_HOOKS:
            crawler.signals.connect(extension.receive, getattr(signals, cell.hook))
        return extension

    def receive(self, **kwargs):
        target = kwargs.get("response") or kwargs.get("request")
        item = kwargs.get("item")
        url = item["url"] if item is not None else getattr(target, "url", None)
        if self.cell.hook in ("item_scraped", "response_received", "request_scheduled") \
                and not _is_hit(url or ""):
            return None
        if self.cell.hook == "spider_idle":
            if self._idled:
                return None
            self._idled = True
        return self.cell.result()


# The way each cell ends: "ends" by itself; "stop": the crawl waits for a Deferred that
# never fires, and ends once stopped; "start": the component cannot start.
STOPPED = {"callback", "callback_async", "callback_async_generator", "errback", "start",
           "process_request", "process_response", "process_exception",
           "process_spider_output", "process_start", "open_spider", "process_item",
           "spider_opened", "item_scraped"}
OPENING = {"open_spider", "spider_opened"}  # a never-firing Deferred while it opens
IN_FLIGHT = STOPPED - OPENING - {"start", "process_start"}  # a request cancelled

# where a wrong type is no error (the result is not part of the hook's contract)
RESULT_IGNORED = {"open_spider", "close_spider", "closed", *SIGNAL_HOOKS}

HOOKS = ("callback", "callback_generator", "callback_async", "callback_async_generator",
         "errback", "start_requests", "start", "process_request", "process_response",
         "process_exception", "process_spider_output", "process_spider_exception",
         "process_start_requests", "process_start", "open_spider", "process_item",
         "close_spider", *SIGNAL_HOOKS, "closed", "extension_from_crawler")


def way_out(hook, fault):
    if hook == "extension_from_crawler" or hook == "open_spider" and fault in (
            "raises", "errbacks_later"):
        return "start"
    if fault == "never_fires" and hook in STOPPED:
        return "stop"
    return "ends"


class FaultMatrixTests(unittest.TestCase):
    """Generated below: one test per hook and fault."""

    timeout = 30

    def setUp(self):
        self.server = serve(self)
        self.base = self.server.url("/").rstrip("/")
        self.server.add_page("/", links=["/a", "/b", "/hit"])
        for path in ("/a", "/b", "/hit"):
            self.server.add_page(path)
        self.server.add("/hit500", Status(500, b"no"))
        self.server.add("/drop", Drop())
        self.logs = capture_logs(self, "tinyscrapy", logging.DEBUG)

    def _crawler(self, cell):
        spidercls = StartFaultSpider if cell.hook == "start" else FaultSpider
        spidercls = type(spidercls.__name__, (spidercls,), {"cell": cell, "base": self.base})
        spider_mw = {FaultSpiderMiddleware: 500}
        if cell.hook == "process_start":
            spider_mw = {FaultStartMiddleware: 500}
        settings = {
            "LOG_LEVEL": "DEBUG", "FEEDS": {}, "RETRY_ENABLED": False,
            "CLOSE_GRACE_PERIOD": GRACE, "DOWNLOAD_TIMEOUT": 10,
            "DOWNLOADER_MIDDLEWARES": {FaultDownloaderMiddleware: 500},
            "SPIDER_MIDDLEWARES": spider_mw,
            "ITEM_PIPELINES": {FaultPipeline: 100},
            "EXTENSIONS": {FaultExtension: 500},
        }
        return Crawler(spidercls, Settings(settings))

    @defer.inlineCallbacks
    def check(self, hook, fault):
        cell = Cell(hook, fault)
        crawler = self._crawler(cell)
        items = []

        def scraped(item):
            items.append(item)

        crawler.signals.connect(scraped, signals.item_scraped)
        expected = way_out(hook, fault)
        d = crawler.crawl()
        if expected == "stop":
            yield cell.reached
            if hook not in OPENING:
                yield self._untouched_scraped(items)
            stopped_at = reactor.seconds()
            crawler.stop()
        [outcome] = yield self._settled(d)
        gc.collect()  # a Deferred that failed unseen says so now, and fails the test
        if expected == "start":
            self.assertIsInstance(outcome, Failure, "the crawl started")
            # what it raised stops the start (exit 1); what it returned that is not a
            # component is a usage error (exit 2): one line either way
            refusal = StartError if fault == "raises" or hook == "open_spider" else UsageError
            self.assertTrue(outcome.check(refusal), outcome)
            self.assertIn(hook.replace("extension_", ""), str(outcome.value))
            if hook == "open_spider" or fault == "raises":
                self.assertIn(cell.marker, str(outcome.value))
            self.assertLessEqual(self._mentions(cell.marker), 1)
            return
        self.assertNotIsInstance(outcome, Failure)
        stats = crawler.stats.get_stats()
        self.assertEqual(stats.get("ledger/missing"), 0, stats)
        if expected == "stop":
            self.assertEqual(outcome, "shutdown")
            self.assertLess(reactor.seconds() - stopped_at, 2 * GRACE + 1.0,
                            "the stopped crawl took too long to close")
            if hook in IN_FLIGHT:
                self.assertGreaterEqual(stats.get("ledger/cancelled", 0), 1, stats)
        else:
            self.assertEqual(outcome, "finished")
        if hook not in OPENING or expected != "stop":
            urls = {item["url"].rsplit("/", 1)[-1] for item in items}
            self.assertLessEqual({"", "a", "b"}, urls, "an untouched page was not scraped")
        if fault in ("raises", "errbacks_later"):
            self.assertEqual(self._mentions(cell.marker), 1, self.logs.text())
        elif fault == "wrong_type":
            expected_errors = 0 if hook in RESULT_IGNORED else 1
            self.assertEqual(self._mentions("int"), expected_errors, self.logs.text())
        self.assertEqual(self._mentions("Unhandled"), 0)

    def _untouched_scraped(self, items):
        """Fires once the pages the fault does not touch are scraped (polled, bounded by
        the test's timeout)."""
        def scraped():
            urls = {item["url"].rsplit("/", 1)[-1] for item in items}
            return {"", "a", "b"} <= urls
        return until(scraped)

    @staticmethod
    def _settled(d):
        """@return: a Deferred firing with a list of one: the crawl's result, or its
        failure (consumed)."""
        return d.addBoth(_boxed)

    def _mentions(self, text):
        """How many records at WARNING and above mention C{text}, in their message or in
        the exception they carry."""
        count = 0
        for record in self.logs.records:
            if record.levelno < logging.WARNING:
                continue
            exception = record.exc_info[1] if record.exc_info else None
            told = record.getMessage() + " " + (_chain(exception) if exception else "")
            if text == "int":
                count += "'int'" in told or " int" in told
            else:
                count += text in told
        return count


def _boxed(result):
    return [result]


def _chain(exception):
    """The messages of an exception and of those it came from."""
    parts = []
    while exception is not None and len(parts) < 10:
        parts.append(f"{type(exception).__name__}: {exception}")
        exception = exception.__cause__ or exception.__context__
    return " | ".join(parts)


def _make_test(hook, fault):
    def test(self):
        return self.check(hook, fault)
    test.__name__ = f"test_{hook}_{fault}"
    test.__doc__ = f"{hook} {fault.replace('_', ' ')}: the crawl ends ({way_out(hook, fault)})."
    return test


for _hook in HOOKS:
    for _fault in FAULTS:
        setattr(FaultMatrixTests, f"test_{_hook}_{_fault}", _make_test(_hook, _fault))
del _hook, _fault

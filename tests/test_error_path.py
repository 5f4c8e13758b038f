"""
The error path of docs/twisted/error-path.md, on a real crawl against 127.0.0.1: a Failure
from a callback and then from the C{process_spider_exception} hook it is offered to, from
an errback after a download failed, from each downloader middleware hook and from a
pipeline, each logged once, and none left to Twisted as "Unhandled error in Deferred"
(the detector is shown to catch one).
"""

import gc
import logging

from twisted.internet import defer, reactor, task
from twisted.logger import globalLogPublisher
from twisted.trial import unittest

from tinyscrapy import Request, Spider

from .helpers import crawl, serve
from .logs import capture_logs
from .servers import Drop


class UnhandledInDeferred:
    """Collects what Twisted logs as "Unhandled error in Deferred" (a Deferred garbage
    collected with a failure nobody handled), while a test runs."""

    def __init__(self, test):
        self.failures = []
        globalLogPublisher.addObserver(self)
        test.addCleanup(globalLogPublisher.removeObserver, self)

    def __call__(self, event):
        if "log_failure" in event and event.get("log_namespace") == "twisted.internet.defer":
            self.failures.append(event["log_failure"])

    def collected(self):
        """The unhandled failures, once every unreachable Deferred is collected."""
        gc.collect()
        return [failure.type.__name__ for failure in self.failures]


class BrokenHooks:
    """A spider middleware and a downloader middleware whose hooks raise for the page
    named after them."""

    def process_spider_exception(self, response, exception):
        if response is not None and response.url.endswith(("/callback-and-hook",
                                                           "/item-then-raise")):
            raise TypeError("process_spider_exception broke")
        return None

    def process_request(self, request):
        if request.url.endswith("/process_request"):
            raise RuntimeError("process_request broke")

    def process_response(self, request, response):
        if request.url.endswith("/process_response"):
            raise RuntimeError("process_response broke")
        return response

    def process_exception(self, request, exception):
        if request.url.endswith(("/process_exception", "/process_response")):
            raise LookupError("process_exception broke")


class BrokenPipeline:
    """Raises for the item of /pipeline; holds the item of /item-then-raise a moment."""

    def process_item(self, item):
        if item["page"] == "item-then-raise":
            return task.deferLater(reactor, 0.01, dict, item)
        raise LookupError("process_item broke")


class ErrorPathSpider(Spider):
    name = "error_path"
    pages = ("callback", "callback-and-hook", "drop", "process_request", "process_response",
             "process_exception", "pipeline", "item-then-raise")

    def start_requests(self):
        for page in self.pages:
            callback = self.item_then_raise if page == "item-then-raise" else None
            yield Request(f"{self.base}/{page}", callback=callback, errback=self.on_error)

    def item_then_raise(self, response):
        """«Never hang»'s case: an item a pipeline holds, then an error its hook fails on."""
        yield {"page": "item-then-raise"}
        raise ValueError("the generator broke")

    def parse(self, response):
        if response.url.endswith("/pipeline"):
            return [{"page": "pipeline"}]
        raise ValueError("the callback broke")

    def on_error(self, failure):
        raise KeyError("the errback broke")


class ErrorPathTests(unittest.TestCase):
    """Every Failure on the traced paths is logged by tinyscrapy, none by Twisted."""

    timeout = 30

    def setUp(self):
        self.server = serve(self)
        self.base = self.server.url("/").rstrip("/")
        for page in ErrorPathSpider.pages:
            self.server.add_page("/" + page)
        self.server.add("/drop", Drop())
        self.server.add("/process_exception", Drop())
        self.logs = capture_logs(self, "tinyscrapy", logging.DEBUG)
        self.unhandled = UnhandledInDeferred(self)

    @defer.inlineCallbacks
    def test_no_unhandled_error_on_the_traced_paths(self):
        """Each failing hook is logged by tinyscrapy, the crawl finishes, and Twisted is
        left no failure to log as "Unhandled error in Deferred"."""
        crawler = yield crawl(ErrorPathSpider, {
            "SPIDER_MIDDLEWARES": {BrokenHooks: 500},
            "DOWNLOADER_MIDDLEWARES": {BrokenHooks: 500},
            "ITEM_PIPELINES": {BrokenPipeline: 300}, "RETRY_ENABLED": False,
        }, base=self.base)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        self.assertEqual(self.unhandled.collected(), [])
        told = [f"{record.getMessage()} {record.exc_info[1] if record.exc_info else ''}"
                for record in self.logs.records if record.levelno >= logging.ERROR]
        once_each = {  # what broke: how many records tell it (one per page it broke)
            "the callback broke": 2,  # /callback, and /callback-and-hook before its hook
            "process_spider_exception broke": 2, "process_request broke": 1,
            "process_response broke": 1, "process_exception broke": 1,
            "process_item broke": 1, "the generator broke": 1,
            "the errback broke": 4,  # after each failed download: drop and the three hooks
        }
        for message, count in once_each.items():
            self.assertEqual(sum(message in line for line in told), count, (message, told))
        self.assertEqual(crawler.stats.get_value("ledger/missing"), 0)
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 1)

    def test_the_detector_sees_an_unhandled_failure(self):
        """A Deferred dropped with its failure unhandled is what the test above counts."""
        dropped = defer.Deferred()
        dropped.errback(ValueError("nobody handled it"))
        del dropped
        self.assertEqual(self.unhandled.collected(), ["ValueError"])
        self.flushLoggedErrors(ValueError)

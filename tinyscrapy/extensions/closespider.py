"""
L{CloseSpider}: stop a crawl early, on Scrapy's C{CLOSESPIDER_*} settings.

    - C{CLOSESPIDER_PAGECOUNT}: after that many responses (any status; robots.txt not
      counted), finish reason C{closespider_pagecount};
    - C{CLOSESPIDER_ITEMCOUNT}: after that many items left the pipelines,
      C{closespider_itemcount};
    - C{CLOSESPIDER_TIMEOUT}: that many seconds after the spider opened (a C{callLater}),
      C{closespider_timeout};
    - C{CLOSESPIDER_ERRORCOUNT}: after that many errors, C{closespider_errorcount}. An error
      is an exception raised by a callback or errback (C{spider_error}) or a download that
      failed for good (C{download_error}); refused statuses (404, ...) and dropped requests
      are not errors;
    - C{CLOSESPIDER_TIMEOUT_NO_ITEM}: when no item was scraped in that many seconds
      (checked by a C{LoopingCall} every that many seconds), C{closespider_timeout_no_item};
    - C{CLOSESPIDER_PAGECOUNT_NO_ITEM}: after that many responses in a row with no item
      scraped in between, C{closespider_pagecount_no_item}.

0 switches a condition off; with all of them off the extension is not built. A callback
can also raise L{tinyscrapy.exceptions.CloseSpider} with its own reason.

Each condition calls L{ExecutionEngine.close_spider}: the engine takes no new request,
lets the downloads in flight finish (their callbacks and items included, for
C{CLOSE_GRACE_PERIOD} at most: then they are cancelled), closes the
pipelines and feeds, and counts the requests still waiting as C{ledger/cancelled}. The
first reason given is the finish reason.
"""

import logging
from collections import defaultdict

from twisted.internet.task import LoopingCall

from tinyscrapy import signals
from tinyscrapy.exceptions import NotConfigured

logger = logging.getLogger(__name__)


class CloseSpider:
    """
    The close conditions of one crawl, as Scrapy's extension.

    @ivar close_on: each condition's limit (0: off), by name (C{timeout}, C{itemcount},
        C{pagecount}, C{errorcount}, C{timeout_no_item}, C{pagecount_no_item}).
    @ivar counter: the pages, items and errors counted so far (and
        C{pagecount_since_last_item}).
    @ivar task: the C{CLOSESPIDER_TIMEOUT} call while it is pending, else None.
    @ivar task_no_item: the C{CLOSESPIDER_TIMEOUT_NO_ITEM} loop while it runs, else None.
    """

    def __init__(self, crawler):
        settings = crawler.settings
        self.crawler = crawler
        self.task = None
        self.task_no_item = None
        self.close_on = {
            "timeout": settings.getfloat("CLOSESPIDER_TIMEOUT"),
            "itemcount": settings.getint("CLOSESPIDER_ITEMCOUNT"),
            "pagecount": settings.getint("CLOSESPIDER_PAGECOUNT"),
            "errorcount": settings.getint("CLOSESPIDER_ERRORCOUNT"),
            "timeout_no_item": settings.getint("CLOSESPIDER_TIMEOUT_NO_ITEM"),
            "pagecount_no_item": settings.getint("CLOSESPIDER_PAGECOUNT_NO_ITEM"),
        }
        if not any(self.close_on.values()):
            raise NotConfigured
        self.counter = defaultdict(int)
        bus = crawler.signals
        close_on = self.close_on
        if close_on["errorcount"]:
            bus.connect(self.error_count, signal=signals.spider_error)
            bus.connect(self.download_error_count, signal=signals.download_error)
        if close_on["pagecount"] or close_on["pagecount_no_item"]:
            bus.connect(self.page_count, signal=signals.response_received)
        if close_on["timeout"]:
            bus.connect(self.spider_opened, signal=signals.spider_opened)
        if close_on["itemcount"] or close_on["pagecount_no_item"]:
            bus.connect(self.item_scraped, signal=signals.item_scraped)
        if close_on["timeout_no_item"]:
            self.timeout_no_item = close_on["timeout_no_item"]
            self.items_in_period = 0
            bus.connect(self.spider_opened_no_item, signal=signals.spider_opened)
            bus.connect(self.item_scraped_no_item, signal=signals.item_scraped)
        bus.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    # the counts

    def error_count(self, failure, response, spider):
        """A callback or errback raised (C{spider_error})."""
        self._count_error()

    def download_error_count(self, failure, request, spider):
        """A download failed for good (C{download_error})."""
        self._count_error()

    def _count_error(self):
        self.counter["errorcount"] += 1
        if self.counter["errorcount"] == self.close_on["errorcount"]:
            self._close_spider("closespider_errorcount")

    def page_count(self, response, request, spider):
        self.counter["pagecount"] += 1
        self.counter["pagecount_since_last_item"] += 1
        if self.counter["pagecount"] == self.close_on["pagecount"]:
            self._close_spider("closespider_pagecount")
            return
        if self.close_on["pagecount_no_item"] and (
                self.counter["pagecount_since_last_item"] >= self.close_on["pagecount_no_item"]):
            self._close_spider("closespider_pagecount_no_item")

    def item_scraped(self, item, spider):
        self.counter["itemcount"] += 1
        self.counter["pagecount_since_last_item"] = 0
        if self.counter["itemcount"] == self.close_on["itemcount"]:
            self._close_spider("closespider_itemcount")

    # the timers

    def spider_opened(self, spider):
        """Start the C{CLOSESPIDER_TIMEOUT} clock."""
        self.task = self.crawler.reactor.callLater(self.close_on["timeout"],
                                                   self._close_spider, "closespider_timeout")

    def spider_opened_no_item(self, spider):
        """Start checking, every C{CLOSESPIDER_TIMEOUT_NO_ITEM} seconds, that items came."""
        self.task_no_item = LoopingCall(self._count_items_produced)
        self.task_no_item.clock = self.crawler.reactor
        self.task_no_item.start(self.timeout_no_item, now=False)
        logger.info("Spider will stop when no items are produced after %s seconds.",
                    self.timeout_no_item)

    def item_scraped_no_item(self, item, spider):
        self.items_in_period += 1

    def _count_items_produced(self):
        if self.items_in_period >= 1:
            self.items_in_period = 0
        else:
            logger.info("Closing spider since no items were produced in the last %s "
                        "seconds.", self.timeout_no_item)
            self._close_spider("closespider_timeout_no_item")

    def spider_closed(self, spider):
        """Stop both timers."""
        if self.task is not None:
            if self.task.active():
                self.task.cancel()
            self.task = None
        if self.task_no_item is not None:
            if self.task_no_item.running:
                self.task_no_item.stop()
            self.task_no_item = None

    def _close_spider(self, reason):
        """Close the crawl with C{reason}, unless it is closing already."""
        engine = self.crawler.engine
        if engine is not None and engine.closing_reason is None:
            logger.info("%s reached: closing the crawl", reason)
            engine.close_spider(reason)

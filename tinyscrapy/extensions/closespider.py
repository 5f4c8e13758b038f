"""
L{CloseConditions}: stop a crawl early, on Scrapy's C{CLOSESPIDER_*} settings.

    - C{CLOSESPIDER_PAGECOUNT}: after that many responses (any status; robots.txt not
      counted), finish reason C{closespider_pagecount};
    - C{CLOSESPIDER_ITEMCOUNT}: after that many items left the pipelines,
      C{closespider_itemcount};
    - C{CLOSESPIDER_TIMEOUT}: after that many seconds (a C{callLater} from
      C{engine_started}), C{closespider_timeout};
    - C{CLOSESPIDER_ERRORCOUNT}: after that many errors, C{closespider_errorcount}. An error
      is an exception raised by a callback or errback (C{spider_error}) or a download that
      failed for good (C{download_error}); refused statuses (404, ...) and dropped requests
      are not errors.

0 switches a condition off. A callback can also raise L{tinyscrapy.exceptions.CloseSpider}
with its own reason.

Each condition calls L{ExecutionEngine.close_spider}: the engine takes no new request,
lets the downloads in flight finish (their callbacks and items included), closes the
pipelines and feeds, and counts the requests still waiting as C{ledger/cancelled}. The
first reason given is the finish reason.
"""

import logging

from tinyscrapy import signals
from tinyscrapy.exceptions import NotConfigured

logger = logging.getLogger(__name__)


class CloseConditions:
    """
    The close conditions of one crawl, as an extension.

    @ivar counts: the pages, items and errors counted so far.
    """

    def __init__(self, crawler):
        settings = crawler.settings
        self.crawler = crawler
        self.limits = {
            "pagecount": settings.getint("CLOSESPIDER_PAGECOUNT"),
            "itemcount": settings.getint("CLOSESPIDER_ITEMCOUNT"),
            "errorcount": settings.getint("CLOSESPIDER_ERRORCOUNT"),
        }
        self.timeout = settings.getfloat("CLOSESPIDER_TIMEOUT")
        if not any(self.limits.values()) and not self.timeout:
            raise NotConfigured("no CLOSESPIDER_* setting")
        self.counts = dict.fromkeys(self.limits, 0)
        self._timer = None
        bus = crawler.signals
        if self.limits["pagecount"]:
            bus.connect(self.page_received, signals.response_received)
        if self.limits["itemcount"]:
            bus.connect(self.item_scraped, signals.item_scraped)
        if self.limits["errorcount"]:
            bus.connect(self.error, signals.spider_error)
            bus.connect(self.error, signals.download_error)
        if self.timeout:
            bus.connect(self.engine_started, signals.engine_started)
        bus.connect(self.spider_closed, signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def page_received(self, **_):
        self._count("pagecount")

    def item_scraped(self, **_):
        self._count("itemcount")

    def error(self, **_):
        self._count("errorcount")

    def _count(self, condition):
        self.counts[condition] += 1
        if self.counts[condition] == self.limits[condition]:
            self._close(f"closespider_{condition}")

    def engine_started(self, **_):
        self._timer = self.crawler.reactor.callLater(self.timeout, self._close,
                                                     "closespider_timeout")

    def _close(self, reason):
        self._timer_off()
        engine = self.crawler.engine
        if engine is not None and engine.closing_reason is None:
            logger.info("%s reached: closing the crawl", reason)
            engine.close_spider(reason)

    def spider_closed(self, **_):
        self._timer_off()

    def _timer_off(self):
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

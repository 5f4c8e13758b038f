"""
Extensions: components that only listen to signals (feed exports, close conditions,
the progress line). Enabled by C{EXTENSIONS} / C{EXTENSIONS_BASE}, like Scrapy's.
"""

import logging

from tinyscrapy import signals
from tinyscrapy.components import build_ordered
from tinyscrapy.errors import NotConfigured

logger = logging.getLogger(__name__)


def build_extensions(crawler):
    """Build every enabled extension; each connects its own signals in C{from_crawler}.
    @return: a list of C{(path, extension)}."""
    return build_ordered(crawler, "EXTENSIONS")


class CloseSpider:
    """
    Close the crawl when a limit is reached, as Scrapy's extension of the same name:
    C{CLOSESPIDER_PAGECOUNT} responses, C{CLOSESPIDER_ITEMCOUNT} scraped items,
    C{CLOSESPIDER_ERRORCOUNT} callback errors, or C{CLOSESPIDER_TIMEOUT} seconds after
    the engine started. The finish reason names the limit (C{closespider_itemcount}, ...).
    Requests still waiting then end as C{cancelled} in the ledger.
    """

    def __init__(self, crawler, limits, timeout):
        self.crawler = crawler
        self.limits = limits
        self.counts = dict.fromkeys(limits, 0)
        self.timeout = timeout
        self._timer = None
        watched = {"pagecount": signals.response_received, "itemcount": signals.item_scraped,
                   "errorcount": signals.spider_error}
        for name in limits:
            receiver = getattr(self, "_count_" + name)
            crawler.signals.connect(receiver, watched[name])
        if timeout:
            crawler.signals.connect(self.engine_started, signals.engine_started)
        crawler.signals.connect(self.spider_closed, signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        limits = {}
        for name in ("pagecount", "itemcount", "errorcount"):
            limit = settings.getint("CLOSESPIDER_" + name.upper())
            if limit > 0:
                limits[name] = limit
        timeout = settings.getfloat("CLOSESPIDER_TIMEOUT")
        if not limits and timeout <= 0:
            raise NotConfigured("no CLOSESPIDER_* limit")
        return cls(crawler, limits, timeout)

    def _count_pagecount(self, **kwargs):
        self._count("pagecount")

    def _count_itemcount(self, **kwargs):
        self._count("itemcount")

    def _count_errorcount(self, **kwargs):
        self._count("errorcount")

    def _count(self, name):
        self.counts[name] += 1
        if self.counts[name] == self.limits[name]:
            self._close("closespider_" + name)

    def engine_started(self, spider):
        self._timer = self.crawler.reactor.callLater(self.timeout, self._timed_out)

    def _timed_out(self):
        self._timer = None
        self._close("closespider_timeout")

    def _close(self, reason):
        logger.info("%s reached: closing", reason)
        self.crawler.engine.close_spider(reason)

    def spider_closed(self, spider, reason):
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

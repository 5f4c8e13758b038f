"""
L{CoreStats}: the crawl's times and finish reason in the stats, as Scrapy's extension:
C{start_time} when the spider opens, C{finish_time}, C{elapsed_time_seconds} (measured on
the monotonic clock) and C{finish_reason} when it closes.

The counts Scrapy's CoreStats also keeps (C{item_scraped_count}, C{item_dropped_count}
with C{item_dropped_reasons_count/<class>}, C{response_received_count}) are counted once,
where they happen, by the item pipelines and the scraper: an item or a page costs no
signal receiver for them, and they are there with this extension switched off. The
extension's L{CoreStats.item_scraped}, L{CoreStats.item_dropped} and
L{CoreStats.response_received} count as Scrapy's do when called; they are not connected
to the signals, so nothing is counted twice.
"""

from datetime import datetime, timezone
from time import monotonic

from tinyscrapy import signals


class CoreStats:
    """Stamp the start and the finish."""

    def __init__(self, stats):
        self.stats = stats
        self.start_time = None
        self._start_time_mono = None

    @classmethod
    def from_crawler(cls, crawler):
        extension = cls(crawler.stats)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self, spider):
        self.start_time = datetime.now(tz=timezone.utc)
        self._start_time_mono = monotonic()
        self.stats.set_value("start_time", self.start_time)

    def spider_closed(self, spider, reason):
        finish_time, finish_time_mono = datetime.now(tz=timezone.utc), monotonic()
        if self._start_time_mono is None:  # closed before it opened (a failed start)
            self._start_time_mono = finish_time_mono
        self.stats.set_value("elapsed_time_seconds", finish_time_mono - self._start_time_mono)
        self.stats.set_value("finish_time", finish_time)
        self.stats.set_value("finish_reason", reason)

    # Scrapy's counters (see the module docstring: tinyscrapy counts these elsewhere)

    def item_scraped(self, item, spider):
        self.stats.inc_value("item_scraped_count")

    def response_received(self, spider):
        self.stats.inc_value("response_received_count")

    def item_dropped(self, item, spider, exception):
        self.stats.inc_value("item_dropped_count")
        self.stats.inc_value(f"item_dropped_reasons_count/{type(exception).__name__}")

"""
L{CoreStats}: the crawl's times and finish reason in the stats, as Scrapy's extension:
C{start_time} when the spider opens, C{finish_time}, C{elapsed_time_seconds} and
C{finish_reason} when it closes.

The counts Scrapy's CoreStats also keeps (C{item_scraped_count}, C{item_dropped_count},
C{response_received_count}) are counted where they happen, by the item pipelines and the
scraper, at no cost per item for a signal.
"""

from datetime import datetime, timezone

from tinyscrapy import signals


class CoreStats:
    """Stamp the start and the finish."""

    def __init__(self, stats):
        self.stats = stats
        self.start_time = None

    @classmethod
    def from_crawler(cls, crawler):
        extension = cls(crawler.stats)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self, spider):
        self.start_time = datetime.now(tz=timezone.utc)
        self.stats.set_value("start_time", self.start_time)

    def spider_closed(self, spider, reason):
        finish_time = datetime.now(tz=timezone.utc)
        start_time = self.start_time or finish_time
        self.stats.set_value("finish_time", finish_time)
        self.stats.set_value("elapsed_time_seconds",
                             round((finish_time - start_time).total_seconds(), 3))
        self.stats.set_value("finish_reason", reason)

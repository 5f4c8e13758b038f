import json

from scrapy import signals
from scrapy.utils.project import data_path


class ClosedReport:
    """Writes the spider's finish reason and item count to the project's data directory
    when the spider closes (a plugin connecting to Scrapy's own signal objects)."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.items = 0
        crawler.signals.connect(self.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def item_scraped(self, item, spider):
        self.items += 1

    def spider_closed(self, spider, reason):
        with open(data_path("closed.json"), "w", encoding="utf-8") as stream:
            json.dump({"spider": spider.name, "reason": reason, "items": self.items}, stream)

"""A spider with from_crawler and signals, custom_settings, dataclass items, and the /js/
page's data read out of its script."""
import json
import re
from dataclasses import dataclass, field

import scrapy
from scrapy import signals


@dataclass
class Quote:
    text: str
    author: str
    tags: list = field(default_factory=list)


class JsQuotesSpider(scrapy.Spider):
    name = "quotes-js"
    start_urls = ["http://quotes.toscrape.com/js/"]
    custom_settings = {"CONCURRENT_REQUESTS": 4, "ROBOTSTXT_OBEY": False}

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(spider.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(spider.spider_closed, signal=signals.spider_closed)
        return spider

    def spider_opened(self, spider):
        self.count = 0

    def item_scraped(self, item):
        self.count += 1

    def spider_closed(self, spider):
        spider.logger.info("scraped %d quotes", self.count)

    def parse(self, response):
        script = response.xpath("//script[contains(., 'var data')]/text()").get()
        data = json.loads(re.search(r"var data = (\[.*?\]);", script, re.S).group(1))
        for entry in data:
            yield Quote(text=entry["text"], author=entry["author"]["name"], tags=entry["tags"])

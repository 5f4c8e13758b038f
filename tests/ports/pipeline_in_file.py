"""One file holding it all: a pipeline named by the file's module in custom_settings, an
Item whose field has a serializer, a LinkExtractor called by hand, a login posted with a
plain FormRequest, and closed()."""
import scrapy
from scrapy.exceptions import DropItem
from scrapy.linkextractors import LinkExtractor


def short(value):
    return value[:20]


class QuoteItem(scrapy.Item):
    text = scrapy.Field(serializer=short)
    author = scrapy.Field()
    logged_in = scrapy.Field()


class UpperPipeline:
    def open_spider(self, spider):
        self.count = 0

    def process_item(self, item, spider):
        if item["author"].startswith("J"):
            raise DropItem("no J authors")
        item["author"] = item["author"].upper()
        self.count += 1
        return item


class PipelineSpider(scrapy.Spider):
    name = "pipeline-in-file"
    start_urls = ["http://quotes.toscrape.com/login"]
    custom_settings = {
        "ITEM_PIPELINES": {"pipeline_in_file.UpperPipeline": 300},
    }

    def parse(self, response):
        yield scrapy.FormRequest(
            "http://quotes.toscrape.com/login",
            formdata={
                "csrf_token": response.css("input[name=csrf_token]::attr(value)").get(),
                "username": "admin",
                "password": "admin",
            },
            callback=self.logged_in,
        )

    def logged_in(self, response):
        for quote in response.css("div.quote"):
            item = QuoteItem()
            item["text"] = quote.css("span.text::text").get()
            item["author"] = quote.css("small.author::text").get()
            item["logged_in"] = bool(response.xpath("//a[@href='/logout']"))
            yield item
        extractor = LinkExtractor(restrict_css="ul.pager", allow=r"/page/")
        for link in extractor.extract_links(response):
            yield scrapy.Request(link.url, callback=self.logged_in,
                                 cb_kwargs={}, priority=10)

    def closed(self, reason):
        self.logger.info("closed: %s", reason)

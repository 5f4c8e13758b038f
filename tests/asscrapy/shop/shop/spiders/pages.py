import scrapy
from scrapy.linkextractors import LinkExtractor
from scrapy.loader import ItemLoader
from scrapy.utils.response import response_status_message

from shop.items import Product


class PagesSpider(scrapy.Spider):
    name = "pages"

    def __init__(self, base_url=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [base_url]

    def parse(self, response):
        self.logger.info("catalogue: %s", response_status_message(response.status))
        for link in LinkExtractor(restrict_css="ul").extract_links(response):
            yield scrapy.Request(link.url, callback=self.parse_product)

    def parse_product(self, response):
        loader = ItemLoader(item=Product(), response=response)
        loader.add_css("name", "h1::text")
        loader.add_css("price", ".price::text")
        loader.add_value("url", response.url)
        yield loader.load_item()

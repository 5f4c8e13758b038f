"""A script: CrawlerProcess with a settings dict, FEEDS, process.crawl and process.start."""
import scrapy
from scrapy.crawler import CrawlerProcess


class AuthorsBornSpider(scrapy.Spider):
    name = "born"
    start_urls = ["https://quotes.toscrape.com/author/Albert-Einstein/",
                  "https://quotes.toscrape.com/author/Jane-Austen/"]

    def __init__(self, extra=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if extra:
            self.start_urls = self.start_urls + [extra]

    def parse(self, response):
        yield {
            "name": response.css("h3.author-title::text").get().strip(),
            "born": response.css("span.author-born-date::text").get(),
            "where": response.css("span.author-born-location::text").get()[3:],
        }


if __name__ == "__main__":
    process = CrawlerProcess(settings={
        "FEEDS": {"items.jsonl": {"format": "jsonlines"}},
        "LOG_LEVEL": "WARNING",
    })
    process.crawl(AuthorsBornSpider,
                  extra="https://quotes.toscrape.com/author/Steve-Martin/")
    process.start()

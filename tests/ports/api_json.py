"""The API again, as spiders for Scrapy 2.13+ and older write it: start() beside
start_requests() (Scrapy 2.19 calls only start()), response.json(), cb_kwargs."""
import scrapy
from scrapy.http import JsonRequest


class QuotesApiSpider(scrapy.Spider):
    name = "quotes-api"
    allowed_domains = ["quotes.toscrape.com"]

    async def start(self):
        yield JsonRequest("https://quotes.toscrape.com/api/quotes?page=1",
                          cb_kwargs={"page": 1})

    def start_requests(self):  # for Scrapy < 2.13
        yield JsonRequest("https://quotes.toscrape.com/api/quotes?page=2",
                          cb_kwargs={"page": 2})

    def parse(self, response, page):
        data = response.json()
        for position, quote in enumerate(data["quotes"]):
            yield {
                "page": page,
                "position": position,
                "author": quote["author"]["slug"],
                "tags": len(quote["tags"]),
            }
        if data["has_next"]:
            yield JsonRequest(
                response.urljoin(f"/api/quotes?page={page + 1}"),
                callback=self.parse,
                cb_kwargs={"page": page + 1},
            )

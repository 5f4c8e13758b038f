"""The tutorial's tag spider: a spider argument (or its default) picks the start URL."""
import scrapy


class TagSpider(scrapy.Spider):
    name = "tagged"

    async def start(self):
        url = "https://quotes.toscrape.com/"
        tag = getattr(self, "tag", "life")
        if tag is not None:
            url = url + "tag/" + tag
        yield scrapy.Request(url, self.parse)

    def parse(self, response):
        for quote in response.css("div.quote"):
            yield {
                "text": quote.css("span.text::text").get(),
                "author": quote.css("small.author::text").get(),
                "depth": response.meta["depth"],
            }

        next_page = response.css("li.next a::attr(href)").get()
        if next_page is not None:
            yield response.follow(next_page, self.parse)

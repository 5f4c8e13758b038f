"""
A spider for the demo site's quotes, as in Scrapy's tutorial: one item per quote.

    python -m tinyscrapy run tinyscrapy.demo.spiders.quotes.QuotesSpider -o quotes.json
"""

from tinyscrapy import Request, Spider


class QuotesSpider(Spider):
    """
    Scrape all 100 quotes (text, author, tags), following the "next" links only.

    @cvar base_url: where the demo site runs; C{python -m tinyscrapy demo} serves it here,
        and C{run} passes its own server's address as C{-a base_url=...}.
    """

    name = "quotes"
    uses_demo_site = True
    base_url = "http://127.0.0.1:8800"

    def start_requests(self):
        yield Request(self.base_url.rstrip("/") + "/quotes/", callback=self.parse)

    def parse(self, response):
        """A page of quotes: one item per quote, then the next page."""
        for quote in response.css("div.quote"):
            yield {
                "text": quote.css("span.text::text").get(),
                "author": quote.css("small.author::text").get(),
                "tags": quote.css("div.tags a.tag::text").getall(),
            }
        next_page = response.css("li.next a::attr(href)").get()
        if next_page is not None:
            yield response.follow(next_page, callback=self.parse)

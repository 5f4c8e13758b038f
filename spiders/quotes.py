"""
The demo site's quotes, as declared items filled by an C{ItemLoader}: each field says how
its values are cleaned (here: the first one, for text and author; all of them, for tags).

    python -m tinyscrapy run quotes -o quotes.json       # from the repository root
"""

from itemloaders.processors import TakeFirst

from tinyscrapy import Field, Item, Request, Spider
from tinyscrapy.loader import ItemLoader


class Quote(Item):
    text = Field(output_processor=TakeFirst())
    author = Field(output_processor=TakeFirst())
    tags = Field()


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
            loader = ItemLoader(item=Quote(), selector=quote)
            loader.add_css("text", "span.text::text")
            loader.add_css("author", "small.author::text")
            loader.add_css("tags", "div.tags a.tag::text")
            yield loader.load_item()
        yield from response.follow_all(css="li.next a", callback=self.parse)

"""
The demo site's book catalogue, as a C{CrawlSpider}: rules say which links to follow and
which pages are books; no C{parse} of ours.

    python -m tinyscrapy run books -o books.jsonl        # from the repository root
"""

from tinyscrapy import Request
from tinyscrapy.linkextractors import LinkExtractor
from tinyscrapy.spiders import CrawlSpider, Rule

# The word in <p class="star-rating Three"> as a number.
RATINGS = {"One": 1, "Two": 2, "Three": 3, "Four": 4, "Five": 5}


class BooksSpider(CrawlSpider):
    """
    Scrape all 200 books: title, price, availability, rating and URL.

    @cvar base_url: where the demo site runs; C{python -m tinyscrapy demo} serves it here,
        and C{run} passes its own server's address as C{-a base_url=...}.
    """

    name = "books"
    uses_demo_site = True
    base_url = "http://127.0.0.1:8800"

    rules = (
        # the catalogue's "next" links: followed, no callback
        Rule(LinkExtractor(restrict_css="li.next")),
        # each book on a listing page: parsed, not followed further
        Rule(LinkExtractor(restrict_css="article.product_pod h3"), callback="parse_book"),
    )

    def start_requests(self):
        yield Request(self.base_url.rstrip("/") + "/books/")

    def parse_book(self, response):
        """A book page: one item, read with XPath this time (the package's own demo spider
        reads the same page with CSS selectors)."""
        page = response.xpath("//article[contains(@class, 'product_page')]")
        rating = page.xpath(".//p[contains(@class, 'star-rating')]/@class").re_first(
            r"star-rating (\w+)")
        return {
            "title": page.xpath("normalize-space(.//h1)").get(),
            "price": float(page.xpath(".//p[@class='price']/text()").re_first(r"[\d.]+")),
            "availability": page.xpath("normalize-space(.//p[@class='availability'])").get(),
            "rating": RATINGS.get(rating),
            "url": response.url,
        }

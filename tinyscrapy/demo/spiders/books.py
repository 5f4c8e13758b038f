"""
A spider for the demo site's book catalogue: every listing page, then every book.

    python -m tinyscrapy run tinyscrapy.demo.spiders.books.BooksSpider -o books.jsonl
"""

from tinyscrapy import Request, Spider

# The word in <p class="star-rating Three"> as a number.
RATINGS = {"One": 1, "Two": 2, "Three": 3, "Four": 4, "Five": 5}


class BooksSpider(Spider):
    """
    Scrape all 200 books: title, price, availability, rating and URL.

    @cvar base_url: where the demo site runs; C{python -m tinyscrapy demo} serves it here,
        and C{run} passes its own server's address as C{-a base_url=...}.
    """

    name = "books"
    uses_demo_site = True
    base_url = "http://127.0.0.1:8800"

    def start_requests(self):
        yield Request(self.base_url.rstrip("/") + "/books/", callback=self.parse)

    def parse(self, response):
        """A listing page: follow each book, then the next page."""
        for href in response.css("article.product_pod h3 a::attr(href)").getall():
            yield response.follow(href, callback=self.parse_book)
        next_page = response.css("li.next a::attr(href)").get()
        if next_page is not None:
            yield response.follow(next_page, callback=self.parse)

    def parse_book(self, response):
        """A book page: one item."""
        rating = response.css("p.star-rating::attr(class)").re_first(r"star-rating (\w+)")
        yield {
            "title": response.css("h1::text").get(),
            "price": float(response.css("p.price::text").re_first(r"[\d.]+")),
            "availability": response.css("p.availability::text").get().strip(),
            "rating": RATINGS[rating],
            "url": response.url,
        }

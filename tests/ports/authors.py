"""The Scrapy tutorial's author spider: follow_all, a helper closure, duplicates filtered."""
import scrapy


class AuthorSpider(scrapy.Spider):
    name = "author"

    start_urls = ["https://quotes.toscrape.com/"]

    def parse(self, response):
        author_page_links = response.css(".author + a")
        yield from response.follow_all(author_page_links, self.parse_author)

        yield from response.follow_all(css="li.next a", callback=self.parse)

    def parse_author(self, response):
        def extract_with_css(query):
            return response.css(query).get(default="").strip()

        yield {
            "name": extract_with_css("h3.author-title::text"),
            "birthdate": extract_with_css(".author-born-date::text"),
            "birthplace": extract_with_css(".author-born-location::text"),
            "bio": extract_with_css(".author-description::text"),
        }

"""A CrawlSpider over the books: one Rule follows the pages, one parses the products."""
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class BooksCrawlSpider(CrawlSpider):
    name = "books-crawl"
    allowed_domains = ["books.toscrape.com"]
    start_urls = ["https://books.toscrape.com/"]

    rules = (
        Rule(LinkExtractor(restrict_css="li.next")),
        Rule(LinkExtractor(allow=r"catalogue/category/books/", deny=r"poetry|fiction",
                           restrict_xpaths="//div[@class='side_categories']"),
             process_links="few_categories", follow=True),
        Rule(LinkExtractor(restrict_css="article.product_pod h3"), callback="parse_item"),
    )

    def few_categories(self, links):
        return [link for link in links if "mystery" in link.url or "history" in link.url]

    def parse_start_url(self, response):
        return [{"start": response.url, "links": len(response.css("a"))}]

    def parse_item(self, response):
        table = {
            row.css("th::text").get(): row.css("td::text").get()
            for row in response.css("table.table-striped tr")
        }
        yield {
            "title": response.css("h1::text").get(),
            "upc": table["UPC"],
            "price_excl_tax": table["Price (excl. tax)"],
            "availability": table["Availability"],
            "reviews": int(table["Number of reviews"]),
            "description": response.xpath(
                '//div[@id="product_description"]/following-sibling::p/text()').get(),
            "image": response.urljoin(response.css("div.item.active img::attr(src)").get()),
        }

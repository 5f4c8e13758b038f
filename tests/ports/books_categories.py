"""Books by category: the sidebar's links, the category passed on in meta, breadcrumbs."""
import scrapy


class CategoriesSpider(scrapy.Spider):
    name = "categories"
    allowed_domains = ["books.toscrape.com"]
    start_urls = ["http://books.toscrape.com/index.html"]
    custom_settings = {"DEPTH_LIMIT": 3}

    def parse(self, response):
        for link in response.css("div.side_categories ul li ul li a"):
            category = link.css("::text").get().strip()
            yield response.follow(link, callback=self.parse_category,
                                  meta={"category": category})

    def parse_category(self, response):
        for book in response.css("article.product_pod"):
            yield response.follow(book.css("h3 a")[0], callback=self.parse_book,
                                  meta={"category": response.meta["category"]})
        next_page = response.css("li.next a::attr(href)").get()
        if next_page is not None:
            yield response.follow(next_page, callback=self.parse_category, meta=response.meta)

    def parse_book(self, response):
        crumbs = response.css("ul.breadcrumb li a::text").getall()
        yield {
            "category": response.meta["category"],
            "breadcrumb": crumbs,
            "title": response.css("ul.breadcrumb li.active::text").get(),
            "stock": int(response.css("p.availability").re_first(r"\((\d+) available\)")),
            "rating": response.css("p.star-rating").attrib["class"].replace("star-rating ", ""),
            "depth": response.meta["depth"],
        }

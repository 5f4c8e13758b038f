import scrapy

from bookshop.items import BookItem


class CatalogueSpider(scrapy.Spider):
    name = "catalogue"
    allowed_domains = ["books.toscrape.com"]
    start_urls = ["https://books.toscrape.com/catalogue/category/books/poetry_23/index.html",
                  "https://books.toscrape.com/catalogue/page-1.html",
                  "https://books.toscrape.com/catalogue/page-2.html"]

    def parse(self, response):
        category = response.css("div.page-header h1::text").get()
        for pod in response.css("article.product_pod"):
            item = BookItem()
            item["title"] = pod.css("h3 a::attr(title)").get()
            item["price"] = pod.css(".price_color::text").get()
            item["rating"] = pod.css("p.star-rating::attr(class)").re_first(r"star-rating (\w+)")
            item["category"] = category
            yield item

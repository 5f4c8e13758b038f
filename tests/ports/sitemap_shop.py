"""A SitemapSpider: robots.txt names the index, which names a gzipped and a plain sitemap."""
from scrapy.spiders import SitemapSpider


class ShopSitemapSpider(SitemapSpider):
    name = "shop-sitemap"
    sitemap_urls = ["http://sitemap.toscrape.com/robots.txt"]
    sitemap_rules = [
        ("/product/", "parse_product"),
        ("/blog/", "parse_page"),
        ("/about", "parse_page"),
    ]

    def parse_product(self, response):
        yield {
            "name": response.css("h1::text").get(),
            "price": float(response.css("span.price::attr(content)").get()),
            "path": response.url.split("/", 3)[-1],
        }

    def parse_page(self, response):
        yield {"page": response.css("title::text").get(), "path": response.url.split("/", 3)[-1]}

"""Status codes and errbacks: handle_httpstatus_list, HttpError in an errback, stats, a
redirect's history, Selector(text=...)."""
import scrapy
from scrapy.selector import Selector
from scrapy.spidermiddlewares.httperror import HttpError


class StatusSpider(scrapy.Spider):
    name = "status"
    handle_httpstatus_list = [404]

    async def start(self):
        yield scrapy.Request("http://quotes.toscrape.com/author/Nobody-At-All/",
                             callback=self.parse_missing)
        yield scrapy.Request("http://books.toscrape.com/catalogue/page-99.html",
                             callback=self.parse_missing,
                             meta={"handle_httpstatus_list": []}, errback=self.failed)
        yield scrapy.Request("http://quotes.toscrape.com/logout", callback=self.parse_home,
                             dont_filter=True)
        yield scrapy.Request("http://books.toscrape.com/index.html", callback=self.parse_books)

    def parse_missing(self, response):
        self.crawler.stats.inc_value("status/missing")
        yield {"url": response.url, "status": response.status, "kind": "missing"}

    def failed(self, failure):
        if failure.check(HttpError):
            response = failure.value.response
            yield {"url": response.url, "status": response.status, "kind": "errback"}

    def parse_home(self, response):
        yield {
            "url": response.url,
            "status": response.status,
            "redirected_from": response.request.meta.get("redirect_urls"),
            "title": Selector(text=response.text).css("title::text").get(),
            "kind": "redirected",
        }

    def parse_books(self, response):
        first = response.css("article.product_pod").get()
        pod = Selector(text=first)
        yield {
            "kind": "pod",
            "title": pod.xpath("//h3/a/@title").get(),
            "classes": pod.css("p.star-rating").attrib["class"],
            "type": response.css("meta[http-equiv]").attrib["content"],
        }

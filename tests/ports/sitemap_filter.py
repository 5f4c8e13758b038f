"""A SitemapSpider that follows only the gzipped sitemap and filters entries by lastmod."""
from datetime import datetime

from scrapy.spiders import SitemapSpider


class FilteredSitemapSpider(SitemapSpider):
    name = "filtered-sitemap"
    sitemap_urls = ["http://sitemap.toscrape.com/sitemap_index.xml"]
    sitemap_follow = [r"products"]

    def sitemap_filter(self, entries):
        for entry in entries:
            date_time = datetime.strptime(entry["lastmod"], "%Y-%m-%d")
            if date_time.day >= 2 or "sitemap" in entry["loc"]:
                yield entry

    def parse(self, response):
        yield {"url": response.url.split("/", 3)[-1], "title": response.css("title::text").get()}

"""An XMLFeedSpider reading the sitemap index whole (iterator "xml"), its nodes named
with a namespace prefix."""
from scrapy.spiders import XMLFeedSpider


class IndexFeedSpider(XMLFeedSpider):
    name = "index-feed"
    start_urls = ["http://sitemap.toscrape.com/sitemap_index.xml"]
    iterator = "xml"
    itertag = "s:sitemap"
    namespaces = [("s", "http://www.sitemaps.org/schemas/sitemap/0.9")]

    def parse_node(self, response, node):
        return {"loc": node.xpath("s:loc/text()").get(),
                "lastmod": node.xpath("s:lastmod/text()").get(),
                "all": len(node.xpath("//s:loc"))}

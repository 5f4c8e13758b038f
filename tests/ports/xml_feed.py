"""An XMLFeedSpider reading an RSS feed node by node (each node its own document; a
namespaced tag inside)."""
from scrapy.spiders import XMLFeedSpider


class NewsFeedSpider(XMLFeedSpider):
    name = "news"
    start_urls = ["http://sitemap.toscrape.com/feed.rss"]
    itertag = "item"
    namespaces = [("dc", "http://purl.org/dc/elements/1.1/")]

    def parse_node(self, response, node):
        yield {
            "title": node.xpath("title/text()").get(),
            "link": node.xpath("link/text()").get(),
            "creator": node.xpath("dc:creator/text()").get(),
            "titles_seen": len(node.xpath("//title")),
        }

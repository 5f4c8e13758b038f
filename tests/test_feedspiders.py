"""
XMLFeedSpider and CSVFeedSpider, as Scrapy's: nodes and rows of real pages served on
127.0.0.1, each through parse_node or parse_row and process_results.
"""

from dataclasses import dataclass

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy.item import Field, Item
from tinyscrapy.spiders import CSVFeedSpider, XMLFeedSpider

from .helpers import crawl_and_collect, serve
from .servers import Page

FEED = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>all</title>
<item><title>one</title><dc:creator>ann</dc:creator></item>
<item><title>two</title><dc:creator>bob</dc:creator></item>
</channel></rss>
"""

CSV = b'id;name\n1;"a;b"\n2;c\nbroken\n'


@defer.inlineCallbacks
def crawl_items(spidercls, **spargs):
    """Crawl C{spidercls}; fire with the items it yielded."""
    _, items = yield crawl_and_collect(spidercls, {"LOG_LEVEL": "ERROR"}, **spargs)
    return items


class NodeSpider(XMLFeedSpider):
    name = "nodes"
    namespaces = [("dc", "http://purl.org/dc/elements/1.1/")]

    def parse_node(self, response, node):
        return {"title": node.xpath("title/text()").get(),
                "by": node.xpath("dc:creator/text()").get(),
                "titles": len(node.xpath("//title"))}

    def process_results(self, response, results):
        return [dict(item, seen=True) for item in results]


class WholeSpider(NodeSpider):
    name = "whole"
    iterator = "xml"


class RowSpider(CSVFeedSpider):
    name = "rows"
    delimiter = ";"

    def parse_row(self, response, row):
        yield row


class Row(Item):
    id = Field()
    name = Field()


@dataclass
class Node:
    title: str


class ItemRowSpider(RowSpider):
    """Returns an Item from parse_row (not a generator)."""

    name = "item-rows"

    def parse_row(self, response, row):
        return Row(row)


class DataclassNodeSpider(XMLFeedSpider):
    """Returns a dataclass from parse_node."""

    name = "dataclass-nodes"

    def parse_node(self, response, node):
        return Node(node.xpath("title/text()").get())


class FeedSpiderTests(unittest.TestCase):
    """Nodes and rows reach their callbacks as in Scrapy."""

    def setUp(self):
        self.server = serve(self)
        self.feed = self.server.add("/feed.xml", Page(FEED, content_type="application/xml"))
        self.csv = self.server.add("/rows.csv", Page(CSV, content_type="text/csv"))

    @defer.inlineCallbacks
    def test_iternodes_gives_each_node_its_own_document(self):
        """iternodes: each item node alone (// finds its title only), namespaces work."""
        items = yield crawl_items(NodeSpider, start_urls=[self.feed])
        self.assertEqual(items, [{"title": "one", "by": "ann", "titles": 1, "seen": True},
                                 {"title": "two", "by": "bob", "titles": 1, "seen": True}])

    @defer.inlineCallbacks
    def test_xml_iterator_reads_the_whole_document(self):
        """iterator = 'xml': the nodes of one document (// finds all three titles)."""
        items = yield crawl_items(WholeSpider, start_urls=[self.feed])
        self.assertEqual([(i["title"], i["titles"]) for i in items], [("one", 3), ("two", 3)])

    @defer.inlineCallbacks
    def test_csv_rows_from_the_header_line(self):
        """Rows are dicts keyed by the first line; a row of the wrong length is skipped."""
        items = yield crawl_items(RowSpider, start_urls=[self.csv])
        self.assertEqual(items, [{"id": "1", "name": "a;b"}, {"id": "2", "name": "c"}])

    @defer.inlineCallbacks
    def test_csv_headers_given(self):
        """headers set on the spider: every line is a row."""
        RowsWithHeaders = type("RowsWithHeaders", (RowSpider,),
                               {"name": "h", "headers": ["x", "y"]})
        items = yield crawl_items(RowsWithHeaders, start_urls=[self.csv])
        self.assertEqual(items[0], {"x": "id", "y": "name"})
        self.assertEqual(len(items), 3)

    @defer.inlineCallbacks
    def test_an_item_returned_is_one_item(self):
        """An Item returned from parse_row, and a dataclass from parse_node, are one item
        each (as Scrapy's arg_to_iter has them), not iterated field by field."""
        rows = yield crawl_items(ItemRowSpider, start_urls=[self.csv])
        self.assertEqual([dict(row) for row in rows],
                         [{"id": "1", "name": "a;b"}, {"id": "2", "name": "c"}])
        self.assertTrue(all(isinstance(row, Row) for row in rows))
        nodes = yield crawl_items(DataclassNodeSpider, start_urls=[self.feed])
        self.assertEqual(nodes, [Node("one"), Node("two")])

"""
Spiders for feeds, as Scrapy's C{scrapy.spiders.feed}: L{XMLFeedSpider} calls
C{parse_node(response, node)} for each node named C{itertag} of an XML (or HTML) page,
L{CSVFeedSpider} calls C{parse_row(response, row)} for each row of a CSV page::

    class Feed(XMLFeedSpider):
        name = "feed"
        start_urls = ["http://127.0.0.1:8800/feed.rss"]
        itertag = "item"                      # or "n:url" with namespaces = [("n", URI)]

        def parse_node(self, response, node):
            yield {"title": node.xpath("title/text()").get()}

C{iterator} chooses how the nodes are found: C{"iternodes"} (the default) reads the page
node by node and gives each node as a small document of its own (so C{//title} in
C{parse_node} searches that node only); C{"xml"} and C{"html"} parse the whole page and
give the nodes of that one document. Both kinds pass each callback's output through
C{process_results(response, results)}, and the page through C{adapt_response(response)}
first, as Scrapy's do. Like L{tinyscrapy.spiders.CrawlSpider}, they use C{parse} for
themselves.
"""

import csv
import io
import logging

from tinyscrapy.exceptions import NotConfigured
from tinyscrapy.spiders import Spider
from tinyscrapy.utils.misc import arg_to_iter

logger = logging.getLogger(__name__)


class XMLFeedSpider(Spider):
    """
    Call L{parse_node} for each C{itertag} node of each page (see the module docstring).

    @cvar iterator: C{"iternodes"}, C{"xml"} or C{"html"}.
    @cvar itertag: the nodes' name, with a prefix of C{namespaces} when they have one.
    @cvar namespaces: C{(prefix, uri)} pairs registered on every node's selector.
    """

    iterator = "iternodes"
    itertag = "item"
    namespaces = ()

    def parse(self, response, **kwargs):
        """Each page's callback: its nodes, each through L{parse_node}."""
        if not hasattr(self, "parse_node"):
            raise NotConfigured("You must define parse_node method in order to scrape "
                                "this XML feed")
        response = self.adapt_response(response)
        if self.iterator == "iternodes":
            nodes = self._iternodes(response)
        elif self.iterator in ("xml", "html"):
            from parsel import Selector  # parsel costs ~20 ms of start-up: on first use
            selector = Selector(body=response.body, encoding=response.encoding, type=self.iterator)
            self._register_namespaces(selector)
            nodes = selector.xpath(f"//{self.itertag}")
        else:
            raise NotConfigured(f"Unsupported node iterator {self.iterator!r} (iternodes, "
                                "xml or html)")
        return self.parse_nodes(response, nodes)

    def adapt_response(self, response):
        """The page as L{parse} should read it; the page itself by default."""
        return response

    def process_results(self, response, results):
        """Each L{parse_node} output as it should be used; unchanged by default."""
        return results

    def parse_nodes(self, response, nodes):
        """L{parse_node} of each node, through L{process_results}."""
        for node in nodes:
            yield from self.process_results(response,
                                            arg_to_iter(self.parse_node(response, node)))

    def _register_namespaces(self, selector):
        for prefix, uri in self.namespaces:
            selector.register_namespace(prefix, uri)

    def _iternodes(self, response):
        """Each C{itertag} node, read one at a time, as a selector of its own document."""
        from lxml import etree

        prefix, _, name = self.itertag.rpartition(":")
        namespace = dict(self.namespaces).get(prefix) if prefix else None
        events = etree.iterparse(io.BytesIO(response.body.lstrip()), events=("start-ns", "end"),
                                 resolve_entities=False, huge_tree=True)
        for event, data in events:
            if event == "start-ns":
                declared_prefix, uri = data
                if prefix and namespace is None and declared_prefix == prefix:
                    namespace = uri  # a prefix the document declares
                continue
            tag = f"{{{namespace}}}{name}" if namespace else name
            if data.tag != tag:
                continue
            text = etree.tostring(data, encoding="unicode")
            data.clear()
            from parsel import Selector
            selector = Selector(text=text, type="xml")
            if namespace:
                selector.register_namespace(prefix, namespace)
            self._register_namespaces(selector)
            yield selector.xpath(f"/{self.itertag}" if namespace else f"/{name}")[0]


class CSVFeedSpider(Spider):
    """
    Call L{parse_row} with each row of each page, a dict from the column names.

    @cvar delimiter: the field separator (C{","}).
    @cvar quotechar: the quote character (C{'"'}).
    @cvar headers: the column names; None reads them from the first row.
    """

    delimiter = None
    quotechar = None
    headers = None

    def parse(self, response, **kwargs):
        """Each page's callback: its rows, each through L{parse_row}."""
        if not hasattr(self, "parse_row"):
            raise NotConfigured("You must define parse_row method in order to scrape this "
                                "CSV feed")
        response = self.adapt_response(response)
        return self.parse_rows(response)

    def adapt_response(self, response):
        """The page as L{parse} should read it; the page itself by default."""
        return response

    def process_results(self, response, results):
        """Each L{parse_row} output as it should be used; unchanged by default."""
        return results

    def parse_rows(self, response):
        """L{parse_row} of each row, through L{process_results}; a row whose length is
        not the headers' is skipped with a warning."""
        options = {}
        if self.delimiter:
            options["delimiter"] = self.delimiter
        if self.quotechar:
            options["quotechar"] = self.quotechar
        reader = csv.reader(io.StringIO(response.text), **options)
        headers = self.headers
        for number, row in enumerate(reader, 1):
            if headers is None:
                headers = row
                continue
            if len(row) != len(headers):
                logger.warning("ignoring row %d of %s: %d fields, the header has %d",
                               number, response.url, len(row), len(headers))
                continue
            values = dict(zip(headers, row, strict=True))
            yield from self.process_results(response,
                                            arg_to_iter(self.parse_row(response, values)))

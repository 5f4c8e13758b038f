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

from tinyscrapy.exceptions import NotConfigured
from tinyscrapy.spiders import Spider
from tinyscrapy.utils.misc import arg_to_iter


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
        """Each C{itertag} node, read one at a time, as a selector of its own document
        (L{xmliter_lxml}; a prefix of C{namespaces}, or else one the document declares)."""
        from tinyscrapy.utils.iterators import xmliter_lxml
        prefix, _, name = self.itertag.rpartition(":")
        namespace = dict(self.namespaces).get(prefix) if prefix else None
        if namespace:
            nodes = xmliter_lxml(response, name, namespace, prefix)
        else:
            nodes = xmliter_lxml(response, self.itertag)
        for node in nodes:
            self._register_namespaces(node)
            yield node


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
        """L{parse_row} of each row (L{csviter}), through L{process_results}; a row whose
        length is not the headers' is skipped with a warning."""
        from tinyscrapy.utils.iterators import csviter
        for values in csviter(response, self.delimiter, self.headers,
                              quotechar=self.quotechar):
            yield from self.process_results(response,
                                            arg_to_iter(self.parse_row(response, values)))

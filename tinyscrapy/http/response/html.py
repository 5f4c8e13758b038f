"""
The lxml tree of an HTML response, parsed exactly as parsel parses it, without importing
parsel.

parsel's import (cssselect, jmespath, its XPath functions) is slow (docs/performance.md).
The C{crawl} command and the fast link path only run C{//a/@href}-style XPath on the
tree, so L{HttpResponse.root} builds the tree here, and L{HttpResponse.selector} wraps
this same tree in a parsel C{Selector} when a callback first asks for one.
"""

import logging
import threading

from lxml import etree
from lxml.html import HTMLParser

from tinyscrapy.http.response.text import TextResponse


class HtmlResponse(TextResponse):
    """An HTML (or XHTML) page: its lxml tree (L{root}) is parsed here, without importing
    parsel, and the selector wraps that same tree."""

    is_html = True
    selector_type = "html"

    @property
    def selector(self):
        """The L{tinyscrapy.selector.unified.Selector} over L{root}, built on first use;
        C{selector.response} is this response."""
        if self._selector is None:
            from tinyscrapy.selector.unified import Selector
            self._selector = Selector(self, root=self.root, type="html")
        return self._selector

    @property
    def root(self):
        """The lxml root element, parsed on first use by L{parse_html}, as parsel would."""
        if self._root is None:
            self._root = parse_html(self.text, self._page_base_url())
        return self._root

logger = logging.getLogger(__name__)
_PARSERS = threading.local()  # one parser per thread, reused page after page


def parse_html(text, base_url, flags=None):
    """
    The root element of C{text}, as C{parsel.Selector(text=text, type="html")} builds it:
    NUL characters dropped, surrounding space stripped, an empty document read as
    C{<html/>}, lxml's recovering parser with C{huge_tree}. Each thread keeps one parser
    and reuses it page after page (making one costs more than a small page's parse); its
    error log starts afresh with each page.

    libxml2 stops parsing at a nesting depth of 2,048 elements, even with C{huge_tree}
    (its hard limit), and everything after that point is missing from the tree: the links
    below it too. That is said once, here (each response parses its page once), as a
    WARNING naming the page, and C{"html_depth_truncated"} is added to C{flags} when given
    (the response's flags).

    @param text: the decoded page (C{str}).
    @param base_url: the URL relative links in the tree resolve against.
    @param flags: a list to mark a cut tree in, or None.
    """
    text = text.strip()
    if "\x00" in text:
        text = text.replace("\x00", "")
    body = text.encode("utf-8") or b"<html/>"
    parser = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = HTMLParser(recover=True, encoding="utf-8", huge_tree=True)
    root = etree.fromstring(body, parser=parser, base_url=base_url)
    if root is None:  # only comments, say
        root = etree.fromstring(b"<html/>", parser=parser, base_url=base_url)
    error = parser.error_log.last_error  # the depth limit is fatal: the last error
    if error is not None and error.type == _RESOURCE_LIMIT and "depth" in error.message:
        logger.warning("<%s> nests HTML elements deeper than %d: the page after that point "
                       "(line %d) is not parsed, and its links are not seen", base_url,
                       MAX_DEPTH, error.line)
        if flags is not None:
            flags.append("html_depth_truncated")
    return root


MAX_DEPTH = 2048  # libxml2's limit with XML_PARSE_HUGE (256 without)
_RESOURCE_LIMIT = etree.ErrorTypes.ERR_RESOURCE_LIMIT


_COMPILED = {}  # XPath text -> lxml's compiled XPath (compiling costs a third of a query)


def compiled_xpath(query):
    """C{query} compiled once, for any tree (attribute values as plain strings): the
    queries a crawl runs on every page (the link extractor's, the title)."""
    compiled = _COMPILED.get(query)
    if compiled is None:
        compiled = _COMPILED[query] = etree.XPath(query, smart_strings=False)
    return compiled

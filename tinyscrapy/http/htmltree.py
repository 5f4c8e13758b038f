"""
The lxml tree of an HTML response, parsed exactly as parsel parses it, without importing
parsel.

parsel's import (cssselect, jmespath, its XPath functions) costs some 25 ms of start-up.
The C{crawl} command and the fast link path only run C{//a/@href}-style XPath on the
tree, so L{HttpResponse.root} builds the tree here, and L{HttpResponse.selector} wraps
this same tree in a parsel C{Selector} when a callback first asks for one.
"""

from lxml import etree
from lxml.html import HTMLParser


def parse_html(text, base_url):
    """
    The root element of C{text}, as C{parsel.Selector(text=text, type="html")} builds it:
    NUL characters dropped, surrounding space stripped, an empty document read as
    C{<html/>}, lxml's recovering parser with C{huge_tree}.

    @param text: the decoded page (C{str}).
    @param base_url: the URL relative links in the tree resolve against.
    """
    body = text.strip().replace("\x00", "").encode("utf-8") or b"<html/>"
    parser = HTMLParser(recover=True, encoding="utf-8", huge_tree=True)
    root = etree.fromstring(body, parser=parser, base_url=base_url)
    if root is None:  # only comments, say
        root = etree.fromstring(b"<html/>", parser=parser, base_url=base_url)
    return root

"""
Scrapy's C{scrapy.utils.iterators}: the nodes of an XML document and the rows of a CSV
one, read one at a time, behind L{tinyscrapy.spiders.feed}'s spiders.

    - L{xmliter_lxml}: each node of a name, as a selector of its own small document,
      without building the whole document's tree (lxml's C{iterparse}; entities are not
      resolved, so a document cannot make it read a local file);
    - L{csviter}: each row as a dict from the column names; a row whose length is not
      the header's is logged and skipped.

Both take a response, a C{str} or C{bytes} (UTF-8).
"""

import csv
import logging
from io import StringIO

logger = logging.getLogger(__name__)


def xmliter_lxml(obj, nodename, namespace=None, prefix="x"):
    """
    Each C{nodename} node of an XML document, read one at a time.

    @param obj: a response (a text response is read in its encoding, another as UTF-8),
        C{str} or C{bytes}.
    @param nodename: the nodes' local name; or C{prefix:name} with no C{namespace}, the
        prefix being one the document declares.
    @param namespace: the nodes' namespace URI; their selectors then know it as
        C{prefix}.
    @return: an iterator of L{tinyscrapy.selector.Selector}, each the node as the root of
        its own document.
    @raise TypeError: C{obj} is none of the three.
    """
    from lxml import etree

    from tinyscrapy.selector.unified import Selector
    body, encoding = _xml_bytes(obj)
    resolve_prefix = not namespace and ":" in nodename
    if resolve_prefix:
        prefix, nodename = nodename.split(":", 1)
    tag = f"{{{namespace}}}{nodename}" if namespace else nodename
    events = etree.iterparse(_Reader(body), encoding=encoding, events=("end", "start-ns"),
                             resolve_entities=False, huge_tree=True)
    for event, data in events:
        if event == "start-ns":
            declared_prefix, uri = data
            if resolve_prefix and declared_prefix == prefix:
                namespace, resolve_prefix = uri, False
                tag = f"{{{namespace}}}{nodename}"
            continue
        if data.tag != tag:
            continue
        text = etree.tostring(data, encoding="unicode")
        data.clear()
        selector = Selector(text=text, type="xml")
        if namespace:
            selector.register_namespace(prefix, namespace)
        yield selector.xpath(f"/{prefix}:{nodename}" if namespace else f"/{nodename}")[0]


def _xml_bytes(obj):
    """C{(body, encoding)} of what L{xmliter_lxml} reads, leading white space dropped (an
    XML declaration must come first)."""
    from tinyscrapy.http.response import Response
    from tinyscrapy.http.response.text import TextResponse
    if isinstance(obj, TextResponse):
        return obj.body.lstrip(), obj.encoding
    if isinstance(obj, Response):
        return obj.body.lstrip(), "utf-8"
    if isinstance(obj, str):
        return obj.lstrip().encode("utf-8"), "utf-8"
    if isinstance(obj, bytes):
        return obj.lstrip(), "utf-8"
    raise _wrong_type(obj)


class _Reader:
    """A body as the file C{iterparse} reads, in slices."""

    def __init__(self, body):
        self._body = body
        self._at = 0

    def read(self, size=65536):
        start, self._at = self._at, self._at + size
        return self._body[start:self._at]


def csviter(obj, delimiter=None, headers=None, encoding=None, quotechar=None):
    """
    Each row of a CSV document, as a dict from the column names.

    @param obj: a response (its text; a binary response read as UTF-8), C{str} or
        C{bytes} (UTF-8).
    @param delimiter: the field separator (C{","} by default).
    @param headers: the column names; None reads them from the first row.
    @param encoding: ignored (Scrapy's signature; deprecated there too).
    @param quotechar: the quote character (C{'"'} by default).
    @return: an iterator of dicts; a row with more or fewer fields than the header is
        logged (a warning with its line number) and skipped.
    @raise TypeError: C{obj} is none of the three.
    """
    options = {}
    if delimiter:
        options["delimiter"] = delimiter
    if quotechar:
        options["quotechar"] = quotechar
    reader = csv.reader(StringIO(_body_or_str(obj)), **options)
    if not headers:
        headers = next(reader, None)
        if headers is None:
            return
    for row in reader:
        if len(row) != len(headers):
            logger.warning("ignoring row %(csvlnum)d (length: %(csvrow)d, should be: "
                           "%(csvheader)d)%(where)s",
                           {"csvlnum": reader.line_num, "csvrow": len(row),
                            "csvheader": len(headers), "where": _where(obj)})
            continue
        yield dict(zip(headers, row, strict=True))


def _where(obj):
    url = getattr(obj, "url", None)
    return f" of {url}" if url else ""


def _body_or_str(obj, unicode=True):
    """C{obj}'s text (C{unicode}) or bytes: a text response's text, another response's
    body as UTF-8, a C{str}, C{bytes} as UTF-8 (the body, or the C{str} encoded, without
    C{unicode})."""
    from tinyscrapy.http.response import Response
    from tinyscrapy.http.response.text import TextResponse
    if isinstance(obj, Response):
        if not unicode:
            return obj.body
        return obj.text if isinstance(obj, TextResponse) else obj.body.decode("utf-8")
    if isinstance(obj, str):
        return obj if unicode else obj.encode("utf-8")
    if isinstance(obj, bytes):
        return obj.decode("utf-8") if unicode else obj
    raise _wrong_type(obj)


def _wrong_type(obj):
    return TypeError(f"Object {obj!r} must be Response or str or bytes, not "
                     f"{type(obj).__name__}")

"""L{XmlResponse}: an XML document, as Scrapy's C{scrapy.http.XmlResponse}."""

from tinyscrapy.http.response.text import TextResponse


class XmlResponse(TextResponse):
    """An XML document (RSS, Atom, sitemaps): its selector is an XML one."""

    selector_type = "xml"

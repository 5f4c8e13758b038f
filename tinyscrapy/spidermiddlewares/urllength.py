"""
L{UrlLengthMiddleware}: requests whose URL is longer than C{URLLENGTH_LIMIT} (2083, what
browsers long accepted; 0 switches the check off) are dropped
(L{tinyscrapy.exceptions.UrlTooLong}), as Scrapy's. tinyscrapy checks before the request
is queued (L{admit_request}), Scrapy in C{process_spider_output}.
"""

from tinyscrapy.exceptions import NotConfigured, UrlTooLong


class UrlLengthMiddleware:
    """The URL length limit, checked for every request before it is queued."""

    def __init__(self, maxlength):
        self.maxlength = maxlength

    @classmethod
    def from_crawler(cls, crawler):
        maxlength = crawler.settings.getint("URLLENGTH_LIMIT")
        if not maxlength:
            raise NotConfigured("URLLENGTH_LIMIT is 0")
        return cls(maxlength)

    def admit_request(self, request, spider, parent=None, host=None, port=None):
        """@raise UrlTooLong: the URL is longer than C{URLLENGTH_LIMIT}."""
        if len(request.url) > self.maxlength:
            raise UrlTooLong(f"URL is {len(request.url)} characters long")

"""
L{DownloaderStats}: Scrapy's downloader counters as a middleware.

tinyscrapy's downloader counts every transfer itself (C{downloader/request_count},
C{downloader/response_status_count/<status>}, C{downloader/exception_type_count/<class>},
bytes on the wire and decoded: L{tinyscrapy.core.downloader}), so this middleware is not
among the built-in ones: the downloader's counts leave out the requests the HTTP cache
answers, which never reach a transfer. Add it to C{DOWNLOADER_MIDDLEWARES} for Scrapy's
counts under C{downloader_mw/...} (what it sees at its place in the chain), or build it in
a component's own tests.
"""

from tinyscrapy.exceptions import NotConfigured
from tinyscrapy.utils.python import to_bytes
from tinyscrapy.utils.request import request_httprepr


def get_header_size(headers):
    """The bytes C{headers} take in an HTTP message (C{Name: value} lines, joined by
    CRLF), as Scrapy counts them."""
    size = 0
    for name, values in headers.items():
        if isinstance(values, (list, tuple)):
            size += sum(len(b": ") + len(name) + len(value) for value in values)
    return size + len(b"\r\n") * (len(headers) - 1)


def get_status_size(response_status):
    """The bytes of an HTTP/1.1 status line with C{response_status}'s reason, its CRLF
    included."""
    from twisted.web.http import RESPONSES
    return len(to_bytes(RESPONSES.get(response_status, b""))) + 15


class DownloaderStats:
    """Count the requests, responses and exceptions that pass it."""

    def __init__(self, stats, prefix="downloader_mw"):
        self.stats = stats
        self.prefix = prefix

    @classmethod
    def from_crawler(cls, crawler):
        """@raise NotConfigured: C{DOWNLOADER_STATS} is False."""
        if not crawler.settings.getbool("DOWNLOADER_STATS", True):
            raise NotConfigured("DOWNLOADER_STATS is False")
        return cls(crawler.stats)

    def process_request(self, request, spider=None):
        prefix = self.prefix
        self.stats.inc_value(f"{prefix}/request_count")
        self.stats.inc_value(f"{prefix}/request_method_count/{request.method}")
        self.stats.inc_value(f"{prefix}/request_bytes", len(request_httprepr(request)))

    def process_response(self, request, response, spider=None):
        prefix = self.prefix
        self.stats.inc_value(f"{prefix}/response_count")
        self.stats.inc_value(f"{prefix}/response_status_count/{response.status}")
        size = len(response.body) + get_header_size(response.headers) + \
            get_status_size(response.status) + 4
        self.stats.inc_value(f"{prefix}/response_bytes", size)
        return response

    def process_exception(self, request, exception, spider=None):
        cls = type(exception)
        self.stats.inc_value(f"{self.prefix}/exception_count")
        self.stats.inc_value(
            f"{self.prefix}/exception_type_count/{cls.__module__}.{cls.__qualname__}")

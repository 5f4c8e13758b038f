"""
L{DefaultHeadersMiddleware}: each of C{DEFAULT_REQUEST_HEADERS} a request lacks, as
Scrapy's; a request's own headers always win. A credential among them (C{Authorization},
C{Cookie}, C{Proxy-Authorization}) is not added to a redirect's hop on another origin than
the chain's first (Scrapy adds it again there, after its redirect middleware dropped it).
"""

from tinyscrapy.http.headers import Headers
from tinyscrapy.utils.request import left_its_origin

_CREDENTIALS = (b"Authorization", b"Cookie", b"Proxy-Authorization")


class DefaultHeadersMiddleware:
    """Set each of C{DEFAULT_REQUEST_HEADERS} on every request that lacks it."""

    def __init__(self, headers):
        self.headers = list(headers.items())
        # as stored in a request's Headers: normalised once, copied per request
        model = Headers(self.headers)
        self._stored = [(name, dict.__getitem__(model, name)) for name in model.keys()]
        self._elsewhere = [(name, values) for name, values in self._stored
                           if name not in _CREDENTIALS]

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings.getdict("DEFAULT_REQUEST_HEADERS"))

    def process_request(self, request, spider=None):
        stored = self._stored
        if len(stored) != len(self._elsewhere) and left_its_origin(request):
            stored = self._elsewhere
        headers = request.headers
        for name, values in stored:
            if not dict.__contains__(headers, name):
                dict.__setitem__(headers, name, list(values))

"""
L{DefaultHeadersMiddleware}: each of C{DEFAULT_REQUEST_HEADERS} a request lacks, as
Scrapy's; a request's own headers always win.
"""

from tinyscrapy.http.headers import Headers


class DefaultHeadersMiddleware:
    """Set each of C{DEFAULT_REQUEST_HEADERS} on every request that lacks it."""

    def __init__(self, headers):
        self.headers = list(headers.items())
        # as stored in a request's Headers: normalised once, copied per request
        model = Headers(self.headers)
        self._stored = [(name, dict.__getitem__(model, name)) for name in model.keys()]

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings.getdict("DEFAULT_REQUEST_HEADERS"))

    def process_request(self, request, spider=None):
        headers = request.headers
        for name, values in self._stored:
            if not dict.__contains__(headers, name):
                dict.__setitem__(headers, name, list(values))

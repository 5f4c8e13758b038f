"""
The request and the response as the standard library's L{http.cookiejar.CookieJar} wants
to see them (urllib's shapes), as Scrapy's C{scrapy.http.cookies} has them: the
L{tinyscrapy.downloadermiddlewares.cookies.CookiesMiddleware} keeps its jar with these.
"""

from urllib.parse import urlsplit

from tinyscrapy.http.headers import header_text


class WrappedRequest:
    """A L{tinyscrapy.http.Request} as L{http.cookiejar} wants to see it (urllib's shape)."""

    def __init__(self, request):
        self.request = request
        self._parts = urlsplit(request.url)
        self.type = self._parts.scheme
        self.host = self._parts.netloc.rpartition("@")[2]
        self.origin_req_host = hostname_of(request.url)
        self.unverifiable = False

    def get_full_url(self):
        return self.request.url

    def get_host(self):
        return self.host

    def get_type(self):
        return self.type

    def is_unverifiable(self):
        return self.unverifiable

    def get_origin_req_host(self):
        return self.origin_req_host

    def has_header(self, name):
        return name in self.request.headers

    def get_header(self, name, default=None):
        return header_text(self.request.headers.get(name, default))

    def header_items(self):
        return [(header_text(name), header_text(values[-1])) for name, values
                in self.request.header_items() if values]

    def add_unredirected_header(self, name, value):
        self.request.headers[name] = value


class WrappedResponse:
    """C{Set-Cookie} lines as L{http.cookiejar} wants to see a response."""

    def __init__(self, lines):
        self.lines = lines

    def info(self):
        return self

    def get_all(self, name, default=None):
        if name.lower() == "set-cookie":
            return self.lines or default
        return default


def hostname_of(url):
    """The lower-cased host of C{url}, or "" when it has none (or cannot be parsed)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""

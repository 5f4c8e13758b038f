"""
The request and the response as the standard library's L{http.cookiejar.CookieJar} wants
to see them (urllib's shapes), as Scrapy's C{scrapy.http.cookies} has them: the
L{tinyscrapy.downloadermiddlewares.cookies.CookiesMiddleware} keeps its jar with these.
L{CookieJar} is Scrapy's jar for code of a project's own: the standard library's, fed
tinyscrapy's requests and responses.
"""

from http.cookiejar import CookieJar as _StdCookieJar
from http.cookiejar import DefaultCookiePolicy
from urllib.parse import urlsplit

from tinyscrapy.http.headers import header_text


class CookieJar:
    """
    Scrapy's cookie jar: cookies kept from responses, sent back with requests by their
    domain, path, expiry and C{Secure} rules (the standard library's jar does the work).

    @ivar jar: the standard library's C{http.cookiejar.CookieJar}.
    @ivar policy: its C{CookiePolicy}.
    """

    def __init__(self, policy=None, check_expired_frequency=10000):
        self.policy = policy or DefaultCookiePolicy()
        self.jar = _StdCookieJar(self.policy)
        self.check_expired_frequency = check_expired_frequency
        self.processed = 0

    def extract_cookies(self, response, request):
        """Keep the cookies C{response}'s C{Set-Cookie} lines set, for C{request}."""
        self.jar.extract_cookies(_wrapped_response(response), WrappedRequest(request))

    def add_cookie_header(self, request):
        """Give C{request} a C{Cookie} header of the cookies it should carry (unless it
        has one)."""
        self.jar.add_cookie_header(WrappedRequest(request))
        self.processed += 1
        if self.processed % self.check_expired_frequency == 0:
            self.jar.clear_expired_cookies()

    def make_cookies(self, response, request):
        """@return: the cookies C{response} sets, not kept."""
        return self.jar.make_cookies(_wrapped_response(response), WrappedRequest(request))

    def set_cookie(self, cookie):
        self.jar.set_cookie(cookie)

    def set_cookie_if_ok(self, cookie, request):
        self.jar.set_cookie_if_ok(cookie, WrappedRequest(request))

    def clear_session_cookies(self):
        self.jar.clear_session_cookies()

    def clear(self, domain=None, path=None, name=None):
        self.jar.clear(domain, path, name)

    def set_policy(self, policy):
        self.jar.set_policy(policy)

    @property
    def _cookies(self):
        return self.jar._cookies  # the standard library's own table: no public name

    def __iter__(self):
        return iter(self.jar)

    def __len__(self):
        return len(self.jar)


def _wrapped_response(response):
    return WrappedResponse(response)


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
    """C{Set-Cookie} lines as L{http.cookiejar} wants to see a response.

    @param lines: the lines (text), or a response (Scrapy's argument) to read them from.
    """

    def __init__(self, lines):
        headers = getattr(lines, "headers", None)
        if headers is not None:
            self.response = lines
            lines = [header_text(line) for line in headers.getlist(b"Set-Cookie")]
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

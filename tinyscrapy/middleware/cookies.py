"""
L{CookiesMiddleware}: cookies kept per crawl, in the standard library's
L{http.cookiejar.CookieJar}, and sent back by its domain, path, expiry and C{Secure} rules.

One crawl (one spider) has its own jars; C{meta["cookiejar"]} names a jar, so one spider can
keep several sessions apart (requests without it share the default jar). A site can only set
cookies for itself and its parent domains, never for another host, and a cookie goes only to
the hosts its domain covers: a redirect to another host carries none of the first host's.

A C{Cookie} header a spider sets itself is taken into the jar for the request's host, so it
follows the same rules (it is not sent on to another host after a redirect).
C{meta["dont_merge_cookies"]} leaves a request's C{Cookie} header, and its response's
C{Set-Cookie}, alone.
"""

import logging
import re
import time
from collections import defaultdict
from http.cookiejar import Cookie, CookieJar
from urllib.parse import urlsplit

from tinyscrapy.errors import NotConfigured

logger = logging.getLogger(__name__)

_IPV4 = re.compile(r"^\d+\.\d+\.\d+\.\d+$")


class CookiesMiddleware:
    """
    Send the jar's cookies with each request; keep each response's C{Set-Cookie}.

    @ivar jars: L{CookieJar} by C{meta["cookiejar"]} key (None: the default jar).
    """

    def __init__(self, debug=False):
        self.debug = debug
        self.jars = defaultdict(CookieJar)

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.getbool("COOKIES_ENABLED"):
            raise NotConfigured("COOKIES_ENABLED is off")
        return cls(crawler.settings.getbool("COOKIES_DEBUG"))

    def process_request(self, request, spider):
        meta = request.meta
        if meta.get("dont_merge_cookies"):
            return
        jar = self.jars[meta.get("cookiejar")]
        headers = request.headers
        current = headers.get("Cookie")
        if current is not None:
            current = current.decode("latin-1")
            if current != meta.get("_jar_cookie"):  # set by the spider, not by us
                _adopt(jar, request.url, current)
            headers.pop("Cookie", None)
        value = _cookie_header(jar, request)
        if value:
            headers["Cookie"] = meta["_jar_cookie"] = value
            if self.debug:
                logger.debug("Sending cookies to %r: Cookie: %s", request, value)
        else:
            meta.pop("_jar_cookie", None)

    def process_response(self, request, response, spider):
        meta = request._meta
        if meta and meta.get("dont_merge_cookies"):
            return response
        set_cookies = [value.decode("latin-1")
                       for value in response.headers.getlist("Set-Cookie")]
        if set_cookies:
            jar = self.jars[meta.get("cookiejar") if meta else None]
            jar.extract_cookies(_JarResponse(response), _JarRequest(request))
            if self.debug:
                logger.debug("Received cookies from %r: %s", response,
                             " | ".join(set_cookies))
        return response


def _cookie_header(jar, request):
    """
    The C{Cookie} value the jar holds for C{request}, or None.

    L{CookieJar.add_cookie_header} looks at every domain in the jar, which grows with a
    broad crawl; as in Scrapy, only the domains that can match the request's host are read
    (through the jar's own C{_cookies_for_domain} and C{_cookie_attrs}).
    """
    if not jar._cookies:
        return None
    host = _hostname(request.url)
    if not host:
        return None
    wrapped = _JarRequest(request)
    jar._policy._now = jar._now = int(time.time())
    cookies = []
    for domain in _candidate_domains(host):
        if domain in jar._cookies:
            cookies.extend(jar._cookies_for_domain(domain, wrapped))
    attrs = jar._cookie_attrs(cookies)
    return "; ".join(attrs) if attrs else None


def _candidate_domains(host):
    """The jar keys a cookie for C{host} can be stored under: C{a.b.c}, C{.a.b.c}, C{.b.c}..."""
    if _IPV4.match(host) or ":" in host:
        return [host]
    if "." not in host:
        return [host, host + ".local", "." + host + ".local"]
    candidates = [host]
    labels = host.split(".")
    for start in range(len(labels) - 1):
        candidates.append("." + ".".join(labels[start:]))
    return candidates


def _adopt(jar, url, header):
    """Put the cookies of a spider's own C{Cookie} header in C{jar}, for C{url}'s host only."""
    host = _hostname(url)
    if not host:
        return
    if "." not in host:  # how the jar itself keys a dotless host (RFC 2965's rule)
        host += ".local"
    for pair in header.split(";"):
        name, sep, value = pair.strip().partition("=")
        if not sep or not name:
            continue
        jar.set_cookie(Cookie(
            version=0, name=name, value=value, port=None, port_specified=False,
            domain=host, domain_specified=False, domain_initial_dot=False, path="/",
            path_specified=True, secure=False, expires=None, discard=True, comment=None,
            comment_url=None, rest={}))


def _hostname(url):
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


class _JarRequest:
    """A L{tinyscrapy.http.Request} as L{http.cookiejar} wants to see it (urllib's shape)."""

    def __init__(self, request):
        self.request = request
        self._parts = urlsplit(request.url)
        self.type = self._parts.scheme
        self.host = self._parts.netloc.rpartition("@")[2]
        self.origin_req_host = _hostname(request.url)
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
        value = self.request.headers.get(name)
        return default if value is None else value.decode("latin-1")

    def header_items(self):
        return [(name.decode("latin-1"), values[-1].decode("latin-1"))
                for name, values in self.request.headers.items() if values]

    def add_unredirected_header(self, name, value):
        self.request.headers[name] = value


class _JarResponse:
    """A L{tinyscrapy.http.HttpResponse} as L{http.cookiejar} wants to see it."""

    def __init__(self, response):
        self.response = response

    def info(self):
        return self

    def get_all(self, name, default=None):
        return [value.decode("latin-1") for value in self.response.headers.getlist(name)] \
            or default

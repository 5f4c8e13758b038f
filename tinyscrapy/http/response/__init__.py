"""
What came back for a L{Request}: L{Response} and its kinds, as Scrapy has them.

    Response                 any body, as bytes (an image, a PDF, an archive)
      TextResponse           a decoded body: .text, .css(), .xpath(), .json(), .follow()
        HtmlResponse         text/html, XHTML
        XmlResponse          application/xml, text/xml, RSS, Atom
        JsonResponse         application/json

The class comes from the C{Content-Type} as Scrapy's C{responsetypes} chooses it, and
C{HttpResponse}, TinyScrapy's name for any response, is made there too
(L{tinyscrapy.responsetypes}). The text kinds live in L{tinyscrapy.http.response.text},
L{tinyscrapy.http.response.html}, L{tinyscrapy.http.response.xml} and
L{tinyscrapy.http.response.json}; links are joined by L{tinyscrapy.utils.url}.
"""

from tinyscrapy.exceptions import NotSupported
from tinyscrapy.http.headers import Headers
from tinyscrapy.http.request import Request
from tinyscrapy.utils.trackref import object_ref


class NotTextResponse(AttributeError, NotSupported):
    """C{.text}, C{.css()} or C{.xpath()} was used on an image, a PDF or other binary body
    (Scrapy raises C{AttributeError} for C{.text}, C{NotSupported} for the selectors: this
    is both)."""


class Response(object_ref):
    """
    A downloaded body, as bytes. C{url} and C{body} are read-only (L{replace} makes a
    changed copy).

    @ivar request: the L{Request} that was downloaded (after redirects, the last hop).
    @ivar flags: marks set on the way, as in Scrapy: C{"cached"} when the HTTP cache
        answered instead of the server.
    @cvar attributes: the arguments L{replace} carries over.
    """

    attributes = ("url", "headers", "body", "flags", "status", "request", "certificate",
                  "ip_address", "protocol")

    def __init__(self, url, status=200, headers=None, body=b"", flags=None, request=None,
                 certificate=None, ip_address=None, protocol=None):
        if isinstance(flags, Request) and request is None:
            # tinyscrapy's order of old, (url, status, headers, body, request)
            flags, request = None, flags
        self._headers = Headers(headers) if headers else None
        self.status = int(status)
        self._set_body(body)
        if not isinstance(url, str):
            raise TypeError(f"{type(self).__name__} url must be str, got {type(url).__name__}")
        self._url = url
        self.request = request
        self.flags = list(flags) if flags else []
        self.certificate = certificate
        self.ip_address = ip_address
        self.protocol = protocol

    def _set_body(self, body):
        if body is None:
            body = b""
        elif not isinstance(body, bytes):
            raise TypeError("Response body must be bytes. If you want to pass unicode body "
                            "use TextResponse or HtmlResponse.")
        self._body = body

    @property
    def url(self):
        return self._url

    @property
    def body(self):
        return self._body

    @property
    def headers(self):
        """The response's L{Headers} (a copy of those given to the constructor)."""
        if self._headers is None:
            self._headers = Headers()
        return self._headers

    @headers.setter
    def headers(self, value):
        self._headers = value if isinstance(value, Headers) or value is None \
            else Headers(value)

    @property
    def meta(self):
        """The request's C{meta} (in a crawl it holds C{"depth"}, as Scrapy's; the scraper
        writes it before the callback). @raise AttributeError: no request."""
        if self.request is None:
            raise AttributeError(
                "Response.meta not available, this response is not tied to any request")
        return self.request.meta

    @property
    def cb_kwargs(self):
        """The request's C{cb_kwargs}. @raise AttributeError: no request."""
        if self.request is None:
            raise AttributeError("Response.cb_kwargs not available, this response is not "
                                 "tied to any request")
        return self.request.cb_kwargs

    is_text = False
    is_html = False

    def __repr__(self):
        return f"<{self.status} {self.url}>"

    __str__ = __repr__

    def copy(self):
        """L{replace} with no change."""
        return self.replace()

    def replace(self, *args, cls=None, **changes):
        """A new response with some arguments changed, of class C{cls} if given."""
        for name in self.attributes:
            changes.setdefault(name, getattr(self, name))
        return (cls or type(self))(*args, **changes)

    # -- what only text has --------------------------------------------------------

    def _not_text(self, exception=NotTextResponse):
        content_type = self.headers.get(b"Content-Type")
        kind = content_type.decode("latin-1") if content_type else "binary content"
        return exception(f"Response content isn't text: {self.url} is {kind}; .text, "
                         f".css() and .xpath() work on HTML, XML, JSON and other text; "
                         f"use .body")

    @property
    def text(self):
        """@raise NotTextResponse: always, as this body is not text."""
        raise self._not_text()

    def css(self, *args, **kwargs):
        raise self._not_text()

    def xpath(self, *args, **kwargs):
        raise self._not_text()

    def jmespath(self, *args, **kwargs):
        raise self._not_text()

    # -- links ---------------------------------------------------------------------

    def urljoin(self, url):
        """C{url} resolved against this response's URL."""
        from urllib.parse import urljoin
        return urljoin(self.url, url)

    def follow(self, url, callback=None, method="GET", headers=None, body=None,
               cookies=None, meta=None, encoding="utf-8", priority=0, dont_filter=False,
               errback=None, cb_kwargs=None, flags=None, **kwargs):
        """
        A L{Request} for C{url} (a string or a L{tinyscrapy.link.Link}), relative
        URLs resolved, one link deeper than this response's request.

        @raise ValueError: C{url} or C{encoding} is None (a text response's C{follow}
            takes None for the page's encoding).
        """
        url = _link_url(url)
        if encoding is None:
            raise ValueError("encoding can't be None")
        if self.request is not None:
            kwargs.setdefault("depth", self.request.depth + 1)
        return Request(self.urljoin(url), callback=callback, method=method, headers=headers,
                       body=body, cookies=cookies, meta=meta, encoding=encoding,
                       priority=priority, dont_filter=dont_filter, errback=errback,
                       cb_kwargs=cb_kwargs, flags=flags, **kwargs)

    def follow_all(self, urls, callback=None, **kwargs):
        """One L{follow} per URL of C{urls}. @raise TypeError: C{urls} is not iterable."""
        if not hasattr(urls, "__iter__"):
            raise TypeError("'urls' argument must be an iterable")
        return [self.follow(url, callback, **kwargs) for url in urls]


def _link_url(url):
    if url is None:
        raise ValueError("url can't be None")
    if not isinstance(url, str):
        url = getattr(url, "url", url)
    return url


# -- which class: Scrapy's responsetypes --------------------------------------------

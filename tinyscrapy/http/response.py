"""
What came back for a L{Request}: L{Response} and its kinds, as Scrapy has them.

    Response                 any body, as bytes (an image, a PDF, an archive)
      TextResponse           a decoded body: .text, .css(), .xpath(), .json(), .follow()
        HtmlResponse         text/html, XHTML
        XmlResponse          application/xml, text/xml, RSS, Atom
        JsonResponse         application/json

The class comes from the C{Content-Type} as Scrapy's C{responsetypes} chooses it
(L{response_class}); whoever builds a downloaded response calls L{response_for}, so that
C{isinstance(response, HtmlResponse)} holds for a page and not for a PDF.

C{HttpResponse}, TinyScrapy's name, is what the core and the docs teach with: not one more
class but a name for I{any} response. C{isinstance(r, HttpResponse)} holds for every
L{Response}, and calling it, C{HttpResponse(url, status, headers, body, request)}, is
L{response_for}: the right kind for the headers. (An alias of the base would make
C{HttpResponse(url, 200, {"Content-Type": "text/html"}, body)} a binary response without
C{.text}, which is not what a reader of the chapter expects.)

The text kinds live in L{tinyscrapy.http.textresponse}; links are joined by
L{tinyscrapy.http.linkjoin}.
"""

from abc import ABCMeta

from tinyscrapy.errors import NotSupported
from tinyscrapy.http.charsets import text_type
from tinyscrapy.http.headers import Headers
from tinyscrapy.http.request import Request, request_url  # noqa: F401 - the crawl spider's


class NotTextResponse(AttributeError, NotSupported):
    """C{.text}, C{.css()} or C{.xpath()} was used on an image, a PDF or other binary body
    (Scrapy raises C{AttributeError} for C{.text}, C{NotSupported} for the selectors: this
    is both)."""


class Response:
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
        A L{Request} for C{url} (a string or a L{tinyscrapy.scope.links.Link}), relative
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

_CLASSES = {
    "text/html": "HtmlResponse",
    "application/xhtml+xml": "HtmlResponse",
    "application/vnd.wap.xhtml+xml": "HtmlResponse",
    "application/atom+xml": "XmlResponse",
    "application/rdf+xml": "XmlResponse",
    "application/rss+xml": "XmlResponse",
    "application/xml": "XmlResponse",
    "text/xml": "XmlResponse",
    "application/json": "JsonResponse",
    "application/x-json": "JsonResponse",
    "application/json-amazonui-streaming": "JsonResponse",
    "application/javascript": "TextResponse",
    "application/x-javascript": "TextResponse",
    "text/*": "TextResponse",
}
_BINARY_BYTES = frozenset(range(32)) - {0, 9, 10, 13}
_by_name = {}


def _named(name):
    if not _by_name:
        from tinyscrapy.http import textresponse
        _by_name.update({kind: getattr(textresponse, kind) for kind in set(_CLASSES.values())})
    return _by_name[name] if name else Response


def class_for_type(mimetype):
    """The class for a media type (C{"text/html"}), else its C{main/*}, else L{Response}."""
    name = _CLASSES.get(mimetype) or _CLASSES.get(mimetype.partition("/")[0] + "/*")
    return _named(name)


def _from_filename(name):
    import mimetypes
    guessed, encoding = mimetypes.guess_type(name, strict=False)
    return class_for_type(guessed) if guessed and not encoding else Response


def _from_body(body):
    head = body[:5000]
    if any(byte in _BINARY_BYTES for byte in head):
        return Response
    lower = head.lower()
    if b"<html>" in lower or b"<!doctype html>" in lower:
        return _named("HtmlResponse")
    if b"<?xml" in lower:
        return _named("XmlResponse")
    return _named("TextResponse")


def response_class(headers=None, url=None, body=None):
    """
    The response class Scrapy's C{responsetypes.from_args} chooses: from the
    C{Content-Type} (a C{Content-Encoding} still on the body means binary), else the
    file name of C{Content-Disposition}, else the URL's extension, else a look at the
    body (control bytes: binary; C{<html>}: HTML; C{<?xml}: XML; else text).

    One difference: a C{Content-Type} that names a type Scrapy does not map decides by
    itself (L{tinyscrapy.http.charsets.text_type}: text families are L{TextResponse},
    the rest binary) instead of falling through to the URL and the body.
    """
    cls = Response
    if headers:
        content_type = headers.get(b"Content-Type")
        if content_type is not None:
            if headers.get(b"Content-Encoding"):
                return Response
            decided = _DECLARED.get(content_type)  # a crawl meets a few types, again and again
            if decided is not None:
                return decided
            mimetype = content_type.decode("latin-1").split(";")[0].strip().lower()
            cls = class_for_type(mimetype)
            if cls is not Response:
                _remember(content_type, cls)
            elif mimetype != "application/octet-stream":
                # tinyscrapy: a declared type decides (docs/differences.md); a PDF whose
                # body looks like HTML stays binary, an application/x-ndjson is text
                verdict = text_type(mimetype)
                if verdict is not None:
                    return _remember(content_type,
                                     _named("TextResponse") if verdict else Response)
        if cls is Response and b"Content-Disposition" in headers:
            disposition = headers[b"Content-Disposition"].decode("latin-1", "replace")
            try:
                cls = _from_filename(disposition.split(";")[1].split("=")[1].strip("\"'"))
            except IndexError:
                pass
    if cls is Response and url is not None:
        cls = _from_filename(url)
    if cls is Response and body is not None:
        cls = _from_body(body)
    return cls


# Content-Type values (as sent) whose class the type alone decides, and that class
_DECLARED = {}


def _remember(content_type, cls):
    if len(_DECLARED) < 256:
        _DECLARED[content_type] = cls
    return cls


def response_for(url, status=200, headers=None, body=b"", request=None, **kwargs):
    """
    The response of the right class (L{response_class}) for a download: what the
    download path, the HTTP cache and tests build responses with. C{headers} (a
    L{Headers} made for this response, a mapping or pairs) is not copied when it is a
    L{Headers}.
    """
    if not isinstance(headers, Headers):
        headers = Headers(headers)
    response = response_class(headers, url, body)(url, status, None, body, request=request,
                                                  **kwargs)
    response.headers = headers
    return response


class HttpResponse(metaclass=ABCMeta):  # noqa: B024 - a name for any Response
    """
    TinyScrapy's name for any response: C{isinstance(r, HttpResponse)} holds for every
    L{Response}, and C{HttpResponse(url, status, headers, body, request)} is
    L{response_for} (see the module docstring).
    """

    def __new__(cls, url, status=200, headers=None, body=b"", request=None, flags=None,
                **kwargs):
        if isinstance(flags, Request) and request is None:
            flags, request = None, flags
        return response_for(url, status, headers, body, request, flags=flags, **kwargs)


HttpResponse.register(Response)

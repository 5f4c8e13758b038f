"""
Which response class a download gets, as Scrapy's C{scrapy.responsetypes} chooses it, and
C{HttpResponse}, TinyScrapy's name for any response.

The class comes from the C{Content-Type} (L{response_class}); whoever builds a downloaded
response calls L{response_for}, so that C{isinstance(response, HtmlResponse)} holds for a
page and not for a PDF. L{text_type}, L{is_text} and L{is_html} are the verdicts on media
types (and, where none is declared, on a sniff of the body) behind it.

C{HttpResponse}, TinyScrapy's name, is what the core and the docs teach with: not one more
class but a name for I{any} response. C{isinstance(r, HttpResponse)} holds for every
L{Response}, and calling it, C{HttpResponse(url, status, headers, body, request)}, is
L{response_for}: the right kind for the headers. (An alias of the base would make
C{HttpResponse(url, 200, {"Content-Type": "text/html"}, body)} a binary response without
C{.text}, which is not what a reader of the chapter expects.)
"""

from abc import ABCMeta
from functools import lru_cache

from tinyscrapy.http.headers import Headers
from tinyscrapy.http.request import Request
from tinyscrapy.http.response import Response
from tinyscrapy.http.response.html import HtmlResponse
from tinyscrapy.http.response.json import JsonResponse
from tinyscrapy.http.response.text import TextResponse, _utf16_sniff
from tinyscrapy.http.response.xml import XmlResponse

_TEXT_APPLICATION = frozenset({
    "json", "javascript", "ecmascript", "x-javascript", "x-ecmascript", "xml", "xhtml+xml",
    "x-www-form-urlencoded", "ndjson", "x-ndjson", "jsonl", "x-jsonlines", "yaml",
    "x-yaml", "csv", "x-csv", "graphql", "sql", "rtf", "x-sh", "x-tex", "x-latex",
})
_BINARY_MAGIC = (b"\x89PNG", b"GIF87a", b"GIF89a", b"\xff\xd8\xff", b"%PDF-", b"PK\x03\x04",
                 b"\x1f\x8b", b"BM", b"RIFF", b"OggS", b"ID3", b"\x00\x00\x01\x00",
                 b"wOFF", b"wOF2", b"7z\xbc\xaf", b"Rar!", b"BZh", b"\xfd7zXZ",
                 b"\x00asm", b"\x7fELF", b"MZ", b"\xd0\xcf\x11\xe0", b"\x28\xb5\x2f\xfd")
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
# mimesniff's "binary data bytes": control characters no text format uses
_BINARY_BYTES = bytes([*range(0, 9), 11, *range(14, 27), *range(28, 32)])


def media_type(content_type):
    """C{"text/html; charset=utf-8"} -> C{"text/html"} (lower case; "" when missing)."""
    if not content_type:
        return ""
    return content_type.partition(";")[0].strip().lower()


@lru_cache(maxsize=512)
def text_type(content_type):
    """
    @return: True for a text media type, False for a binary one, None when
        C{content_type} names no usable type (then the body decides).
    """
    media = media_type(content_type)
    main, slash, sub = media.partition("/")
    if not slash or not main or not sub or "*" in media:
        return None
    if main == "text":
        return True
    if sub.endswith(("+xml", "+json")):
        return True
    return main == "application" and sub in _TEXT_APPLICATION


def is_text(content_type, body):
    """Is this body text (True) or binary (False)? See the module docstring."""
    verdict = text_type(content_type) if content_type else None
    if verdict is False:
        return False
    if verdict and not media_type(content_type) == "text/plain":
        return True
    # no usable type, or text/plain, which browsers check too (mimesniff): servers
    # label unknown files text/plain
    head = body[:512]
    if head.startswith(_BOMS):
        return True
    if head.startswith(_BINARY_MAGIC):
        return False
    if _utf16_sniff(head):
        return True
    return not any(byte in _BINARY_BYTES for byte in head)


_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml"})


def is_html(content_type, body):
    """
    Is this body HTML, what Scrapy makes an C{HtmlResponse} of? The C{Content-Type}
    decides (C{text/html}, XHTML); a body without a usable one is HTML when it is text
    with C{<html} or C{<!doctype html} in its first 5,000 bytes (Scrapy looks for
    C{<html>} there).
    """
    if content_type and text_type(content_type) is not None:
        return media_type(content_type) in _HTML_TYPES
    head = body[:5000].lower()
    return (b"<html" in head or b"<!doctype html" in head) and is_text(None, body)



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
_CONTROL_BYTES = frozenset(range(32)) - {0, 9, 10, 13}
_KINDS = {"TextResponse": TextResponse, "HtmlResponse": HtmlResponse,
          "XmlResponse": XmlResponse, "JsonResponse": JsonResponse}


def _named(name):
    return _KINDS[name] if name else Response


def class_for_type(mimetype):
    """The class for a media type (C{"text/html"}), else its C{main/*}, else L{Response}."""
    name = _CLASSES.get(mimetype) or _CLASSES.get(mimetype.partition("/")[0] + "/*")
    return _named(name)


def _from_filename(name):
    import mimetypes
    guessed, encoding = mimetypes.guess_type(name, strict=False)
    return class_for_type(guessed) if guessed and not encoding else Response


def _from_disposition(disposition):
    """The class the file name of a C{Content-Disposition} value tells (L{Response}
    without one)."""
    if isinstance(disposition, bytes):
        disposition = disposition.decode("latin-1", "replace")
    try:
        return _from_filename(disposition.split(";")[1].split("=")[1].strip("\"' "))
    except IndexError:
        return Response


def _from_body(body):
    head = body[:5000]
    if any(byte in _CONTROL_BYTES for byte in head):
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
    itself (L{text_type}: text families are L{TextResponse},
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
            cls = _from_disposition(headers[b"Content-Disposition"])
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


class ResponseTypes:
    """
    Scrapy's C{ResponseTypes} (its instance is L{responsetypes}): the response class by one
    clue at a time, each method a door to the functions above.
    """

    def from_mimetype(self, mimetype):
        """The class for a media type; L{Response} for None or an unknown one."""
        return class_for_type(mimetype.lower()) if mimetype else Response

    def from_content_type(self, content_type, content_encoding=None):
        """The class for a C{Content-Type} value; a body still encoded is binary."""
        if content_encoding:
            return Response
        if isinstance(content_type, bytes):
            content_type = content_type.decode("latin-1")
        return self.from_mimetype(content_type.split(";")[0].strip())

    def from_content_disposition(self, content_disposition):
        """The class for the file name a C{Content-Disposition} value gives, if any."""
        return _from_disposition(content_disposition)

    def from_headers(self, headers):
        """The class the headers tell (C{Content-Type}, then C{Content-Disposition})."""
        return response_class(headers=headers)

    def from_filename(self, filename):
        """The class a file name's extension tells."""
        return _from_filename(filename)

    def from_body(self, body):
        """The class a look at the body tells."""
        return _from_body(body)

    def from_args(self, headers=None, url=None, filename=None, body=None):
        """The class all the clues given tell, in L{response_class}'s order (a file
        name after the headers, before the URL)."""
        if headers:
            cls = response_class(headers=headers)
            if cls is not Response:
                return cls
        if filename is not None:
            cls = _from_filename(filename)
            if cls is not Response:
                return cls
        return response_class(url=url, body=body)


responsetypes = ResponseTypes()


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

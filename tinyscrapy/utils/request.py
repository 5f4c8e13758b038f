"""
Scrapy's C{scrapy.utils.request}: a request's identity (its fingerprint) and its text
forms.

A page is one page however a site spells the link: the fingerprint is taken over the
method, the canonical URL (L{tinyscrapy.utils.url.canonical_url}: fragment dropped, query
arguments sorted, scheme and host lower-cased, default port dropped, dot segments
resolved, percent-encoding normalised) and the body. L{request_fingerprint} gives it as a
64-bit C{int}, what the duplicate filter keeps; L{fingerprint} as Scrapy's API has it,
C{bytes} (8 of them, not Scrapy's 20: docs/differences.md).

The crawl's fingerprinter, as Scrapy's API has it: C{crawler.request_fingerprinter} is an
object whose C{fingerprint(request)} returns C{bytes}, built from the class
C{REQUEST_FINGERPRINTER_CLASS} names (L{RequestFingerprinter} by default). The duplicate
filter keeps 64-bit integers; a project's own fingerprinter is read into one (L{as_int})
only when the setting names one, so a crawl with the default pays nothing.

Also here, as Scrapy keeps them: L{request_httprepr} (the HTTP/1.1 message a request
stands for), L{request_from_dict} (the inverse of C{Request.to_dict}), L{referer_str}, and
C{request_to_curl} (from L{tinyscrapy.utils.curl}).
"""

from hashlib import blake2b
from typing import Protocol

from tinyscrapy.exceptions import UsageError
from tinyscrapy.utils.curl import request_to_curl
from tinyscrapy.utils.httpobj import urlparse_cached
from tinyscrapy.utils.misc import build, load_object
from tinyscrapy.utils.python import to_bytes, to_unicode
from tinyscrapy.utils.url import canonical_url


def request_httprepr(request):
    """
    The HTTP/1.1 message C{request} stands for, as C{bytes} (what Scrapy's
    C{request_httprepr} gives, for logs and stats of request sizes): the request line with
    the path and query (no fragment, no credentials), C{Host}, each header value on a line
    of its own, a blank line, the body. Not exactly what goes on the wire: the download
    adds C{Accept-Encoding} and may send through a proxy.
    """
    parts = urlparse_cached(request)
    path = parts.path or "/"
    if parts.params:
        path += ";" + parts.params
    if parts.query:
        path += "?" + parts.query
    lines = [to_bytes(request.method) + b" " + to_bytes(path) + b" HTTP/1.1",
             b"Host: " + to_bytes(parts.hostname or "")]
    for name, values in request.headers.items():
        lines.extend(name + b": " + value for value in values)
    return b"\r\n".join(lines) + b"\r\n\r\n" + request.body


def url_fingerprint(url, method="GET", body=b""):
    """
    A compact identity for a request: an C{int} of 64 bits over its method, canonical URL
    and body. At 64 bits, ten million URLs collide with a chance of about one in 300,000.

    The fields cannot run into each other: the hashed bytes begin with the length of
    each (C{GET /foo} and C{GET /f} with the body C{oo} hash different bytes).
    """
    return int.from_bytes(_digest(method, canonical_url(url), body).digest(), "big")


def _digest(method, url, body):
    """The BLAKE2b of the three fields, each after its length."""
    method = method.encode("ascii")
    url = url.encode("utf-8", "surrogatepass")
    digest = blake2b(b"%d,%d,%d:" % (len(method), len(url), len(body)), digest_size=8)
    digest.update(method)
    digest.update(url)
    if body:
        digest.update(body)
    return digest


def request_fingerprint(request):
    """L{url_fingerprint} of C{request}'s method, URL and body; with C{meta["verbatim_url"]}
    (a URL sent as written), of the URL as written, as Scrapy's fingerprint does."""
    meta = request._meta
    if meta and meta.get("verbatim_url"):
        digest = _digest(request.method, request.url, request.body)
        return int.from_bytes(digest.digest(), "big")
    return url_fingerprint(request.url, request.method, request.body)


def fingerprint(request, *, include_headers=None, keep_fragments=False):
    """
    Scrapy's C{scrapy.utils.request.fingerprint}: the request's identity as C{bytes} (8 of
    them: L{request_fingerprint}, not Scrapy's SHA-1), optionally telling apart requests
    that differ in the headers named by C{include_headers} (any casing) or, with
    C{keep_fragments}, in the URL's fragment. A request with C{meta["verbatim_url"]} is
    told apart by its URL as written, fragment included (as in Scrapy).
    """
    if not include_headers and not keep_fragments:
        return request_fingerprint(request).to_bytes(8, "big")
    meta = request._meta
    if meta and meta.get("verbatim_url"):
        url = request.url
    else:
        url = canonical_url(request.url)
        if keep_fragments and "#" in request.url:
            url += "#" + request.url.partition("#")[2]
    digest = _digest(request.method, url, request.body)
    for name in sorted({name.lower() for name in include_headers or ()}):
        values = request.headers.getlist(name)
        if values:
            encoded = name.encode("latin-1") if isinstance(name, str) else name
            joined = b"\0".join(values)
            digest.update(b"%d,%d:" % (len(encoded), len(joined)) + encoded + joined)
    return digest.digest()


class RequestFingerprinter:
    """Scrapy's default fingerprinter, here: C{fingerprint(request)} is
    L{tinyscrapy.utils.request.fingerprint} (8 bytes of BLAKE2b)."""

    def __init__(self, crawler=None):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def fingerprint(self, request):
        """@return: the identity of C{request}, C{bytes}."""
        return fingerprint(request)


def fingerprinter_for(crawler):
    """The fingerprinter C{crawler.settings["REQUEST_FINGERPRINTER_CLASS"]} names (a class or
    its dotted path), built as a component (C{from_crawler} when it has one)."""
    cls = load_object(crawler.settings.get("REQUEST_FINGERPRINTER_CLASS")
                      or RequestFingerprinter)
    return build(cls, crawler)


def as_int(fingerprinter):
    """
    The duplicate filter's fingerprint function for C{fingerprinter}: L{request_fingerprint}
    itself for the default one, else the first 8 bytes of its C{fingerprint(request)} as an
    integer.
    """
    if type(fingerprinter) is RequestFingerprinter:
        return request_fingerprint
    fingerprint_bytes = fingerprinter.fingerprint

    def custom_fingerprint(request):
        return int.from_bytes(fingerprint_bytes(request)[:8], "big")

    return custom_fingerprint


class RequestFingerprinterProtocol(Protocol):
    """What a fingerprinter is (Scrapy's typing protocol): C{fingerprint(request)}
    returns C{bytes}."""

    def fingerprint(self, request):
        ...


def referer_str(request):
    """The request's C{Referer} header as text for a log line (undecodable bytes
    replaced), or None when it has none."""
    referer = request.headers.get("Referer")
    if referer is None:
        return None
    return to_unicode(referer, errors="replace")


def request_from_dict(d, *, spider=None):
    """
    The request C{d} describes, as C{Request.to_dict} made it (Scrapy's
    C{request_from_dict}): its arguments, its class from C{"_class"}, its callback and
    errback, given by name, looked up on C{spider}.

    The class must be a L{Request} subclass: one already defined (L{Request.classes}) or
    one of tinyscrapy's own (Scrapy's C{scrapy.*} paths are read as tinyscrapy's); the
    dict never makes this import another module, since it may come from disk or Redis.

    @raise ValueError: a class this will not make, or a callback C{spider} lacks.
    """
    from tinyscrapy.http.request import Request
    cls = Request
    if "_class" in d:
        cls = _request_class(d["_class"])
    kwargs = {key: value for key, value in d.items() if key in cls.attributes}
    if spider is not None:
        for key in ("callback", "errback"):
            if d.get(key):
                kwargs[key] = _spider_method(spider, d[key])
    return cls(**kwargs)


def _request_class(name):
    """The request class called C{name} (see L{request_from_dict})."""
    from tinyscrapy.http.request import Request
    if name.startswith("scrapy."):
        name = "tiny" + name
    cls = Request.classes.get(name)
    if cls is None and name.startswith("tinyscrapy."):
        try:
            cls = load_object(name)
        except UsageError:
            cls = None
    if not (isinstance(cls, type) and issubclass(cls, Request)):
        raise ValueError(f"{name!r} is not a request class defined here (a Request "
                         f"subclass, imported before its requests are read back)")
    return cls


def _spider_method(spider, name):
    try:
        return getattr(spider, str(name))
    except AttributeError:
        raise ValueError(f"Method {str(name)!r} not found in: {spider}") from None


def left_its_origin(request):
    """
    Whether C{request} is a hop of a redirect chain (C{meta["redirect_urls"]}) whose
    origin is not the origin of the chain's first URL: the credentials meant for the first
    request (its C{Authorization}, C{Cookie}, C{DEFAULT_REQUEST_HEADERS}') are not meant
    for it.
    """
    meta = request._meta
    chain = meta.get("redirect_urls") if meta else None
    if not chain:
        return False
    from tinyscrapy.utils.url import url_origin
    return url_origin(request.url) != url_origin(chain[0])


__all__ = ["RequestFingerprinter", "RequestFingerprinterProtocol", "fingerprint",
           "referer_str", "request_from_dict", "request_httprepr", "request_to_curl"]

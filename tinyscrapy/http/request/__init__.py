"""
L{Request}: what to fetch and which spider method gets the answer. Its kinds that build a
body live beside it: L{tinyscrapy.http.request.form.FormRequest} and
L{tinyscrapy.http.request.json_request.JsonRequest}; C{from_curl}/C{to_curl} in
L{tinyscrapy.utils.curl}.

A Request is plain data, and a crawl keeps hundreds of thousands of them waiting, so it has
C{__slots__} and keeps its dictionaries (headers, meta, cb_kwargs, cookies) unmade until
someone reads them: the caller's headers stay the pairs they were given, and the rare
arguments (C{encoding}, C{cookies}, C{flags}) share one slot.

Every subclass is registered in L{Request.classes} under its dotted name, so a frontier
can rebuild a stored request of any kind without importing by name.
"""

import re
from collections.abc import Callable
from typing import Any, TypedDict, Union

from tinyscrapy.http.headers import Headers, header_pairs
from tinyscrapy.utils.python import to_bytes
from tinyscrapy.utils.trackref import object_ref

# Scrapy's type of a request's callback (a callable taking the response first); Scrapy
# defines it for type checkers only, tinyscrapy at run time too, for code that imports it
CallbackT = Callable[..., Any]


class VerboseCookie(TypedDict, total=False):
    """One cookie of C{Request(cookies=[...])}, as Scrapy types it: C{name} and C{value},
    and optionally C{domain}, C{path} and C{secure}."""

    name: Union[str, bytes]
    value: Union[str, bytes, bool, float, int]
    domain: Union[str, bytes]
    path: Union[str, bytes]
    secure: bool


# Scrapy's type of Request(cookies=...): a dict of names to values, or a list of
# VerboseCookie dicts
CookiesT = Union[dict[str, str], list[VerboseCookie]]

# a URL w3lib's safe_url_string would give back unchanged: lower-case scheme and host, and
# only characters that need no escaping (most links on the web)
_SAFE_URL = re.compile(
    r"(?:https?|ftp|file)://[a-z0-9.\-]*(?::[0-9]*)?"
    r"(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*)?(?:\?[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*)?"
    r"(?:#[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*)?\Z")


def safe_url(url, encoding="utf-8"):
    """
    The URL as it is sent, as Scrapy makes it (w3lib's C{safe_url_string}): stripped,
    scheme and host in lower case, percent-encoded where it needs to be (non-ASCII, spaces,
    C{<>"{}|^`}, control characters), its query in C{encoding}. Most links on the web need
    nothing, and take a fast path.

    @raise TypeError: C{url} is not a C{str}.
    """
    if not isinstance(url, str):
        raise TypeError(f"Request url must be str, got {type(url).__name__}")
    if _SAFE_URL.match(url):
        return url
    from w3lib.url import safe_url_string  # w3lib.url imports urllib.request: only if needed
    return safe_url_string(url.strip(), encoding)


def _check_scheme(url):
    if "://" not in url and not url.startswith(("about:", "data:")):
        raise ValueError(f"Missing scheme in request url: {url}")


def NO_CALLBACK(*args, **kwargs):  # noqa: N802 - Scrapy's name
    """
    As a request's C{callback}: the request is not for the spider (a component fetches it
    for itself, as the robots.txt check does), so no spider method must get its answer.

    @raise RuntimeError: always; being called means a response reached a spider.
    """
    raise RuntimeError("The NO_CALLBACK callback has been called. This is a special "
                       "callback value intended for requests whose callback is never "
                       "meant to be called.")


_NO_EXTRA = {}
# {"encoding": name} shared by every request of that encoding and no other rare argument
# (the links of a cp1252 page, say): copied before anything is added to it
_ENCODING_ONLY = {}


class Request(object_ref):
    """
    One thing to download, and what to do with it, with Scrapy's arguments.

    C{url} and C{body} are read-only: change them with L{replace}.

    @ivar callback: the spider method called with the response; None means
        C{spider.parse}. Stored by name when a frontier persists the request.
    @ivar errback: the spider method called with the L{twisted.python.failure.Failure}
        when the download fails or the status is refused; C{failure.request} is this request.
    @ivar depth: how many links away from a start request (start requests have 0).
    @ivar dont_filter: skip the duplicate filter.
    @ivar fingerprint: set by the scheduler's dedup, None before.
    @cvar classes: every request class by C{"module.QualName"}, this one included.
    @cvar attributes: the arguments L{replace} carries over.
    """

    __slots__ = (
        "_url", "callback", "errback", "method", "_body", "priority", "depth",
        "dont_filter", "fingerprint", "_headers", "_meta", "_cb_kwargs", "_extra",
        "__weakref__",  # as Scrapy's: components keep per-request data in weak dicts
    )

    attributes = ("url", "headers", "body", "cookies", "meta", "encoding", "flags",
                  "cb_kwargs", "callback", "dont_filter", "errback", "method", "priority",
                  "depth")
    classes = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        Request.classes[f"{cls.__module__}.{cls.__qualname__}"] = cls

    def __init__(self, url, callback=None, method="GET", headers=None, body=None,
                 cookies=None, meta=None, encoding="utf-8", priority=0, dont_filter=False,
                 errback=None, flags=None, cb_kwargs=None, depth=0):
        self._extra = _NO_EXTRA
        if encoding != "utf-8":
            self._extra = _ENCODING_ONLY.get(encoding) or _encoding_only(encoding)
        self.method = str(method).upper()
        self._meta = dict(meta) if meta else None
        if self._meta and self._meta.get("verbatim_url"):
            if not isinstance(url, str):
                raise TypeError(f"Request url must be str, got {type(url).__name__}")
            self._url = url
        else:
            self._url = safe_url(url, encoding)
        _check_scheme(self._url)
        self._body = to_bytes(body, encoding) if body else b""
        if not isinstance(priority, int):
            raise TypeError(f"Request priority not an integer: {priority!r}")
        self.priority = priority
        if not (callback is None or callable(callback)):
            raise TypeError(f"callback must be a callable, got {type(callback).__name__}")
        if not (errback is None or callable(errback)):
            raise TypeError(f"errback must be a callable, got {type(errback).__name__}")
        self.callback = callback
        self.errback = errback
        self.depth = depth
        self.dont_filter = dont_filter
        self.fingerprint = None
        # headers stay the caller's pairs until someone reads .headers: a tuple costs a
        # third of a Headers dict, and most waiting requests carry one (a Referer)
        if not headers:
            self._headers = None
        elif isinstance(headers, Headers):
            self._headers = headers.copy()  # never shared with the request it came from
        elif isinstance(headers, dict):
            self._headers = tuple(headers.items())
        else:
            self._headers = tuple(headers)
        self._cb_kwargs = dict(cb_kwargs) if cb_kwargs else None
        if cookies:
            self._set_extra("cookies", cookies)
        if flags:
            self._set_extra("flags", list(flags))

    # -- read-only and lazy attributes --------------------------------------------

    @property
    def url(self):
        return self._url

    @property
    def body(self):
        return self._body

    @property
    def encoding(self):
        return self._extra.get("encoding", "utf-8")

    def _set_extra(self, name, value):
        extra = self._extra
        if extra is _NO_EXTRA or extra is _ENCODING_ONLY.get(extra.get("encoding")):
            extra = self._extra = dict(extra)
        extra[name] = value

    @property
    def headers(self):
        """The request's L{Headers} (made on first use)."""
        if not isinstance(self._headers, Headers):
            self._headers = Headers(self._headers, encoding=self.encoding)
        return self._headers

    @headers.setter
    def headers(self, value):
        if isinstance(value, Headers) or value is None:
            self._headers = value
        else:
            self._headers = Headers(value, encoding=self.encoding)

    def header_items(self):
        """C{(title-cased bytes name, [bytes values])} pairs, without making a L{Headers}
        for a waiting request."""
        raw = self._headers
        if not raw:
            return ()
        if isinstance(raw, Headers):
            return list(dict.items(raw))
        return header_pairs(raw)

    def has_header(self, name):
        """Is header C{name} set? Answered without making a L{Headers}."""
        raw = self._headers
        if not raw:
            return False
        if isinstance(raw, Headers):
            return name in raw
        key = Headers.normkey(_PLAIN, name)
        return any(Headers.normkey(_PLAIN, each) == key for each, _ in raw)

    @property
    def meta(self):
        if self._meta is None:
            self._meta = {}
        return self._meta

    @property
    def cb_kwargs(self):
        if self._cb_kwargs is None:
            self._cb_kwargs = {}
        return self._cb_kwargs

    @property
    def cookies(self):
        """The cookies given to the request (a dict or a list of dicts), which the
        cookies middleware sends and keeps in the request's jar."""
        cookies = self._extra.get("cookies")
        if cookies is None:
            cookies = {}
            self._set_extra("cookies", cookies)
        return cookies

    @cookies.setter
    def cookies(self, value):
        self._set_extra("cookies", value)

    @property
    def flags(self):
        flags = self._extra.get("flags")
        if flags is None:
            flags = []
            self._set_extra("flags", flags)
        return flags

    @flags.setter
    def flags(self, value):
        self._set_extra("flags", value)

    # -- copies ----------------------------------------------------------------------

    def replace(self, *args, cls=None, **changes):
        """A new request with some arguments changed (C{url=...}, C{meta=...}, ...),
        of class C{cls} if given; the dictionaries are copied, not shared."""
        for name in self.attributes:
            if name not in changes:
                changes[name] = self._current(name)
        return (cls or type(self))(*args, **changes)

    def _current(self, name):
        """The value of argument C{name} as L{replace} passes it on (no dict made)."""
        if name == "headers":
            return self._headers
        if name == "meta":
            return self._meta
        if name == "cb_kwargs":
            return self._cb_kwargs
        if name in ("cookies", "flags"):
            return self._extra.get(name)
        return getattr(self, name)

    def copy(self):
        """L{replace} with no change."""
        return self.replace()

    @classmethod
    def from_curl(cls, curl_command, ignore_unknown_options=True, **kwargs):
        """
        A request from a C{curl} command line: its method, URL, headers, cookies and
        body; C{kwargs} win over what the command says. Unknown options are ignored, or
        refused with C{ValueError} when C{ignore_unknown_options} is False.
        """
        from tinyscrapy.utils.curl import curl_to_request_kwargs
        arguments = curl_to_request_kwargs(curl_command, ignore_unknown_options)
        arguments.update(kwargs)
        return cls(**arguments)

    def to_curl(self):
        """The C{curl} command line that sends this request (the inverse of
        L{from_curl})."""
        from tinyscrapy.utils.curl import request_to_curl
        return request_to_curl(self)

    def to_dict(self, *, spider=None):
        """
        The request as a dict of its arguments, as Scrapy's C{Request.to_dict}: callbacks
        by method name when C{spider} has them, C{"_class"} for a subclass.

        @raise ValueError: a callback is not a method of C{spider}.
        """
        fields = {"headers": dict(self.headers)}
        for name in self.attributes:
            value = getattr(self, name)
            if name in ("callback", "errback") and callable(value):
                value = _method_name(spider, value)
            fields.setdefault(name, value)
        if type(self) is not Request:
            fields["_class"] = f"{type(self).__module__}.{type(self).__qualname__}"
        return fields

    def __repr__(self):
        return f"<{self.method} {self.url}>"


def _method_name(spider, function):
    target = getattr(function, "__func__", None)
    if spider is not None and target is not None:
        for name in dir(type(spider)):
            if getattr(getattr(spider, name, None), "__func__", None) is target:
                return name
    raise ValueError(f"Function {function} is not an instance method in: {spider}")


def _encoding_only(encoding):
    extra = {"encoding": encoding}
    if len(_ENCODING_ONLY) < 100:
        _ENCODING_ONLY[encoding] = extra
    return extra


Request.classes[f"{Request.__module__}.{Request.__qualname__}"] = Request
_PLAIN = Headers()


def unchecked_request(url, **kwargs):
    """
    A L{Request} for a link Scrapy would refuse (C{mailto:}, C{javascript:}, a URL with
    no scheme): L{tinyscrapy.http.response.Response.follow} makes these so that the crawl's
    scope drops them (counted as C{InvalidUrl}) instead of the spider's callback breaking.
    """
    request = Request("http://invalid.invalid/", **kwargs)
    request._url = request_url(url, request.encoding)
    return request


def request_url(url, encoding="utf-8"):
    """
    The C{url} of the Request that C{response.follow(url)} makes for the absolute C{url}:
    L{safe_url}, or, for a URL it refuses (a bad port with non-ASCII characters, a lone
    surrogate), the URL percent-encoded as it is.
    """
    try:
        return safe_url(url, encoding)
    except ValueError:  # UnicodeError included
        from urllib.parse import quote
        return quote(url, safe="/:?#[]@!$&'()*+,;=%~", errors="surrogatepass")

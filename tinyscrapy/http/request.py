"""
L{Request}, what to fetch and which spider method gets the answer, with its two kinds
that build a body: L{JsonRequest} and L{FormRequest}.

A Request is plain data. It keeps its dictionaries (headers, meta, cb_kwargs) unmade
until someone touches them, because a crawl may hold hundreds of thousands of waiting
requests and most of them never need any.
"""

import json
from urllib.parse import urlencode

from tinyscrapy.http.headers import Headers, _compact_headers


def safe_url(url):
    """
    The URL as it is sent: stripped, and percent-encoded only when it needs to be
    (non-ASCII, spaces, control characters). Most links on the web need nothing.
    """
    if not isinstance(url, str):
        raise TypeError(f"Request url must be str, got {type(url).__name__}: {url!r}")
    url = url.strip()
    if url.isascii() and url.isprintable() and " " not in url:
        return url
    from w3lib.url import safe_url_string  # w3lib.url imports urllib.request: only if needed
    return safe_url_string(url)


class Request:
    """
    One thing to download, and what to do with it.

    @ivar callback: the spider method called with the L{HttpResponse}; None means
        C{spider.parse}. Stored by name when a frontier persists the request.
    @ivar errback: the spider method called with the L{twisted.python.failure.Failure}
        when the download fails or the status is refused; C{failure.request} is this request.
    @ivar depth: how many links away from a start request (start requests have 0).
    @ivar dont_filter: skip the duplicate filter.
    @ivar fingerprint: set by the scheduler's dedup (bytes), None before.
    """

    __slots__ = (
        "url", "callback", "errback", "method", "body", "priority", "depth",
        "dont_filter", "fingerprint", "_headers", "_meta", "_cb_kwargs",
    )

    def __init__(self, url, callback=None, method="GET", headers=None, body=b"",
                 meta=None, cb_kwargs=None, priority=0, dont_filter=False, errback=None,
                 depth=0):
        self.url = safe_url(url)
        self.callback = callback
        self.errback = errback
        self.method = method.upper()
        self.body = body.encode("utf-8") if isinstance(body, str) else (body or b"")
        self.priority = priority
        self.depth = depth
        self.dont_filter = dont_filter
        self.fingerprint = None
        # headers stay the caller's (name, value) pairs until someone reads .headers:
        # a tuple costs a third of a Headers dict, and most waiting requests carry one
        self._headers = _compact_headers(headers) if headers else None
        self._meta = dict(meta) if meta else None
        self._cb_kwargs = dict(cb_kwargs) if cb_kwargs else None

    @property
    def headers(self):
        """The request's L{Headers} (made on first use)."""
        if not isinstance(self._headers, Headers):
            self._headers = Headers(self._headers)
        return self._headers

    def header_items(self):
        """C{(lower-case name, [values])} pairs, without making a L{Headers} for a waiting
        request."""
        raw = self._headers
        if not raw:
            return ()
        if isinstance(raw, Headers):
            return raw.items()
        return [(name.lower(), value if isinstance(value, list) else [value])
                for name, value in raw]

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

    def replace(self, **changes):
        """A copy with some attributes changed (C{url=...}, C{meta=...}, ...)."""
        kwargs = {
            "url": self.url, "callback": self.callback, "method": self.method,
            "headers": self._headers, "body": self.body, "meta": self._meta,
            "cb_kwargs": self._cb_kwargs, "priority": self.priority,
            "dont_filter": self.dont_filter, "errback": self.errback, "depth": self.depth,
        }
        kwargs.update(changes)
        return type(self)(**kwargs)

    def __repr__(self):
        return f"<{self.method} {self.url}>"


class JsonRequest(Request):
    """A request whose body is C{data} as JSON (POST unless C{method} is given)."""

    __slots__ = ()

    def __init__(self, url, data=None, **kwargs):
        if data is not None:
            kwargs["body"] = json.dumps(data, sort_keys=True)
            kwargs.setdefault("method", "POST")
        super().__init__(url, **kwargs)
        self.headers.setdefault("Content-Type", "application/json")
        self.headers.setdefault("Accept", "application/json, text/javascript, */*; q=0.01")


class FormRequest(Request):
    """
    A request carrying C{formdata} form-encoded: in the body of a POST, or in the query
    string when C{method="GET"}.
    """

    __slots__ = ()

    def __init__(self, url, formdata=None, **kwargs):
        if formdata is not None:
            encoded = urlencode(formdata, doseq=True)
            if kwargs.get("method", "POST").upper() == "GET":
                url = url + ("&" if "?" in url else "?") + encoded
            else:
                kwargs["body"] = encoded
                kwargs.setdefault("method", "POST")
        super().__init__(url, **kwargs)
        if self.method == "POST":
            self.headers.setdefault("Content-Type", "application/x-www-form-urlencoded")

"""
One codec for the frontiers that keep requests outside this process (C{--jobdir} on disk,
C{--scheduler redis://} shared): a L{Request} to bytes and back.

A request is stored as a pickled plain C{dict} (C{meta} and C{cb_kwargs} may hold values
JSON cannot: bytes, tuples, datetimes). Its callback and errback are stored by name, as
in Scrapy, and bound again to the spider of the run that loads it; so only methods of the
spider can be stored. The class is stored as a dotted path, so C{JsonRequest},
C{FormRequest} and a project's own subclasses come back as what they were.

A proxy that L{tinyscrapy.middleware.proxy} chose from the environment (C{meta
["_scheme_proxy"]}) is not stored, nor its C{Proxy-Authorization}: the middleware chooses
it again, credentials included, when the loaded request is downloaded (as after a redirect
to another scheme). Every other header (C{Cookie}, C{Authorization}, the credentials of a
C{meta["proxy"]} the spider set) and C{meta} are stored as they are, in plain text.

Loading unpickles: it must only ever see bytes this code wrote, in a C{--jobdir} the user
owns or a Redis nobody untrusted can write to (whoever can write there can make the
loading process run arbitrary code).

Loading sets the request's slots directly and runs no C{__init__}: a C{JsonRequest}
does not encode its body twice, and a subclass whose constructor takes other arguments
still loads.
"""

import pickle

from tinyscrapy.components import load_object
from tinyscrapy.errors import UnserializableRequest

FORMAT = 1  # the "v" key: bump it when the fields change
_ENV_PROXY_META = ("proxy", "_auth_proxy", "_scheme_proxy")


def request_to_bytes(request, spider):
    """
    @return: C{bytes} that L{request_from_bytes} turns back into an equal request.
    @raise UnserializableRequest: the callback or errback is not a method of C{spider}, or the
        C{meta} or C{cb_kwargs} cannot be pickled; the message names the URL.
    """
    cls = type(request)
    headers, meta = _stored_headers_and_meta(request)
    fields = {
        "v": FORMAT,
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "url": request.url,
        "callback": _method_name(request, "callback", spider),
        "errback": _method_name(request, "errback", spider),
        "method": request.method,
        "headers": headers,
        "body": request.body,
        "meta": meta,
        "cb_kwargs": request._cb_kwargs,
        "priority": request.priority,
        "depth": request.depth,
        "dont_filter": request.dont_filter,
        "fingerprint": request.fingerprint,
        "extra": request._extra or None,  # encoding, cookies, flags when given
    }
    try:
        return pickle.dumps(fields, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # PicklingError, TypeError, AttributeError: all say the same
        raise UnserializableRequest(
            f"cannot persist {request.url}: its meta or cb_kwargs cannot be pickled "
            f"({type(e).__name__}: {e})") from None


def request_from_bytes(data, spider):
    """
    @return: the L{Request} that L{request_to_bytes} stored, its callback and errback bound
        to C{spider}'s methods of the same names.
    @raise ValueError: C{spider} has no method of that name any more, or C{data} is not
        a stored request.
    """
    # noqa: S301 - trusted data only: a --jobdir this user owns, or a Redis that must be
    # private (docs/frontier.md): pickle runs whatever code a crafted payload names
    fields = pickle.loads(data)  # noqa: S301
    if not isinstance(fields, dict) or fields.get("v") != FORMAT:
        raise ValueError("not a request stored by this version of tinyscrapy")
    cls = _load_class(fields["class"])
    request = cls.__new__(cls)
    request._url = fields["url"]
    request.callback = _bound(spider, fields["callback"], fields["url"])
    request.errback = _bound(spider, fields["errback"], fields["url"])
    request.method = fields["method"]
    request._headers = tuple(fields["headers"]) or None
    request._body = fields["body"]
    request._meta = fields["meta"]
    request._cb_kwargs = fields["cb_kwargs"]
    request.priority = fields["priority"]
    request.depth = fields["depth"]
    request.dont_filter = fields["dont_filter"]
    request.fingerprint = fields["fingerprint"]
    request._extra = fields.get("extra") or {}
    return request


def _stored_headers_and_meta(request):
    """C{request}'s headers and meta as stored: without a proxy chosen from the environment
    and its C{Proxy-Authorization}. The request itself is not changed."""
    headers = [(name, list(values)) for name, values in request.header_items()]
    meta = request._meta
    if meta and meta.get("_scheme_proxy"):
        meta = {key: value for key, value in meta.items() if key not in _ENV_PROXY_META}
        headers = [(name, values) for name, values in headers
                   if name != b"Proxy-Authorization"]
    return headers, meta


def _load_class(path, _classes={}):  # noqa: B006 - a cache, on purpose
    """L{load_object}, remembered: a resume loads thousands of requests of one class."""
    cls = _classes.get(path)
    if cls is None:
        cls = _classes[path] = load_object(path)
    return cls


def _method_name(request, attribute, spider):
    """The name of C{request}'s callback or errback, which must be a method of C{spider}."""
    func = getattr(request, attribute)
    if func is None:
        return None
    name = getattr(func, "__name__", None)
    if name is None or getattr(func, "__self__", None) is not spider \
            or getattr(spider, name, None) != func:
        raise UnserializableRequest(
            f"cannot persist {request.url}: {attribute} {func!r} is not a spider method "
            f"(a persistent or shared frontier stores callbacks by name)")
    return name


def _bound(spider, name, url):
    if name is None:
        return None
    method = getattr(spider, name, None)
    if not callable(method):
        raise ValueError(f"cannot load {url}: spider {spider.name!r} has no method {name!r}")
    return method

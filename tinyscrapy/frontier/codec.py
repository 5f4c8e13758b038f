"""
One codec for frontiers that keep requests outside this process: a L{Request} becomes a
plain dict, and the dict becomes bytes (pickle). The callback and the errback are stored by
the name of the spider method, so any process running the same spider can call them.

A callback that is not a method of the spider (a lambda, a function, another object's
method), or a C{meta} that pickle cannot store, raises L{UnserializableRequest} naming the
URL: the request cannot leave this process.
"""

import pickle

from tinyscrapy.components import load_object
from tinyscrapy.errors import UnserializableRequest
from tinyscrapy.http import Request


def request_to_dict(request, spider):
    """
    The request as a plain dict of plain values.

    @raise UnserializableRequest: the callback or errback is not a method of C{spider}.
    """
    record = {
        "url": request.url,
        "callback": _method_name(request, "callback", spider),
        "errback": _method_name(request, "errback", spider),
        "method": request.method,
        "headers": [(name, list(values)) for name, values in request.header_items()],
        "body": request.body,
        "meta": request._meta,
        "cb_kwargs": request._cb_kwargs,
        "priority": request.priority,
        "depth": request.depth,
        "dont_filter": request.dont_filter,
        "fingerprint": request.fingerprint,
    }
    cls = type(request)
    if cls is not Request:
        record["class"] = f"{cls.__module__}.{cls.__qualname__}"
    return record


def request_from_dict(record, spider):
    """
    The L{Request} a dict of L{request_to_dict} describes, its callbacks bound to C{spider}.

    @raise AttributeError: C{spider} has no method of the stored name.
    """
    record = dict(record)
    cls = load_object(record.pop("class")) if "class" in record else Request
    fingerprint = record.pop("fingerprint", None)
    for name in ("callback", "errback"):
        if record[name] is not None:
            record[name] = getattr(spider, record[name])
    request = cls(**record)
    request.fingerprint = fingerprint
    return request


def encode(request, spider):
    """The request as bytes. @raise UnserializableRequest: see L{request_to_dict}."""
    record = request_to_dict(request, spider)
    try:
        return pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:
        raise UnserializableRequest(f"cannot store {request.url}: its meta or cb_kwargs "
                                    f"do not pickle ({type(e).__name__}: {e})") from None


def decode(data, spider):
    """The L{Request} of L{encode}'s bytes."""
    return request_from_dict(pickle.loads(data), spider)


def _method_name(request, attribute, spider):
    function = getattr(request, attribute)
    if function is None:
        return None
    name = getattr(function, "__name__", None)
    if getattr(function, "__self__", None) is spider and name \
            and getattr(spider, name, None) == function:
        return name
    raise UnserializableRequest(f"cannot store {request.url}: its {attribute} {function!r} "
                                f"is not a method of the spider {spider.name!r}")

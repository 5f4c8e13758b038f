"""
One codec for the frontiers that keep requests outside this process (C{--jobdir} on disk,
C{--scheduler redis://} shared): a L{Request} to bytes and back, as data only.

A stored request is C{MAGIC} followed by one JSON object (the standard library's C{json},
which is written in C both ways) of the request's fields. The values of C{meta},
C{cb_kwargs} and the rarer arguments are written by L{tinyscrapy.frontier.plaindata}: plain
data as it is, bytes, tuples, sets, datetimes and registered items as tagged objects.

Nothing that the stored bytes name is imported or called:

    - the callback and errback are stored by name and bound again to the spider of the
      run that loads them (only its methods, and no C{__dunder__} one);
    - the request class is looked up in the registry of L{Request} subclasses,
      C{Request.classes} (C{"module.qualname" -> class}, filled when a subclass is
      defined); an item class in C{Item.classes} or in the classes registered with
      L{register_item_class} (dataclass or attrs items; also importable from here);
    - C{meta} and C{cb_kwargs} hold plain data (None, booleans, numbers, strings, lists,
      dicts, and the tagged kinds above) and registered items, nothing else.

A request that holds anything else is refused when it is enqueued (L{request_to_bytes}
raises L{UnserializableRequest}, naming the URL and the key), not lost later. An entry
that is not one this code wrote (crafted, damaged, or a pickle written by an older
tinyscrapy) is refused by L{request_from_bytes} with L{StoredRequestError}; the frontier
counts it, logs it and goes on. L{is_old_format} tells an older tinyscrapy's pickle.

No credential is stored (every client of a Redis, every reader of a job directory, would
read it):

    - a proxy that L{tinyscrapy.downloadermiddlewares.httpproxy} chose from the
      environment (C{meta["_scheme_proxy"]}) is not stored, nor its
      C{Proxy-Authorization}: the middleware chooses it again, credentials included, when
      the loaded request is downloaded;
    - C{Authorization} set by L{tinyscrapy.downloadermiddlewares.httpauth} for the
      request's origin, and C{Cookie} as the cookie jar set it, are left out: those
      middlewares add them again on load;
    - any other C{Authorization}, C{Cookie} or C{Proxy-Authorization} (set by the spider,
      or from the credentials of C{meta["proxy"]}), the credentials of C{meta["proxy"]}
      itself and C{meta["http_pass"]} stay in this process's memory (L{CredentialVault}),
      the stored copy keeping only a token for them: loaded by this run, the request has
      them again; loaded by another (a resumed crawl, another worker), it goes without
      them. Each such stored copy is counted (C{frontier/credentials_dropped}) and the
      first is logged, naming the header and the way that survives
      (C{http_user}/C{http_pass}/C{http_auth_domain}).

Every other header and C{meta} are stored as they are, in plain text.

Loading sets the request's slots directly and runs no C{__init__}: a C{JsonRequest} does
not encode its body twice, and a subclass whose constructor takes other arguments still
loads. (An item is made by calling its registered class with its fields.)
"""

import json
import logging
from base64 import b64decode

from tinyscrapy.exceptions import UnserializableRequest
from tinyscrapy.frontier.plaindata import (
    MissingMethod,
    NotPlain,
    StoredRequestError,
    bytes_text,
    class_name,
    plain,
    register_item_class,
    untag,
)
from tinyscrapy.http.request import _NO_EXTRA, Request
from tinyscrapy.http.request.form import FormRequest
from tinyscrapy.http.request.json_request import JsonRequest

logger = logging.getLogger("tinyscrapy.frontier")

MAGIC = b"TSJ1"  # what every stored request starts with: bump the digit when fields change
FORMAT = "json1"  # the name of this format, for the frontiers that record it
_ENV_PROXY_META = ("proxy", "_auth_proxy", "_scheme_proxy")
_FIELDS = ("class", "url", "callback", "errback", "method", "headers", "body", "meta",
           "cb_kwargs", "priority", "depth", "dont_filter", "fingerprint", "extra")
_FIELD_SET = frozenset(_FIELDS)
__all__ = ["FORMAT", "MAGIC", "MissingMethod", "StoredRequestError", "class_name", "is_old_format",
           "register_item_class", "request_from_bytes", "request_from_fields",
           "request_to_bytes", "request_to_fields"]
_encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_decode_json = json.JSONDecoder(object_hook=untag).decode  # one decoder for every row


def is_old_format(data):
    """True if C{data} is a request pickled by an older tinyscrapy (pickle protocol 2+)."""
    return bool(data) and data[:1] == b"\x80"


# storing


def request_to_bytes(request, spider):
    """
    @return: C{bytes} that L{request_from_bytes} turns back into an equal request.
    @raise UnserializableRequest: as L{request_to_fields}, or a field JSON cannot hold.
    """
    fields = request_to_fields(request, spider)
    try:
        return MAGIC + _encode_json(fields).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError) as e:  # a priority that is not a number, say
        raise UnserializableRequest(f"cannot persist {request.url}: {e}") from None


def request_to_fields(request, spider):
    """
    C{request} as the JSON object L{request_to_bytes} writes (a dict of JSON values), for
    a caller that puts many in one JSON document (the workers' batches,
    L{tinyscrapy.frontier.workerwire}).

    @return: a dict that L{request_from_fields} turns back into an equal request.
    @raise UnserializableRequest: the callback or errback is not a method of
        C{spider}, the request's class is not registered, or C{meta} or C{cb_kwargs}
        holds something that is not plain data or a registered item; the message names
        the URL (and the key).
    """
    cls = type(request)
    name = class_name(cls)
    if _request_class(name) is not cls:
        raise UnserializableRequest(
            f"cannot persist {request.url}: its class {name} is not a registered Request "
            "subclass")
    headers, meta = _stored_headers_and_meta(request, spider)
    body = request.body
    return {
        "class": name,
        "url": request.url,
        "callback": _method_name(request, "callback", spider),
        "errback": _method_name(request, "errback", spider),
        "method": request.method,
        "headers": headers,
        "body": bytes_text(body) if body else "",
        "meta": _plain_mapping(meta, request, "meta") if meta else None,
        "cb_kwargs": _plain_mapping(request._cb_kwargs, request, "cb_kwargs")
        if request._cb_kwargs else None,
        "priority": request.priority,
        "depth": request.depth,
        "dont_filter": request.dont_filter,
        "fingerprint": request.fingerprint,
        # encoding, cookies, flags when given
        "extra": _plain_mapping(request._extra, request, "extra") if request._extra else None,
    }


def _latin1(value):
    """A header name or value (bytes, or str from an older caller) as latin-1 text."""
    return value.decode("latin-1") if isinstance(value, (bytes, bytearray)) else str(value)


def _plain_mapping(mapping, request, what):
    """C{mapping}'s values as JSON data, each checked. @raise UnserializableRequest."""
    out = {}
    for key, value in mapping.items():
        if not isinstance(key, str):
            raise UnserializableRequest(
                f"cannot persist {request.url}: {what} key {key!r} is not a string")
        try:
            out[key] = plain(value)
        except NotPlain as e:
            raise UnserializableRequest(
                f"cannot persist {request.url}: {what}[{key!r}] holds {e} (a persistent "
                "or shared frontier stores plain data and registered items only)") from None
    return out


def _stored_headers_and_meta(request, spider=None):
    """C{request}'s headers and meta as stored: without a proxy chosen from the environment
    and its C{Proxy-Authorization}, and without any other credential (L{CredentialVault}
    keeps those the middlewares cannot add again). The request itself is not changed."""
    # names and values are bytes: stored as latin-1 text, which keeps every byte
    meta = request._meta
    env_proxy = bool(meta and meta.get("_scheme_proxy"))
    if env_proxy:
        meta = {key: value for key, value in meta.items() if key not in _ENV_PROXY_META}
    kept, secrets = [], {}
    for name, values in request.header_items():
        lowered = _latin1(name).lower()
        if lowered in _CREDENTIAL_HEADERS:
            if env_proxy and lowered == "proxy-authorization":
                continue
            if not _added_again(lowered, values, request._meta, request.url):
                secrets[_latin1(name)] = [_latin1(value) for value in values]
            continue
        kept.append([_latin1(name), [_latin1(value) for value in values]])
    if meta:
        proxy = meta.get("proxy")
        userinfo = _proxy_userinfo(proxy) if isinstance(proxy, str) else None
        if userinfo is not None or "http_pass" in meta or "_jar_cookie" in meta \
                or "_credentials" in meta:
            meta = dict(meta)
            meta.pop("_jar_cookie", None)  # the jar's Cookie, sent again from the jar
            meta.pop("_credentials", None)
            if userinfo is not None:
                meta["proxy"] = proxy.replace(userinfo + "@", "", 1)
                secrets["meta proxy"] = userinfo
            if meta.get("http_pass"):
                secrets["meta http_pass"] = meta.pop("http_pass")
                # the user goes with it: a copy loaded without the password (another
                # run) would send the user with an empty one, a credential nobody gave
                if "http_user" in meta:
                    secrets["meta http_user"] = meta.pop("http_user")
    if secrets:
        meta = dict(meta or {})
        meta["_credentials"] = vault_of(spider).keep(secrets, request)
    return kept, meta


_CREDENTIAL_HEADERS = ("authorization", "cookie", "proxy-authorization")


def _added_again(lowered, values, meta, url):
    """Whether a credential header is one its middleware adds again on load: the cookie
    jar's C{Cookie}, L{tinyscrapy.downloadermiddlewares.httpauth}'s C{Authorization}."""
    if not meta:
        return False
    if lowered == "cookie":
        jar = meta.get("_jar_cookie")
        return jar is not None and [jar] == [_latin1(value) for value in values]
    if lowered == "authorization":
        from tinyscrapy.utils.url import url_origin
        return meta.get("_auth_origin") is not None and meta["_auth_origin"] == url_origin(url)
    return False


def _proxy_userinfo(proxy):
    """The C{user:pass} of a proxy URL (C{http://user:pass@host:port}), or None."""
    scheme, sep, rest = proxy.partition("://")
    authority = (rest if sep else scheme).partition("/")[0]
    userinfo, at, _ = authority.rpartition("@")
    return userinfo if at else None


class CredentialVault:
    """
    The credentials stored copies of requests leave behind, kept in this process's memory
    for the run (one per spider): a stored copy holds a token that only this vault
    resolves, so a copy loaded by another run, or another worker, resolves nothing.

    @ivar stats: where stored copies that left credentials here are counted, or None.
    """

    def __init__(self, stats=None):
        import os
        self.id = os.urandom(8).hex()
        self.stats = stats
        self._tokens = {}  # a secrets mapping, as JSON -> its token
        self._secrets = {}  # token -> the secrets mapping
        self._warned_store = self._warned_load = False

    def keep(self, secrets, request):
        """
        Keep C{secrets} (what of C{request} is left out of its stored copy: header name,
        or C{"meta proxy"} / C{"meta http_pass"}, to values).

        @return: the token the stored copy holds.
        """
        key = json.dumps(secrets, sort_keys=True)
        token = self._tokens.get(key)
        if token is None:
            if len(self._secrets) >= _VAULT_MAX:  # bounded: a crawl has few credentials
                self._tokens.clear()
                self._secrets.clear()
            token = self._tokens[key] = f"{self.id}:{len(self._secrets)}"
            self._secrets[token] = secrets
        if self.stats is not None:
            self.stats.inc_value("frontier/credentials_dropped")
        if not self._warned_store:
            self._warned_store = True
            logger.warning(
                "%s carries credentials (%s) that no middleware adds again: they are not "
                "stored with it (job directory, shared frontier); this run keeps them in "
                "memory and sends them, but a resumed crawl or another worker sends the "
                "request without them. Give HTTP credentials as http_user, http_pass and "
                "http_auth_domain (HttpAuthMiddleware adds them again), a proxy's in "
                "http_proxy/https_proxy (frontier/credentials_dropped counts such copies)",
                request, ", ".join(sorted(secrets)))
        return token

    def restore(self, request, token):
        """Put back on C{request} (just loaded) the credentials of C{token}, when this
        vault kept them; else the request goes without them (logged once)."""
        secrets = self._secrets.get(token) if isinstance(token, str) else None
        if secrets is None:
            if not self._warned_load:
                self._warned_load = True
                logger.warning("%s was stored by another run with credentials that stayed "
                               "in that run's memory: it is sent without them", request)
            return
        headers = list(request._headers or ())
        meta = request._meta
        for name, values in secrets.items():
            if name == "meta proxy":
                proxy = meta.get("proxy")
                if isinstance(proxy, str):
                    scheme, sep, rest = proxy.partition("://")
                    meta["proxy"] = f"{scheme}://{values}@{rest}" if sep else \
                        f"{values}@{proxy}"
            elif name in ("meta http_pass", "meta http_user"):
                meta[name[len("meta "):]] = values
            else:
                headers.append((name.encode("latin-1"),
                                [value.encode("latin-1") for value in values]))
        request._headers = tuple(headers) or None


_VAULT_MAX = 10_000


def vault_of(spider):
    """The L{CredentialVault} of C{spider}'s run (made on first use; its stats are the
    crawler's)."""
    vault = getattr(spider, "_credential_vault", None) if spider is not None else None
    if vault is None:
        crawler = getattr(spider, "crawler", None)
        vault = CredentialVault(getattr(crawler, "stats", None))
        if spider is not None:
            spider._credential_vault = vault
    return vault


def _method_name(request, attribute, spider):
    """The name of C{request}'s callback or errback, which must be a method of C{spider}."""
    func = getattr(request, attribute)
    if func is None:
        return None
    name = getattr(func, "__name__", None)
    if name is None or getattr(func, "__self__", None) is not spider \
            or getattr(spider, name, None) != func or name.startswith("__"):
        raise UnserializableRequest(
            f"cannot persist {request.url}: {attribute} {func!r} is not a spider "
            "method (a persistent or shared frontier stores callbacks by name)")
    return name


# the registries


def _request_class(name):
    """
    The class registered as C{name}: L{Request} itself, or one of C{Request.classes}
    (its subclasses, filled by C{__init_subclass__}); where that registry does not exist,
    the same map made from the subclasses Python knows (which imports nothing either).

    @return: the class, or None.
    """
    if name == _REQUEST:
        return Request
    classes = getattr(Request, "classes", None)
    if classes is None:
        classes = _SUBCLASSES
    return classes.get(name)


class _Subclasses(dict):
    """C{"module.qualname" -> class} for L{Request} and its subclasses, looked for again
    when a name is missing (a subclass defined since)."""

    def get(self, name, default=None):
        cls = dict.get(self, name)
        if cls is None:
            self.update(_subclasses())
            cls = dict.get(self, name, default)
        return cls


def _subclasses():
    found = {class_name(cls): cls for cls in (Request, JsonRequest, FormRequest)}
    todo = [Request]
    while todo:
        for sub in todo.pop().__subclasses__():
            if class_name(sub) not in found:
                found[class_name(sub)] = sub
                todo.append(sub)
    return found


_SUBCLASSES = _Subclasses()
_REQUEST = class_name(Request)


# loading


def request_from_bytes(data, spider):
    """
    @return: the L{Request} that L{request_to_bytes} stored, its callback and errback bound
        to C{spider}'s methods of the same names.
    @raise StoredRequestError: (a C{ValueError}) C{data} is not a request this codec wrote
        (an older tinyscrapy's pickle, damaged or crafted bytes, a class that is not
        registered), or C{spider} has no method of the stored name.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise StoredRequestError(f"not a stored request (a {type(data).__name__})")
    data = bytes(data)
    if not data.startswith(MAGIC):
        if is_old_format(data):
            raise StoredRequestError("a request pickled by an older tinyscrapy (refused: "
                                     "pickles can run code)")
        raise StoredRequestError("not a request stored by this version of tinyscrapy")
    try:
        fields = _decode_json(data[len(MAGIC):].decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError) as e:
        raise StoredRequestError(f"not a stored request ({e})") from None
    return request_from_fields(fields, spider)


def request_from_fields(fields, spider):
    """
    @param fields: what L{request_to_fields} returned, read back from JSON with
        L{tinyscrapy.frontier.plaindata.untag} as the object hook.
    @return: the request, as L{request_from_bytes} makes it.
    @raise StoredRequestError: C{fields} is not a request this codec wrote, or
        C{spider} has no method of the stored name.
    """
    if type(fields) is not dict or fields.keys() != _FIELD_SET:
        raise StoredRequestError("not a stored request (wrong fields)")
    url = fields["url"]
    cls = _request_class(fields["class"]) if type(fields["class"]) is str else None
    if cls is None or not isinstance(url, str):
        raise StoredRequestError(f"not a stored request (class {fields['class']!r} is not "
                                 "a registered Request subclass)")
    request = cls.__new__(cls)
    request._url = url  # url and body are read-only properties: their slots are set here
    request.callback = _bound(spider, fields["callback"], url)
    request.errback = _bound(spider, fields["errback"], url)
    request.method = _checked(fields["method"], str, url, "method")
    request._headers = _headers(fields["headers"], url)
    request._body = _body(fields["body"], url)
    request._meta = _mapping(fields["meta"], url, "meta")
    request._cb_kwargs = _mapping(fields["cb_kwargs"], url, "cb_kwargs")
    request.priority = _checked(fields["priority"], int, url, "priority")
    request.depth = _checked(fields["depth"], int, url, "depth")
    request.dont_filter = _checked(fields["dont_filter"], bool, url, "dont_filter")
    fingerprint = fields["fingerprint"]
    request.fingerprint = None if fingerprint is None else \
        _checked(fingerprint, int, url, "fingerprint")
    request._extra = _mapping(fields["extra"], url, "extra") or _NO_EXTRA
    meta = request._meta
    if meta and "_credentials" in meta:
        vault_of(spider).restore(request, meta.pop("_credentials"))
    return request


def _checked(value, kind, url, what):
    if type(value) is not kind:
        raise StoredRequestError(f"cannot load {url}: a bad {what} ({value!r})")
    return value


def _headers(pairs, url):
    if type(pairs) is not list or not all(
            type(pair) is list and len(pair) == 2 and type(pair[0]) is str
            and type(pair[1]) is list and all(type(v) is str for v in pair[1])
            for pair in pairs):
        raise StoredRequestError(f"cannot load {url}: bad headers")
    return tuple((name.encode("latin-1"), [value.encode("latin-1") for value in values])
                 for name, values in pairs) or None


def _body(text, url):
    try:
        return b64decode(text.encode("ascii"), validate=True) if text else b""
    except (AttributeError, ValueError) as e:
        raise StoredRequestError(f"cannot load {url}: a bad body ({e})") from None


def _mapping(value, url, what):
    if value is not None and type(value) is not dict:
        raise StoredRequestError(f"cannot load {url}: a bad {what}")
    return value


def _bound(spider, name, url):
    if name is None:
        return None
    if type(name) is not str or name.startswith("__"):
        raise StoredRequestError(f"cannot load {url}: a bad callback name {name!r}")
    method = getattr(spider, name, None)
    if not callable(method) or getattr(method, "__self__", None) is not spider:
        raise MissingMethod(f"cannot load {url}: spider {spider.name!r} has no "
                            f"method {name!r}")
    return method

"""
Header values as the built-in middlewares read them, whether L{tinyscrapy.http.Headers}
hands back C{str} (latin-1 decoded, as received) or C{bytes} (as in Scrapy).
"""


def header_text(value):
    """C{value} as C{str}: bytes are decoded as latin-1 (what the wire carried, byte for
    byte); None stays None."""
    if value is None or isinstance(value, str):
        return value
    return bytes(value).decode("latin-1")


def header_bytes(value):
    """C{value} as the bytes the wire carried (a C{str} value is latin-1 encoded)."""
    if isinstance(value, str):
        return value.encode("latin-1", "replace")
    return bytes(value)


def drop_header(headers, name):
    """Remove every value of C{name} from C{headers}, whatever the casing it was set with
    (works for the older L{Headers}, which keeps lower-case keys and has no
    case-insensitive C{del}, and for the Scrapy-like one)."""
    if name not in headers:
        return
    try:
        del headers[name]
    except KeyError:
        dict.pop(headers, name.lower(), None)


def set_raw(headers, name, raw):
    """
    Set C{name} so that the wire carries the bytes C{raw}.

    The Scrapy-like L{Headers} keeps bytes as given. The older one keeps C{str}, which
    twisted sends UTF-8 encoded: there the value is C{raw} read as UTF-8 (what is not UTF-8
    cannot be sent byte for byte through it, and is replaced).
    """
    headers[name] = raw
    if isinstance(headers.get(name), str):
        headers[name] = raw.decode("utf-8", "replace")


def header_wire(value):
    """The bytes the wire carries for a request header value: bytes as they are, C{str}
    UTF-8 encoded (as twisted encodes it)."""
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)

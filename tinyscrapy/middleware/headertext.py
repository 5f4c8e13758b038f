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

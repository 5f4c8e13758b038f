"""
L{Headers}: case-insensitive HTTP headers, as requests and responses keep them.
"""


class Headers(dict):
    """
    Case-insensitive HTTP headers: lower-cased C{str} names to lists of C{str} values.

    C{headers["Name"]} is the last value (as in Scrapy), L{getlist} all of them.
    """

    def __init__(self, values=None):
        super().__init__()
        if values:
            pairs = values.items() if hasattr(values, "items") else values
            for name, value in pairs:
                self[name] = value

    def __setitem__(self, name, value):
        if isinstance(value, (list, tuple)):
            value = [_text(v) for v in value]
        else:
            value = [_text(value)]
        super().__setitem__(_text(name).lower(), value)

    def __getitem__(self, name):
        return super().__getitem__(name.lower())[-1]

    def __contains__(self, name):
        return super().__contains__(name.lower())

    def get(self, name, default=None):
        values = super().get(name.lower())
        return values[-1] if values else default

    def getlist(self, name):
        """Every value of C{name}, in the order received."""
        return list(super().get(name.lower(), ()))

    def setdefault(self, name, value):
        if name not in self:
            self[name] = value
        return self[name]

    def add(self, name, value):
        """Append one value to C{name}."""
        super().setdefault(name.lower(), []).append(_text(value))


def _compact_headers(headers):
    """Keep a L{Headers} as it is; any other mapping or pairs as a tuple of pairs."""
    if isinstance(headers, Headers):
        return headers
    pairs = headers.items() if hasattr(headers, "items") else headers
    return tuple((_text(name), [_text(v) for v in value] if isinstance(value, (list, tuple))
                  else _text(value)) for name, value in pairs)


def _text(value):
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)

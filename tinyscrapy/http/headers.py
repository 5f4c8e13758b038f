"""
L{Headers}: HTTP headers as Scrapy keeps them, case-insensitive, names and values in bytes.

A name is stored title-cased (C{b"Content-Type"} whatever the spelling it came in), each
value as a list of C{bytes}: C{headers["content-type"] == b"text/html"} (the last value),
C{headers.getlist("Set-Cookie")} every one. C{str} and C{int} values are encoded with the
headers' C{encoding} (UTF-8 unless told), C{None} means no value at all.

The download path builds a response's headers with L{Headers.from_raw} straight from
twisted's raw headers (already bytes: nothing is decoded for headers nobody reads).
"""

from collections.abc import Mapping

# normalised names of the headers a crawl uses again and again, so that a lookup with a
# literal name costs one dict probe (bounded: a site could send any number of names)
_NAMES = {}
_NAMES_MAX = 2000


class Headers(dict):
    """
    Case-insensitive HTTP headers: title-cased C{bytes} names to lists of C{bytes} values,
    with Scrapy's methods (L{getlist}, L{setlist}, L{appendlist}, L{setlistdefault},
    L{to_unicode_dict}).

    @ivar encoding: how C{str} names and values are encoded (and decoded by
        L{to_unicode_dict}).
    """

    __slots__ = ("encoding",)

    def __init__(self, seq=None, encoding="utf-8"):
        super().__init__()
        self.encoding = encoding
        if seq:
            self.update(seq)

    @classmethod
    def from_raw(cls, pairs):
        """
        Headers from C{(bytes name, [bytes values])} pairs, such as twisted's
        C{getAllRawHeaders()}: the values are kept as they are (no copy, no check).
        """
        headers = cls()
        names = _NAMES
        store = dict.__setitem__
        for name, values in pairs:
            key = names.get(name)
            if key is None:
                key = _remember(name, name.title())
            store(headers, key, values if isinstance(values, list) else list(values))
        return headers

    # -- normalising --------------------------------------------------------------

    def normkey(self, key):
        """C{key} as stored: title-cased C{bytes}."""
        normal = _NAMES.get(key)
        if normal is None:
            if isinstance(key, str):
                normal = key.title().encode(self.encoding)
            elif isinstance(key, bytes):
                normal = key.title()
            else:
                raise TypeError(f"Unsupported header name type: {type(key)}")
            if self.encoding == "utf-8":
                _remember(key, normal)
        return normal

    def normvalue(self, value):
        """C{value} as stored: a new list of C{bytes} (C{None} is an empty list)."""
        if value is None:
            return []
        if isinstance(value, (bytes, str)) or not hasattr(value, "__iter__"):
            return [self._tobytes(value)]
        return [self._tobytes(each) for each in value]

    def _tobytes(self, value):
        if isinstance(value, bytes):
            return value
        if isinstance(value, str):
            return value.encode(self.encoding)
        if isinstance(value, int):
            return str(value).encode(self.encoding)
        raise TypeError(f"Unsupported value type: {type(value)}")

    # -- the mapping, case-insensitive ---------------------------------------------

    def __getitem__(self, key):
        values = dict.__getitem__(self, self.normkey(key))
        return values[-1] if values else None

    def __setitem__(self, key, value):
        dict.__setitem__(self, self.normkey(key), self.normvalue(value))

    def __delitem__(self, key):
        dict.__delitem__(self, self.normkey(key))

    def __contains__(self, key):
        return dict.__contains__(self, self.normkey(key))

    has_key = __contains__

    def get(self, key, def_val=None):
        """The last value of C{key}, else C{def_val} (normalised to bytes), else None."""
        values = dict.get(self, self.normkey(key))
        if values is None:
            values = self.normvalue(def_val)
        return values[-1] if values else None

    def getlist(self, key, def_val=None):
        """Every value of C{key} (the stored list itself), else C{def_val} as a list."""
        try:
            return dict.__getitem__(self, self.normkey(key))
        except KeyError:
            return self.normvalue(def_val) if def_val is not None else []

    def setlist(self, key, list_):
        """Set C{key} to the values of C{list_}."""
        self[key] = list_

    def setdefault(self, key, def_val=None):
        """The stored list of C{key}, set to C{def_val} first when missing."""
        return dict.setdefault(self, self.normkey(key), self.normvalue(def_val))

    def setlistdefault(self, key, default_list=()):
        """L{setdefault} with a list of values."""
        return self.setdefault(key, default_list)

    def appendlist(self, key, value):
        """Add C{value} (one value or several) after the values of C{key}."""
        values = self.getlist(key)
        values.extend(self.normvalue(value))
        self[key] = values

    def pop(self, key, *default):
        return dict.pop(self, self.normkey(key), *default)

    def update(self, seq):
        """Add C{seq} (a mapping or pairs), names case-folded; a name given twice in
        C{seq} keeps the values of both."""
        pairs = seq.items() if isinstance(seq, Mapping) else seq
        merged = {}
        for key, value in pairs:
            merged.setdefault(self.normkey(key), []).extend(self.normvalue(value))
        dict.update(self, merged)

    @classmethod
    def fromkeys(cls, keys, value=None):
        return cls((key, value) for key in keys)

    def items(self):
        """C{(name, [values])} pairs."""
        return ((key, dict.__getitem__(self, key)) for key in self.keys())

    def values(self):
        """The last value of each name."""
        return [self[key] for key in self.keys()]

    def __copy__(self):
        return type(self)(self, encoding=self.encoding)

    copy = __copy__

    def __reduce__(self):
        return (type(self), (list(dict.items(self)), self.encoding))

    # -- other shapes ----------------------------------------------------------------

    def to_unicode_dict(self):
        """A case-insensitive dict of C{str} names to C{str} values (several values joined
        with C{,})."""
        encoding = self.encoding
        return CaseInsensitiveDict(
            (key.decode(encoding), b",".join(values).decode(encoding))
            for key, values in self.items())

    def to_tuple_list(self):
        """C{(name, value)} C{str} pairs, one per value."""
        encoding = self.encoding
        return [(key.decode(encoding), value.decode(encoding))
                for key, values in self.items() for value in values]

    def to_string(self):
        """The headers as the lines of an HTTP message (C{bytes}, CRLF-separated)."""
        return b"\r\n".join(key + b": " + value for key, values in self.items()
                            for value in values)


def _remember(key, normal):
    if len(_NAMES) < _NAMES_MAX:
        _NAMES[key] = normal
    return normal


def header_pairs(headers):
    """
    C{(title-cased bytes name, [bytes values])} pairs of C{headers} (a L{Headers}, a
    mapping or pairs), without building a L{Headers}.
    """
    if isinstance(headers, Headers):
        return list(dict.items(headers))
    normal = _PLAIN
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return [(normal.normkey(name), normal.normvalue(value)) for name, value in pairs]


_PLAIN = Headers()


class CaseInsensitiveDict(dict):
    """What L{Headers.to_unicode_dict} returns: C{str} keys looked up in any casing, kept
    in the casing first given."""

    def __init__(self, pairs=()):
        super().__init__()
        self._names = {}
        for key, value in pairs:
            self[key] = value

    def __setitem__(self, key, value):
        name = self._names.setdefault(key.lower(), key)
        dict.__setitem__(self, name, value)

    def __getitem__(self, key):
        return dict.__getitem__(self, self._names.get(key.lower(), key))

    def __delitem__(self, key):
        dict.__delitem__(self, self._names.pop(key.lower(), key))

    def __contains__(self, key):
        return isinstance(key, str) and key.lower() in self._names

    def get(self, key, default=None):
        return self[key] if key in self else default


# header values as the built-in middlewares read them, whether Headers hands back str
# (latin-1 decoded, as received) or bytes (as in Scrapy)

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

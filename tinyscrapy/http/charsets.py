"""
How a response's text is encoded, as Scrapy's C{TextResponse} decides it, and what is
text at all.

L{decode}: the encoding is, in Scrapy's order,

    1. the one the response was built with (C{TextResponse(..., encoding=)});
    2. a byte-order mark (UTF-8, UTF-16, UTF-32);
    3. the C{charset} of the C{Content-Type} header;
    4. C{<meta charset>}, C{<meta http-equiv="Content-Type">} or C{<?xml encoding?>};
    5. inferred from the body: C{cp1252} (what Scrapy calls ASCII) when it is ASCII,
       C{utf-8} when it is valid UTF-8, else C{cp1252}.

Names are resolved as browsers and Scrapy do (w3lib): C{iso-8859-1} and C{ascii} are
C{cp1252}, C{gbk}/C{gb2312} C{gb18030}, C{shift_jis} C{cp932}. A UTF-8 JSON body
labelled C{charset=iso-8859-1} is C{cp1252} text, as in Scrapy; its C{json()} reads the
bytes, which JSON says are UTF-8, and comes out right.

tinyscrapy refines only what would otherwise be mojibake (docs/differences.md): a bare
C{utf-16}/C{utf-32} label without a BOM is read in the byte order the body shows (as the
WHATWG Encoding standard says); a UTF-16 label in C{<meta>} means UTF-8 (as HTML5 says:
an ASCII scan could not have found it in real UTF-16); an undeclared body in UTF-16 is
recognised by its zero bytes; an undeclared body that is not UTF-8 and has at least
L{GUESS_MIN} non-ASCII bytes is guessed by C{charset_normalizer} when it is installed
(on the first 16 KiB, a few milliseconds, only for these pages).

L{is_text} and L{is_html} are tinyscrapy's older verdicts from the C{Content-Type} and a
sniff; the response classes (L{tinyscrapy.http.response.response_class}) now decide.
"""


from functools import lru_cache

_TEXT_APPLICATION = frozenset({
    "json", "javascript", "ecmascript", "x-javascript", "x-ecmascript", "xml", "xhtml+xml",
    "x-www-form-urlencoded", "ndjson", "x-ndjson", "jsonl", "x-jsonlines", "yaml",
    "x-yaml", "csv", "x-csv", "graphql", "sql", "rtf", "x-sh", "x-tex", "x-latex",
})
_BINARY_MAGIC = (b"\x89PNG", b"GIF87a", b"GIF89a", b"\xff\xd8\xff", b"%PDF-", b"PK\x03\x04",
                 b"\x1f\x8b", b"BM", b"RIFF", b"OggS", b"ID3", b"\x00\x00\x01\x00",
                 b"wOFF", b"wOF2", b"7z\xbc\xaf", b"Rar!", b"BZh", b"\xfd7zXZ",
                 b"\x00asm", b"\x7fELF", b"MZ", b"\xd0\xcf\x11\xe0", b"\x28\xb5\x2f\xfd")
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
# mimesniff's "binary data bytes": control characters no text format uses
_BINARY_BYTES = bytes([*range(0, 9), 11, *range(14, 27), *range(28, 32)])
_DETECT_BYTES = 16384


def media_type(content_type):
    """C{"text/html; charset=utf-8"} -> C{"text/html"} (lower case; "" when missing)."""
    if not content_type:
        return ""
    return content_type.partition(";")[0].strip().lower()


@lru_cache(maxsize=512)
def text_type(content_type):
    """
    @return: True for a text media type, False for a binary one, None when
        C{content_type} names no usable type (then the body decides).
    """
    media = media_type(content_type)
    main, slash, sub = media.partition("/")
    if not slash or not main or not sub or "*" in media:
        return None
    if main == "text":
        return True
    if sub.endswith(("+xml", "+json")):
        return True
    return main == "application" and sub in _TEXT_APPLICATION


def is_text(content_type, body):
    """Is this body text (True) or binary (False)? See the module docstring."""
    verdict = text_type(content_type) if content_type else None
    if verdict is False:
        return False
    if verdict and not media_type(content_type) == "text/plain":
        return True
    # no usable type, or text/plain, which browsers check too (mimesniff): servers
    # label unknown files text/plain
    head = body[:512]
    if head.startswith(_BOMS):
        return True
    if head.startswith(_BINARY_MAGIC):
        return False
    if _utf16_sniff(head):
        return True
    return not any(byte in _BINARY_BYTES for byte in head)


_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml"})


def is_html(content_type, body):
    """
    Is this body HTML, what Scrapy makes an C{HtmlResponse} of? The C{Content-Type}
    decides (C{text/html}, XHTML); a body without a usable one is HTML when it is text
    with C{<html} or C{<!doctype html} in its first 5,000 bytes (Scrapy looks for
    C{<html>} there).
    """
    if content_type and text_type(content_type) is not None:
        return media_type(content_type) in _HTML_TYPES
    head = body[:5000].lower()
    return (b"<html" in head or b"<!doctype html" in head) and is_text(None, body)


GUESS_MIN = 8


def decode(content_type, body, encoding=None):
    """
    Decode C{body} as the module docstring says.

    @param content_type: the C{Content-Type} header (C{str}), or None.
    @param encoding: the encoding the response was built with, or None.
    @return: C{(encoding name, text)}.
    """
    from w3lib.encoding import html_to_unicode, read_bom, to_unicode

    if encoding is not None:  # as Scrapy decodes it (a BOM still wins for the text)
        return encoding, html_to_unicode(f"charset={encoding}", body)[1]
    name, bom = read_bom(body)
    if name is not None:
        return name, to_unicode(body[len(bom):], name)
    name = declared_encoding(content_type, body)
    if name is None:
        name = inferred_encoding(body)
    return name, to_unicode(body, name)


def declared_encoding(content_type, body):
    """The encoding the header or the body declares (steps 3 and 4), or None."""
    from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding
    # most servers send no charset at all: no need to parse the header for one
    name = http_content_type_encoding(content_type) \
        if content_type and "=" in content_type else None
    if name in ("utf-16", "utf-32"):
        return _endianness(body, name)
    if name is None:
        name = html_body_declared_encoding(body)
        if name is not None and name.startswith(("utf-16", "utf-32")):
            name = "utf-8"
    return name


def inferred_encoding(body):
    """The encoding of an undeclared body (step 5, with its refinements)."""
    sniffed = _utf16_sniff(body[:512])
    if sniffed is not None:
        return sniffed
    if body.isascii():
        return "cp1252"
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    if sum(1 for byte in body[:_DETECT_BYTES] if byte > 127) >= GUESS_MIN:
        return _detect(body) or "cp1252"
    return "cp1252"


def _endianness(body, encoding):
    """A bare C{utf-16}/C{utf-32} label without a BOM: LE unless the bytes say BE."""
    if encoding == "utf-16":
        return "utf-16-be" if body[:1] == b"\x00" and body[1:2] != b"\x00" else "utf-16-le"
    return "utf-32-be" if body[:1] == b"\x00" else "utf-32-le"


def _utf16_sniff(head):
    """UTF-16 without BOM: ASCII characters show as a zero byte beside each one."""
    if len(head) < 8:
        return None
    even, odd = head[0:64:2], head[1:64:2]
    if odd.count(0) > len(odd) * 3 // 4 and even.count(0) == 0:
        return "utf-16-le"
    if even.count(0) > len(even) * 3 // 4 and odd.count(0) == 0:
        return "utf-16-be"
    return None


def _detect(body):
    """A guess from charset_normalizer (when installed), resolved as a browser would."""
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    from w3lib.encoding import resolve_encoding
    best = from_bytes(body[:_DETECT_BYTES]).best()
    if best is None:
        return None
    return resolve_encoding(best.encoding)

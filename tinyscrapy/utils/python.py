"""
Scrapy's small helpers for the objects of a crawl, as its users call them in their own
components: L{to_bytes} and L{to_unicode} (C{scrapy.utils.python}), L{urlparse_cached}
(C{scrapy.utils.httpobj}), L{request_httprepr} (C{scrapy.utils.request}).
"""



def to_bytes(text, encoding=None, errors="strict"):
    """
    C{text} as C{bytes}: a C{str} encoded (utf-8 unless C{encoding} says), C{bytes} as it is.

    @raise TypeError: C{text} is neither.
    """
    if isinstance(text, bytes):
        return text
    if isinstance(text, str):
        return text.encode(encoding or "utf-8", errors)
    raise TypeError(f"to_bytes must receive a str or bytes object, got {type(text).__name__}")


def to_unicode(text, encoding=None, errors="strict"):
    """
    C{text} as C{str}: C{bytes} decoded (utf-8 unless C{encoding} says), C{str} as it is.

    @raise TypeError: C{text} is neither.
    """
    if isinstance(text, str):
        return text
    if isinstance(text, bytes):
        return text.decode(encoding or "utf-8", errors)
    raise TypeError(f"to_unicode must receive a bytes or str object, got {type(text).__name__}")

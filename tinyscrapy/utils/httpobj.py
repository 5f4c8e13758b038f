"""
Scrapy's C{scrapy.utils.httpobj}: L{urlparse_cached}, a request's or a response's URL
parsed once (kept on the object).
"""

from functools import lru_cache
from urllib.parse import urlparse


@lru_cache(maxsize=1024)
def _parsed(url):
    return urlparse(url)


def urlparse_cached(request_or_response):
    """C{urllib.parse.urlparse} of a request's or a response's URL, each URL parsed once
    (the last thousand are kept)."""
    return _parsed(request_or_response.url)

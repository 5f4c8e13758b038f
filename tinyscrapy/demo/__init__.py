"""
The embedded demo site: books and quotes to crawl on 127.0.0.1, with no network.

    >>> from tinyscrapy.demo import listen
    >>> listening = listen(0)
    >>> base_url = f"http://127.0.0.1:{listening.getHost().port}"

L{tinyscrapy.demo.site} has the URL map.
"""

from tinyscrapy.demo.data import BOOK_CATEGORY_COUNT, BOOK_COUNT, QUOTE_COUNT
from tinyscrapy.demo.site import build_site, listen

__all__ = ["BOOK_CATEGORY_COUNT", "BOOK_COUNT", "QUOTE_COUNT", "build_site", "listen"]

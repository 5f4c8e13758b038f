"""
Scrapy's C{scrapy.core.downloader.handlers.http}: the http and https handler under its
old name (L{tinyscrapy.core.downloader.handlers.http11}, as in Scrapy, where this module
re-exports the HTTP/1.1 handler and warns that the alias is deprecated).
"""

import warnings

from tinyscrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from tinyscrapy.exceptions import ScrapyDeprecationWarning

HTTPDownloadHandler = HTTP11DownloadHandler

warnings.warn(
    "The scrapy.core.downloader.handlers.http module is deprecated, please import "
    "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler instead of its "
    "deprecated alias scrapy.core.downloader.handlers.http.HTTPDownloadHandler",
    ScrapyDeprecationWarning, stacklevel=2)

__all__ = ["HTTPDownloadHandler"]

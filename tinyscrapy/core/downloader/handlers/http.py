"""
Scrapy's C{scrapy.core.downloader.handlers.http}: the http and https handler under its
scheme's name (L{tinyscrapy.core.downloader.handlers.http11}, as in Scrapy, where this
module re-exports the HTTP/1.1 handler too).
"""

from tinyscrapy.core.downloader.handlers.http11 import HttpFetcher

HTTPDownloadHandler = HttpFetcher

__all__ = ["HTTPDownloadHandler", "HttpFetcher"]

"""
L{DownloadTimeoutMiddleware}: a spider's C{download_timeout} attribute, as Scrapy's.

The download handler applies C{meta["download_timeout"]} and, without it,
C{DOWNLOAD_TIMEOUT} (L{tinyscrapy.core.downloader.handlers.http11}); this middleware only
sets the meta key from the spider's own C{download_timeout}, so a crawl whose spider has
none does not build it.
"""

from tinyscrapy.exceptions import NotConfigured


class DownloadTimeoutMiddleware:
    """Give each request the spider's C{download_timeout} unless it has its own."""

    def __init__(self, timeout=180.0):
        self._timeout = timeout

    @classmethod
    def from_crawler(cls, crawler):
        """@raise NotConfigured: the spider has no C{download_timeout}."""
        spider = getattr(crawler, "spider", None)
        timeout = getattr(spider, "download_timeout", None)
        if timeout is None:
            raise NotConfigured("the spider has no download_timeout (DOWNLOAD_TIMEOUT applies)")
        return cls(float(timeout))

    def process_request(self, request, spider=None):
        if self._timeout:
            request.meta.setdefault("download_timeout", self._timeout)

"""
L{BaseDownloadHandler}: Scrapy's optional base class of a download handler (C{scrapy.core.
downloader.handlers.base}), for a scheme named in C{DOWNLOAD_HANDLERS}.

A handler is built once per crawl by its C{from_crawler(crawler)} and offers:

    - C{download_request(request)}: Scrapy 2.19's form is a coroutine (C{async def})
      returning the response; the older form takes C{(request, spider)} and returns a
      Deferred, and both are accepted (L{tinyscrapy.core.downloader.handlers.DownloadHandlers});
    - C{close()}: a coroutine, a Deferred or nothing, when the crawl's downloader closes;
    - C{lazy}: False builds it when the crawl starts, True at the first request of its
      scheme (a handler without the attribute is lazy, as in Scrapy).

A handler never calls the engine's C{download}: it is what that method ends in.
"""

from abc import ABC, abstractmethod


class BaseDownloadHandler(ABC):
    """
    The base of a download handler: keeps the crawler, is built by L{from_crawler}.

    @ivar crawler: the crawler it serves.
    """

    lazy = False

    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    @abstractmethod
    async def download_request(self, request):
        """Download C{request}. @return: (the coroutine's result) its response."""
        raise NotImplementedError

    async def close(self):  # noqa: B027 - a handler with nothing to clean up keeps this
        """Release what the handler holds (nothing here)."""

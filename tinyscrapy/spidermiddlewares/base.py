"""
L{BaseSpiderMiddleware}: Scrapy's base for a spider middleware that looks at each request and
item a spider yields, one at a time.
"""

from tinyscrapy.http.request import Request


class BaseSpiderMiddleware:
    """
    A spider middleware whose C{process_spider_output} (plain and asynchronous) and
    start-request hooks pass each object through L{get_processed_request} or
    L{get_processed_item}; a subclass overrides those two. What they return goes on, None
    leaves the object out.

    @ivar crawler: the crawler it was built for.
    """

    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def process_start_requests(self, start_requests, spider=None):
        """The start requests (and items), each processed, C{response} None."""
        for o in start_requests:
            o = self._processed(o, None)
            if o is not None:
                yield o

    async def process_start(self, start):
        """Scrapy's asynchronous start hook: as L{process_start_requests}."""
        async for o in start:
            o = self._processed(o, None)
            if o is not None:
                yield o

    def process_spider_output(self, response, result, spider=None):
        """The callback's output for C{response}, each object processed."""
        for o in result:
            o = self._processed(o, response)
            if o is not None:
                yield o

    async def process_spider_output_async(self, response, result, spider=None):
        """L{process_spider_output} for an asynchronous output."""
        async for o in result:
            o = self._processed(o, response)
            if o is not None:
                yield o

    def _processed(self, o, response):
        if isinstance(o, Request):
            return self.get_processed_request(o, response)
        return self.get_processed_item(o, response)

    def get_processed_request(self, request, response):
        """
        @param response: the response whose callback yielded C{request}; None for a
            start request.
        @return: the request to go on with (this one by default), or None to drop it.
        """
        return request

    def get_processed_item(self, item, response):
        """
        @param response: the response whose callback yielded C{item}; None for an item
            among the start requests.
        @return: the item to go on with (this one by default), or None to drop it.
        """
        return item

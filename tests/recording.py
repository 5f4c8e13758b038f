"""
A spider that records what reaches it, for the middleware tests.
"""

from tinyscrapy import Request, Spider


class Recorder(Spider):
    """
    Requests each of C{start_urls} (or the requests C{make(spider)} returns) and keeps
    every response and failure; follows nothing unless C{follow} is true.

    @ivar responses: every L{HttpResponse} its callback got.
    @ivar failures: every failure its errback got.
    """

    name = "recorder"
    make = None
    follow = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.responses = []
        self.failures = []

    def start_requests(self):
        if self.make is not None:
            return self.make(self)
        return [Request(url, errback=self.errback, dont_filter=True) for url in self.start_urls]

    def parse(self, response):
        self.responses.append(response)
        if self.follow and response.is_text:
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, errback=self.errback)

    def errback(self, failure):
        self.failures.append(failure)

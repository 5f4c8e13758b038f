"""
Built-in downloader middlewares for the headers every request carries:
L{DefaultHeadersMiddleware} (C{DEFAULT_REQUEST_HEADERS}) and L{UserAgentMiddleware}
(C{User-Agent}). A request's own headers always win.
"""

import tinyscrapy


def default_user_agent():
    """C{tinyscrapy/<version> (+<project URL>)}: who is crawling, and where to read about it."""
    return f"tinyscrapy/{tinyscrapy.__version__} (+{tinyscrapy.PROJECT_URL})"


class DefaultHeadersMiddleware:
    """Set each of C{DEFAULT_REQUEST_HEADERS} on every request that lacks it."""

    def __init__(self, headers):
        self.headers = list(headers.items())

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings.getdict("DEFAULT_REQUEST_HEADERS"))

    def process_request(self, request, spider=None):
        headers = request.headers
        for name, value in self.headers:
            if name not in headers:
                headers[name] = value


class UserAgentMiddleware:
    """
    Set C{User-Agent} on every request that lacks one: the spider's C{user_agent}
    attribute, else C{USER_AGENT}, else L{default_user_agent}, so a site's operator can find
    out who is crawling.
    """

    crawler = None

    def __init__(self, user_agent):
        self.user_agent = user_agent

    @classmethod
    def from_crawler(cls, crawler):
        middleware = cls(crawler.settings.get("USER_AGENT") or default_user_agent())
        middleware.crawler = crawler
        return middleware

    def process_request(self, request, spider=None):
        if spider is None and self.crawler is not None:
            spider = self.crawler.spider
        headers = request.headers
        if "User-Agent" not in headers:
            headers["User-Agent"] = getattr(spider, "user_agent", None) or self.user_agent

"""
L{HttpErrorMiddleware}: Scrapy's HTTP-error rule. A response whose status is outside
200-299 reaches the callback only when asked for: the request's
C{meta["handle_httpstatus_list"]} (even empty, it wins over the spider's) or
C{meta["handle_httpstatus_all"]}, the spider's C{handle_httpstatus_list}, or the settings
C{HTTPERROR_ALLOWED_CODES} and C{HTTPERROR_ALLOW_ALL}. Any other goes to the request's
errback as an L{HttpError} (defined in L{tinyscrapy.exceptions}, where the kernel finds
it).

Its C{process_spider_input}, called for every page before the callback, raises the
L{HttpError}; with the middleware switched off (C{None} in C{SPIDER_MIDDLEWARES}) every
status reaches the callback, as in Scrapy.
"""

from tinyscrapy.exceptions import HttpError
from tinyscrapy.spiders import Spider


class HttpErrorMiddleware:
    """Which statuses reach a callback."""

    def __init__(self, allowed_codes=(), allow_all=False):
        self.allowed_codes = tuple(allowed_codes)
        self.allow_all = allow_all

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        return cls(settings.getlist("HTTPERROR_ALLOWED_CODES"),
                   settings.getbool("HTTPERROR_ALLOW_ALL"))

    def status_allowed(self, response, request, spider):
        """@return: True when C{response} may reach C{request}'s callback."""
        status = response.status
        if 200 <= status < 300:
            return True
        meta = request._meta
        if meta:
            if meta.get("handle_httpstatus_all"):
                return True
            if "handle_httpstatus_list" in meta:  # the request's list wins, even empty
                return status in meta["handle_httpstatus_list"]
        if self.allow_all:
            return True
        allowed = spider.handle_httpstatus_list
        if allowed is Spider.handle_httpstatus_list:  # the spider set none
            allowed = self.allowed_codes
        return status in allowed

    def process_spider_input(self, response, spider):
        """@raise HttpError: C{response}'s status is not allowed."""
        if not self.status_allowed(response, response.request, spider):
            raise HttpError(response)


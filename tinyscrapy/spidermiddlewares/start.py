"""
L{StartSpiderMiddleware}: Scrapy's middleware that marks start requests with
C{meta["is_start_request"] = True}. tinyscrapy's engine sets the mark itself, on every
start request (L{tinyscrapy.core.startrequests}), so this middleware is not among the
built-in ones; it is here for a project's code that subclasses or names it.
"""

from tinyscrapy.spidermiddlewares.base import BaseSpiderMiddleware


class StartSpiderMiddleware(BaseSpiderMiddleware):
    """Set C{meta["is_start_request"]} on each start request that has not set it."""

    def get_processed_request(self, request, response):
        if response is None:
            request.meta.setdefault("is_start_request", True)
        return request

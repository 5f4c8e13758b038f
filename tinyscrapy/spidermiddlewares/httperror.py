"""
Scrapy's C{scrapy.spidermiddlewares.httperror}, at the same path: L{HttpError}, the
failure an errback gets for a response whose status the spider did not ask for
(defined in L{tinyscrapy.exceptions}; the status rule is in L{tinyscrapy.core.scraper}).

This module only re-exports.
"""

from tinyscrapy.exceptions import HttpError

__all__ = ["HttpError"]

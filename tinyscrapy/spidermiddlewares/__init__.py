"""
Scrapy's C{scrapy.spidermiddlewares} package, at the same path, for the names spiders
import from it (C{from scrapy.spidermiddlewares.httperror import HttpError}). The spider
middlewares themselves are in L{tinyscrapy.middleware}: C{referer} is
L{tinyscrapy.middleware.referer} under a second name (an entry in C{sys.modules}), with
Scrapy's policy classes and C{POLICY_*} names.

This module only re-exports.
"""

import sys

from tinyscrapy.middleware import referer

sys.modules[__name__ + ".referer"] = referer

__all__ = ["referer"]

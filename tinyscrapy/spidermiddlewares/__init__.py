"""
Scrapy's C{scrapy.spidermiddlewares} package, at the same path, for the names spiders
import from it (C{from scrapy.spidermiddlewares.httperror import HttpError}). The spider
middlewares themselves are in L{tinyscrapy.middleware}.

This package only re-exports.
"""

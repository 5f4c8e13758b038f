"""
Scrapy's C{scrapy.link}, at the same path: L{Link}, a link a L{LinkExtractor} found
(defined in L{tinyscrapy.scope.links}).

This module only re-exports.
"""

from tinyscrapy.scope.links import Link

__all__ = ["Link"]

"""
Scrapy's C{scrapy.utils.httpobj}, at the same path: C{urlparse_cached} (defined in
L{tinyscrapy.http.conversions}).

This module only re-exports.
"""

from tinyscrapy.http.conversions import urlparse_cached

__all__ = ["urlparse_cached"]

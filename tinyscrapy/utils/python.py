"""
Scrapy's C{scrapy.utils.python}, at the same path: C{to_bytes} and C{to_unicode} (defined
in L{tinyscrapy.http.conversions}).

This module only re-exports.
"""

from tinyscrapy.http.conversions import to_bytes, to_unicode

__all__ = ["to_bytes", "to_unicode"]

"""
Scrapy's C{scrapy.linkextractors}, at the same path: L{LinkExtractor} and L{Link}, defined
in L{tinyscrapy.linkextractors.lxmlhtml} (finding links is part of deciding what is in scope).

This module only re-exports.
"""

from tinyscrapy.link import Link
from tinyscrapy.linkextractors.lxmlhtml import LinkExtractor

# Scrapy's other name for the same class
LxmlLinkExtractor = LinkExtractor

__all__ = ["Link", "LinkExtractor", "LxmlLinkExtractor"]

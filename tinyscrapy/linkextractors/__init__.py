"""
Scrapy's C{scrapy.linkextractors}, at the same path: L{LinkExtractor} and L{Link}, defined
in L{tinyscrapy.scope.links} (finding links is part of deciding what is in scope).

This module only re-exports.
"""

from tinyscrapy.scope.links import Link, LinkExtractor

# Scrapy's other name for the same class
LxmlLinkExtractor = LinkExtractor

__all__ = ["Link", "LinkExtractor", "LxmlLinkExtractor"]

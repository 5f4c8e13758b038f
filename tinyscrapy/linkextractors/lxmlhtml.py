"""
Scrapy's C{scrapy.linkextractors.lxmlhtml}, at the same path: L{LxmlLinkExtractor}, the
link extractor under its longer name, and L{Link} (both defined in
L{tinyscrapy.scope.links}).

This module only re-exports.
"""

from tinyscrapy.scope.links import Link, LinkExtractor

LxmlLinkExtractor = LinkExtractor

__all__ = ["Link", "LxmlLinkExtractor"]

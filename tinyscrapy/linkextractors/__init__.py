"""
Scrapy's C{scrapy.linkextractors}: L{LinkExtractor} (defined in
L{tinyscrapy.linkextractors.lxmlhtml}, as Scrapy's) and L{Link}. This module only
re-exports, as Scrapy's does.
"""

from tinyscrapy.link import Link
from tinyscrapy.linkextractors.lxmlhtml import LinkExtractor, LxmlLinkExtractor

__all__ = ["Link", "LinkExtractor", "LxmlLinkExtractor"]

"""
Scrapy's C{scrapy.linkextractors}: L{LinkExtractor} (defined in
L{tinyscrapy.linkextractors.lxmlhtml}, as Scrapy's) and L{Link}. This module only
re-exports, as Scrapy's does, and gives C{IGNORED_EXTENSIONS} as Scrapy's type, a list
(C{IGNORED_EXTENSIONS + ["pdf"]}), sorted.
"""

from tinyscrapy.link import Link
from tinyscrapy.linkextractors.lxmlhtml import IGNORED_EXTENSIONS as _IGNORED
from tinyscrapy.linkextractors.lxmlhtml import LinkExtractor, LxmlLinkExtractor

IGNORED_EXTENSIONS = sorted(_IGNORED)

__all__ = ["IGNORED_EXTENSIONS", "Link", "LinkExtractor", "LxmlLinkExtractor"]

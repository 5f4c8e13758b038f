"""
Scrapy's C{scrapy.utils.spider}, importable as C{tinyscrapy.utils.spider} (an entry in
C{sys.modules}: a module named C{spider.py} here would share its name with
L{tinyscrapy.spiders}): C{DefaultSpider} (L{tinyscrapy.utils.test}).

This module only re-exports.
"""

from tinyscrapy.spiders import Spider


class DefaultSpider(Spider):
    """The spider of a crawler made without one (Scrapy's C{DefaultSpider})."""

    name = "default"

__all__ = ["DefaultSpider"]

"""
Scrapy's C{scrapy.utils.spider}, importable as C{tinyscrapy.utils.spider} (an entry in
C{sys.modules}: a module named C{spider.py} here would share its name with
L{tinyscrapy.spider}): C{DefaultSpider} (L{tinyscrapy.runner.testing}).

This module only re-exports.
"""

from tinyscrapy.runner.testing import DefaultSpider

__all__ = ["DefaultSpider"]

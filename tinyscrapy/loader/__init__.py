"""
Scrapy's C{scrapy.loader}, at the same path: L{ItemLoader}. The processors are
C{itemloaders.processors}, as in Scrapy; C{tinyscrapy.loader.processors} re-exports them
for spiders written against Scrapy's old C{scrapy.loader.processors} path.

This module only re-exports.
"""

from tinyscrapy.items.itemloader import ItemLoader

__all__ = ["ItemLoader"]

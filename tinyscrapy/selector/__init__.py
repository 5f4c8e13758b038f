"""
Scrapy's C{scrapy.selector}, at the same path: parsel's L{Selector} and L{SelectorList},
which C{response.css()} and C{response.xpath()} return.

This module only re-exports.
"""

from parsel import Selector, SelectorList

__all__ = ["Selector", "SelectorList"]

"""
Scrapy's C{scrapy.selector}, at the same path: L{Selector} (parsel's, made from a response
as Scrapy's is: C{Selector(response=r)}, C{selector.response}) and parsel's
L{SelectorList}, which C{response.css()} and C{response.xpath()} return.

This module only re-exports.
"""

from parsel import SelectorList

from tinyscrapy.selector.unified import Selector

__all__ = ["Selector", "SelectorList"]

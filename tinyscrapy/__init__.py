"""
tinyscrapy: Scrapy's model, TinyScrapy's size, Twisted's Deferreds in plain view.

This module only re-exports the public names, as C{scrapy} does: a spider written for
Scrapy imports C{tinyscrapy as scrapy}. L{Selector}, L{Item} and L{Field} are imported on
first use (parsel costs some 25 ms of start-up, itemadapter some 80 ms, that a crawl
without selectors or declared items never pays).
"""

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/tinyscrapy/tinyscrapy"

from tinyscrapy import signals  # noqa: E402
from tinyscrapy.errors import CloseSpider, DropItem, IgnoreRequest, NotConfigured  # noqa: E402
from tinyscrapy.http import (  # noqa: E402
    FormRequest,
    Headers,
    HttpResponse,
    JsonRequest,
    Request,
)
from tinyscrapy.spider import Spider  # noqa: E402
from tinyscrapy.spiders.crawlspider import CrawlSpider, Rule  # noqa: E402

__all__ = [
    "CloseSpider", "CrawlSpider", "DropItem", "Field", "FormRequest", "Headers",
    "HttpResponse", "IgnoreRequest", "Item", "JsonRequest", "NotConfigured", "Request", "Rule",
    "Selector", "Spider", "__version__", "signals",
]


def __getattr__(name):
    """C{tinyscrapy.Selector}, C{tinyscrapy.Item} and C{tinyscrapy.Field}, imported on
    first use."""
    if name == "Selector":
        from tinyscrapy.selector import Selector
        return Selector
    if name in ("Item", "Field"):
        from tinyscrapy.items import declared
        return getattr(declared, name)
    raise AttributeError(f"module 'tinyscrapy' has no attribute {name!r}")

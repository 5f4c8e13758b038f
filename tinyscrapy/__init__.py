"""
tinyscrapy: Scrapy's model, TinyScrapy's size, Twisted's Deferreds in plain view.

This module only re-exports the public names.
"""

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/tinyscrapy/tinyscrapy"

from tinyscrapy.crawlspider import CrawlSpider, Rule  # noqa: E402
from tinyscrapy.errors import CloseSpider, DropItem, IgnoreRequest, NotConfigured  # noqa: E402
from tinyscrapy.http import FormRequest, HttpResponse, JsonRequest, Request  # noqa: E402
from tinyscrapy.spider import Spider  # noqa: E402

__all__ = [
    "CloseSpider", "CrawlSpider", "DropItem", "FormRequest", "HttpResponse", "IgnoreRequest",
    "JsonRequest", "NotConfigured", "Request", "Rule", "Spider", "__version__",
]

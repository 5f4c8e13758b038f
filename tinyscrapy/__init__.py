"""
tinyscrapy: Scrapy's model, TinyScrapy's size, Twisted's Deferreds in plain view.

This module only re-exports the public names, as C{scrapy} does: a spider written for
Scrapy imports C{tinyscrapy as scrapy}. Each name is imported on first use (L{__getattr__}),
so that importing a part of the package (C{tinyscrapy.core.engine}, say) does not load the
rest of it: parsel, lxml and itemadapter cost a crawl that needs none of them some 0.1 s of
start-up.
"""

import importlib

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/tinyscrapy/tinyscrapy"

# each public name, and the module that defines it
_WHERE = {
    "CloseSpider": "tinyscrapy.exceptions",
    "DropItem": "tinyscrapy.exceptions",
    "IgnoreRequest": "tinyscrapy.exceptions",
    "NotConfigured": "tinyscrapy.exceptions",
    "Headers": "tinyscrapy.http.headers",
    "Request": "tinyscrapy.http.request",
    "FormRequest": "tinyscrapy.http.request.form",
    "JsonRequest": "tinyscrapy.http.request.json_request",
    "HttpResponse": "tinyscrapy.responsetypes",
    "Spider": "tinyscrapy.spiders",
    "CrawlSpider": "tinyscrapy.spiders.crawl",
    "Rule": "tinyscrapy.spiders.crawl",
    "Selector": "tinyscrapy.selector.unified",
    "Item": "tinyscrapy.item",
    "Field": "tinyscrapy.item",
}

__all__ = sorted([*_WHERE, "__version__", "signals"])


def __getattr__(name):
    """A public name (or the C{signals} module), imported on first use."""
    where = _WHERE.get(name)
    if where is not None:
        return getattr(importlib.import_module(where), name)
    if name == "signals":
        return importlib.import_module("tinyscrapy.signals")
    raise AttributeError(f"module 'tinyscrapy' has no attribute {name!r}")

"""
tinyscrapy: Scrapy's model, TinyScrapy's size, Twisted's Deferreds in plain view.

This module only re-exports the public names, as C{scrapy} does: a spider written for
Scrapy imports C{tinyscrapy as scrapy}, or runs unchanged once L{install_as_scrapy} serves
C{import scrapy} from tinyscrapy (L{tinyscrapy.scrapyfinder}). Each name is imported on
first use (L{__getattr__}), and so is each submodule (C{tinyscrapy.http.Request} after a
bare C{import tinyscrapy}, as C{scrapy.http.Request} works after C{import scrapy}), so that
importing a part of the package (C{tinyscrapy.core.engine}, say) does not load the rest of
it, nor parsel, lxml or itemadapter (their start-up cost: docs/performance.md).
"""

import importlib
import importlib.util
import sys

__version__ = "0.1.0"
version_info = tuple(int(part) for part in __version__.split("."))
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
    "install_as_scrapy": "tinyscrapy.scrapyfinder",
}

__all__ = sorted([*_WHERE, "__version__", "version_info", "signals"])


def __getattr__(name):
    """A public name, or a submodule (C{signals}, C{http}, C{item}, ...), imported on first
    use. A submodule still importing is given as it stands (itemadapter's probe of
    C{scrapy.item}, made while L{tinyscrapy.item} imports itemadapter)."""
    where = _WHERE.get(name)
    if where is not None:
        return getattr(importlib.import_module(where), name)
    if not name.startswith("_"):
        submodule = f"{__name__}.{name}"
        if submodule in sys.modules or importlib.util.find_spec(submodule) is not None:
            return importlib.import_module(submodule)
    raise AttributeError(f"module 'tinyscrapy' has no attribute {name!r}")

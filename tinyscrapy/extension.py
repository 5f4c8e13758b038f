"""
Scrapy's C{scrapy.extension}: L{ExtensionManager}, the crawl's extensions, built from
C{EXTENSIONS} merged over C{EXTENSIONS_BASE}, in their order; an extension that raises
C{NotConfigured} is left out. An extension only listens: each connects its own signals in
C{from_crawler}, so the manager collects no hooks.
"""

from tinyscrapy.middleware import MiddlewareManager


class ExtensionManager(MiddlewareManager):
    """
    The extensions of one crawl (C{crawler.extensions}), as Scrapy's manager holds them:
    C{middlewares} the extensions, C{paths} what enabled each.
    """

    component_name = "extension"
    setting = "EXTENSIONS"

"""
Scrapy's C{scrapy.extension}: L{ExtensionManager}, the crawl's extensions, built from
C{EXTENSIONS} merged over C{EXTENSIONS_BASE} (L{tinyscrapy.middleware.build_ordered}), in
their order; an extension that raises C{NotConfigured} is left out.
"""

from tinyscrapy.middleware import build_ordered


class ExtensionManager:
    """
    The extensions of one crawl, as Scrapy's manager holds them.

    @ivar middlewares: the extensions, in their order (Scrapy's attribute name).
    @ivar paths: the dotted path (or name) of each, in the same order.
    """

    component_name = "extension"

    def __init__(self, *middlewares, crawler=None, paths=None):
        self.crawler = crawler
        self.middlewares = middlewares
        self.paths = tuple(paths) if paths is not None else ()

    @classmethod
    def from_crawler(cls, crawler):
        """The extensions C{crawler}'s settings enable, built for it."""
        built = build_ordered(crawler, "EXTENSIONS")
        return cls(*(extension for _, extension in built), crawler=crawler,
                   paths=[path for path, _ in built])

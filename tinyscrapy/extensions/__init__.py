"""
Extensions: components that only listen to signals, enabled by C{EXTENSIONS} /
C{EXTENSIONS_BASE} as in Scrapy. The built-in ones: the close conditions
(L{tinyscrapy.extensions.closespider}) and the feed exports (L{tinyscrapy.extensions.feedexport}).
"""

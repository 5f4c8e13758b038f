"""
Extensions: components that only listen to signals (feed exports, close conditions,
the progress line). Enabled by C{EXTENSIONS} / C{EXTENSIONS_BASE}, like Scrapy's.
"""

from tinyscrapy.components import build_ordered


def build_extensions(crawler):
    """Build every enabled extension; each connects its own signals in C{from_crawler}.
    @return: a list of C{(path, extension)}."""
    return build_ordered(crawler, "EXTENSIONS")

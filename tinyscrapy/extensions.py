"""
Extensions: components that only listen to signals (feed exports in
L{tinyscrapy.items.feeds}, close conditions in L{tinyscrapy.closespider}). Enabled by
C{EXTENSIONS} / C{EXTENSIONS_BASE}, like Scrapy's.
"""

import logging

from tinyscrapy.components import build_ordered

logger = logging.getLogger(__name__)


def build_extensions(crawler):
    """Build every enabled extension; each connects its own signals in C{from_crawler}.
    @return: a list of C{(path, extension)}."""
    return build_ordered(crawler, "EXTENSIONS")

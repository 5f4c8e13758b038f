"""
The field processors of C{itemloaders.processors}, at the path older Scrapy spiders import
them from (C{scrapy.loader.processors}, in older Scrapy releases).

This module only re-exports.
"""

from itemloaders.processors import (
    Compose,
    Identity,
    Join,
    MapCompose,
    SelectJmes,
    TakeFirst,
)

__all__ = ["Compose", "Identity", "Join", "MapCompose", "SelectJmes", "TakeFirst"]

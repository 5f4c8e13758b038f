"""
Scrapy's C{scrapy.item}, at the same path: L{Item} and L{Field} (declared items), and
L{register_item_class} for other item classes stored in a persistent frontier.

This module only re-exports.
"""

from tinyscrapy.items.declared import Field, Item, ItemMeta, register_item_class

__all__ = ["Field", "Item", "ItemMeta", "register_item_class"]

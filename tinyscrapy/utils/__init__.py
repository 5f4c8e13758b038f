"""Scrapy's helper modules, at their paths (C{scrapy.utils.*})."""

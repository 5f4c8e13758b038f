"""Scrapy's C{scrapy.utils} paths that spiders and scripts import: faces only."""

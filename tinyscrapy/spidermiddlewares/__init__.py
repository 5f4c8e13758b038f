"""Scrapy's built-in spider middlewares, one module each."""

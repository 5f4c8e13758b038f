"""Scrapy's built-in downloader middlewares, one module each."""

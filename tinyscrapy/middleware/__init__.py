"""Middleware chains and the built-in downloader and spider middlewares."""

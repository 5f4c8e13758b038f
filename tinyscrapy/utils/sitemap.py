"""C{scrapy.utils.sitemap}: L{Sitemap} and L{sitemap_urls_from_robots}
(L{tinyscrapy.spiders.sitemaps}).

This module only re-exports."""

from tinyscrapy.spiders.sitemaps import Sitemap, sitemap_urls_from_robots

__all__ = ["Sitemap", "sitemap_urls_from_robots"]

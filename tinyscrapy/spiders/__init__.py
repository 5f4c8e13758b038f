"""
Spider kinds, at Scrapy's path C{scrapy.spiders}: the base L{Spider}
(L{tinyscrapy.spider}, part of the core), L{CrawlSpider} and L{Rule}
(L{tinyscrapy.spiders.crawlspider}), L{SitemapSpider}
(L{tinyscrapy.spiders.sitemapspider}). The C{crawl} command's own spider is
L{tinyscrapy.spiders.sitespider}.

This module only re-exports.
"""

from tinyscrapy.spider import Spider
from tinyscrapy.spiders.crawlspider import CrawlSpider, Rule
from tinyscrapy.spiders.sitemapspider import SitemapSpider

__all__ = ["CrawlSpider", "Rule", "SitemapSpider", "Spider"]

"""
Spider kinds, at Scrapy's path C{scrapy.spiders}: the base L{Spider}
(L{tinyscrapy.spider}, part of the core), L{CrawlSpider} and L{Rule}
(L{tinyscrapy.spiders.crawlspider}), L{SitemapSpider}
(L{tinyscrapy.spiders.sitemapspider}), L{XMLFeedSpider} and L{CSVFeedSpider}
(L{tinyscrapy.spiders.feedspiders}). The C{crawl} command's own spider is
L{tinyscrapy.spiders.sitespider}.

Scrapy's submodule paths C{scrapy.spiders.crawl}, C{scrapy.spiders.sitemap} and
C{scrapy.spiders.feed} are the same modules under a second name (entries in
C{sys.modules}), so
C{from tinyscrapy.spiders.sitemap import SitemapSpider} imports too.

This module only re-exports.
"""

import sys

from tinyscrapy.spider import Spider
from tinyscrapy.spiders import crawlspider, feedspiders, sitemapspider
from tinyscrapy.spiders.crawlspider import CrawlSpider, Rule
from tinyscrapy.spiders.feedspiders import CSVFeedSpider, XMLFeedSpider
from tinyscrapy.spiders.sitemapspider import SitemapSpider

sys.modules[__name__ + ".crawl"] = crawlspider
sys.modules[__name__ + ".sitemap"] = sitemapspider
sys.modules[__name__ + ".feed"] = feedspiders

__all__ = ["CSVFeedSpider", "CrawlSpider", "Rule", "SitemapSpider", "Spider", "XMLFeedSpider"]

"""
L{get_crawler}, Scrapy's helper for a component's own tests (C{scrapy.utils.test}): a
L{Crawler} with the given settings, not crawling, whose settings, stats and signals a
middleware's C{from_crawler} can use.
"""

from tinyscrapy.settings import Settings
from tinyscrapy.spider import Spider


class DefaultSpider(Spider):
    """The spider of a crawler made without one (Scrapy's C{DefaultSpider})."""

    name = "default"


def get_crawler(spidercls=None, settings_dict=None, prevent_warnings=True):
    """
    A crawler for tests, as Scrapy's C{get_crawler}.

    @param spidercls: its spider class (L{DefaultSpider} by default); no spider is made.
    @param settings_dict: settings, at the project's priority.
    @param prevent_warnings: kept for Scrapy's signature (no warnings to prevent here).
    @return: a L{tinyscrapy.crawler.Crawler}.
    """
    from tinyscrapy.crawler import Crawler
    settings = Settings()
    settings.update(settings_dict or {}, "project")
    return Crawler(spidercls or DefaultSpider, settings)

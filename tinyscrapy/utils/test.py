"""
Scrapy's helpers for a component's own tests: L{get_crawler} (C{scrapy.utils.test}), a
L{Crawler} with the given settings, not crawling, whose settings, stats and signals a
middleware's C{from_crawler} can use; L{get_reactor_settings}; L{set_environ}
(C{scrapy.utils.misc}); L{DefaultSpider} (C{scrapy.utils.spider}).
"""

from tinyscrapy.settings import Settings
from tinyscrapy.utils.reactor import _installed, reactor_path
from tinyscrapy.utils.spider import DefaultSpider


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


def get_reactor_settings():
    """The settings that name the installed reactor (none when none is installed), for a
    crawler made in a test process that already runs one."""
    reactor = _installed()
    return {} if reactor is None else {"TWISTED_REACTOR": reactor_path(reactor)}

"""
Scrapy's C{scrapy.utils.test}, helpers for a component's own tests: L{get_crawler}, a
L{Crawler} with the given settings, not crawling, whose settings, stats and signals a
middleware's C{from_crawler} can use; L{get_reactor_settings}; L{get_testenv} and
L{get_pythonpath}, the environment of a child process that must import this
installation; L{get_from_asyncio_queue}.
"""

import os

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


def get_pythonpath():
    """A C{PYTHONPATH} whose first entry is the folder this installation of tinyscrapy is
    in, then the current one."""
    import tinyscrapy
    folder = os.path.dirname(os.path.dirname(os.path.abspath(tinyscrapy.__file__)))
    return folder + os.pathsep + os.environ.get("PYTHONPATH", "")


def get_testenv():
    """
    The environment for a child process that must import this installation
    (L{get_pythonpath}); while C{scrapy} is served by tinyscrapy here, with
    C{TINYSCRAPY_AS_SCRAPY=1}, so that a child C{python -m tinyscrapy} serves it too.
    """
    from tinyscrapy.scrapyfinder import ENV_SWITCH, is_installed
    env = dict(os.environ)
    env["PYTHONPATH"] = get_pythonpath()
    if is_installed():
        env[ENV_SWITCH] = "1"
    return env


def get_from_asyncio_queue(value):
    """An awaitable that gives C{value} back through an asyncio queue (for tests of code
    awaiting asyncio objects)."""
    import asyncio
    queue = asyncio.Queue()
    getter = queue.get()
    queue.put_nowait(value)
    return getter

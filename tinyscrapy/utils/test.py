"""
Scrapy's C{scrapy.utils.test}, at the same path: L{get_crawler} and
L{get_reactor_settings}, for the tests of a project's own middlewares and pipelines
(defined in L{tinyscrapy.runner.testing}).

This module only re-exports.
"""

from tinyscrapy.runner.testing import get_crawler, get_reactor_settings

__all__ = ["get_crawler", "get_reactor_settings"]

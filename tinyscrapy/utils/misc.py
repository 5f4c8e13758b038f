"""
Scrapy's C{scrapy.utils.misc}, at the same path: C{build_from_crawler} and C{load_object}
(defined in L{tinyscrapy.components}; C{load_object} raises a C{UsageError} for a path that
does not import), and C{set_environ} (L{tinyscrapy.runner.testing}).

This module only re-exports.
"""

from tinyscrapy.components import build_from_crawler, load_object
from tinyscrapy.runner.testing import set_environ

__all__ = ["build_from_crawler", "load_object", "set_environ"]

"""
Scrapy's C{scrapy.interfaces}: L{ISpiderLoader}, the zope interface of a spider loader
(deprecated, as in Scrapy: importing this module warns). tinyscrapy's spider loaders are
duck-typed (L{tinyscrapy.spiderloader.SpiderLoader}: C{from_settings}, C{load},
C{list}, C{find_by_request}).
"""

import warnings

from zope.interface import Interface

from tinyscrapy.exceptions import ScrapyDeprecationWarning

warnings.warn("The scrapy.interfaces module is deprecated.", ScrapyDeprecationWarning,
              stacklevel=2)


class ISpiderLoader(Interface):
    """What a spider loader provides."""

    def from_settings(settings):  # noqa: N805 (a zope interface has no self)
        """The loader for C{settings}."""

    def load(spider_name):  # noqa: N805
        """The spider class named C{spider_name}; C{KeyError} when there is none."""

    def list():  # noqa: N805
        """The names of the project's spiders."""

    def find_by_request(request):  # noqa: N805
        """The names of the spiders that can handle C{request}."""

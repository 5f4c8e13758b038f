"""
Scrapy's C{scrapy.utils.spider}: spiders as a project's helpers see them.

    - L{iterate_spider_output}: a callback's output as something to iterate over;
    - L{iter_spider_classes}: the spider classes a module defines (those with a name);
    - L{spidercls_for_request}: the one spider whose domains cover a request;
    - L{DefaultSpider}: the spider of a crawler made without one.
"""

import inspect
import logging

from tinyscrapy.spiders import Spider
from tinyscrapy.utils.misc import arg_to_iter

logger = logging.getLogger(__name__)


def iterate_spider_output(result):
    """
    A callback's output as something to iterate over: an asynchronous generator as it
    is; a coroutine as a Deferred that fires with what it returns, made iterable; None as
    nothing; one request or item as a list of it; an iterable as it is.
    """
    if inspect.isasyncgen(result):
        return result
    if inspect.iscoroutine(result):
        from tinyscrapy.utils.defer import deferred_from_coro
        d = deferred_from_coro(result)
        d.addCallback(iterate_spider_output)
        return d
    return arg_to_iter(result)


def iter_spider_classes(module):
    """The spider classes C{module} defines itself (not those it imports), each with a
    C{name}."""
    for obj in vars(module).values():
        if inspect.isclass(obj) and issubclass(obj, Spider) \
                and obj.__module__ == module.__name__ and getattr(obj, "name", None):
            yield obj


def spidercls_for_request(spider_loader, request, default_spidercls=None, log_none=False,
                          log_multiple=False):
    """
    The spider class for C{request}: the one whose C{allowed_domains} cover its host
    (C{spider_loader.find_by_request}), else C{default_spidercls}, with an error logged
    when asked (C{log_none}: none covers it; C{log_multiple}: several do).
    """
    names = spider_loader.find_by_request(request)
    if len(names) == 1:
        return spider_loader.load(names[0])
    if len(names) > 1 and log_multiple:
        logger.error("More than one spider can handle: %(request)s - %(snames)s",
                     {"request": request, "snames": ", ".join(names)})
    if not names and log_none:
        logger.error("Unable to find spider that handles: %(request)s", {"request": request})
    return default_spidercls


class DefaultSpider(Spider):
    """The spider of a crawler made without one (Scrapy's C{DefaultSpider})."""

    name = "default"

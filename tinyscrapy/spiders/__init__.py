"""
L{Spider}: the user's code. A spider says where to start and what to do with each page.

A callback may return None, an item (a dict, a dataclass or an attrs instance), a
L{Request}, an iterable or generator of both, a Deferred firing with any of these, or be
C{async def} (a coroutine, or an async generator).

The start: C{start_requests()} (TinyScrapy's), or C{async def start()} (Scrapy's since 2.13),
which wins when a spider defines both (L{tinyscrapy.core.startrequests}).
"""

import importlib
import logging

from tinyscrapy.exceptions import SpiderWithoutName
from tinyscrapy.http.request import Request, unchecked_request
from tinyscrapy.utils.trackref import object_ref


class Spider(object_ref):
    """
    Subclass this. Class attributes are the spider's configuration.

    @cvar name: the spider's name, used in logs, stats and C{%(name)s} feed paths; a spider
        without one is refused (C{ValueError}, as in Scrapy).
    @cvar start_urls: fetched first when neither L{start_requests} nor L{start} is
        overridden (an empty list on the instance when the class sets none).
    @cvar allowed_domains: hosts (and their subdomains) the crawl may visit; empty: any.
    @cvar custom_settings: settings for this spider, above the project's, below C{-s}.
    @cvar handle_httpstatus_list: statuses outside 200-299 that still go to the callback.
    """

    name = None
    start_urls = ()
    allowed_domains = ()
    custom_settings = {}
    handle_httpstatus_list = ()

    def __init__(self, name=None, **kwargs):
        """Spider arguments (C{-a NAME=VALUE}) become attributes."""
        if name is not None:
            self.name = name
        elif not self.name:
            raise SpiderWithoutName(f"{type(self).__name__} must have a name")
        for key, value in kwargs.items():
            setattr(self, key, value)
        if isinstance(self.start_urls, str):
            self.start_urls = [self.start_urls]
        elif self.start_urls is Spider.start_urls:
            self.start_urls = []
        self.crawler = None

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        """Make the spider for C{crawler}; C{self.crawler} and C{self.settings} are set."""
        spider = cls(*args, **kwargs)
        spider.crawler = crawler
        return spider

    @classmethod
    def update_settings(cls, settings):
        """Put C{custom_settings} into C{settings} (at the C{spider} priority); override to
        change the crawl's settings in code, as in Scrapy."""
        settings.update(cls.custom_settings or {}, "spider")

    @property
    def settings(self):
        return self.crawler.settings if self.crawler is not None else None

    @property
    def logger(self):
        """A logger named after the spider (as Scrapy names it), whose records carry
        C{spider} in their extra."""
        from tinyscrapy.utils.log import SpiderLoggerAdapter
        return SpiderLoggerAdapter(logging.getLogger(self.name), {"spider": self})

    def log(self, message, level=logging.DEBUG, **kwargs):
        """Log C{message} at C{level} with L{logger} (Scrapy's older helper)."""
        self.logger.log(level, message, **kwargs)

    def start_requests(self):
        """The first requests: one per C{start_urls} entry, made lazily. A URL Request
        refuses (no scheme, say) still becomes a request, which the scope drops and counts
        as C{InvalidUrl}: one bad start URL does not end the others (docs/differences.md)."""
        for url in self.start_urls:
            try:
                yield Request(url, dont_filter=True)
            except ValueError:
                yield unchecked_request(url, dont_filter=True)

    async def start(self):
        """
        Scrapy's start (2.13 and later): an async generator of the first requests and
        items, which may C{await}. Override it, or L{start_requests}; this default is never
        driven (the engine drives L{start_requests} instead, whose default reads
        C{start_urls}).
        """
        for request in self.start_requests():
            yield request

    def parse(self, response):
        """The default callback."""
        raise NotImplementedError(f"{type(self).__name__}.parse is not defined")

    def closed(self, reason):
        """Called once when the crawl ends, with the finish reason."""

    @classmethod
    def handles_request(cls, request):
        """
        Whether C{request} is on this spider's site, as Scrapy's spider loader asks
        (C{find_by_request}, the C{parse} and C{fetch} commands): its host is one of
        C{allowed_domains} or below one, on any port, as the crawl's scope reads them (an
        entry C{host:port} matches that port only). A spider without C{allowed_domains}
        handles nothing.
        """
        from tinyscrapy.utils.url import url_host, url_is_from_any_domain
        domains = getattr(cls, "allowed_domains", None)
        if not domains or isinstance(domains, property):
            return False
        host = url_host(request.url)
        return (url_is_from_any_domain(request.url, domains)  # with its port
                or any(host == d or host.endswith("." + d)
                       for d in (d.lower() for d in domains)))

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"


# Scrapy's other spider kinds, imported on first use (the kernel needs only Spider)
_KINDS = {
    "CrawlSpider": "tinyscrapy.spiders.crawl",
    "Rule": "tinyscrapy.spiders.crawl",
    "SitemapSpider": "tinyscrapy.spiders.sitemap",
    "XMLFeedSpider": "tinyscrapy.spiders.feed",
    "CSVFeedSpider": "tinyscrapy.spiders.feed",
}

__all__ = ["CSVFeedSpider", "CrawlSpider", "Rule", "SitemapSpider", "Spider", "XMLFeedSpider"]


def __getattr__(name):
    """Scrapy's spider kinds (C{CrawlSpider}, C{SitemapSpider}, ...), imported on first use."""
    where = _KINDS.get(name)
    if where is None:
        raise AttributeError(f"module 'tinyscrapy.spiders' has no attribute {name!r}")
    return getattr(importlib.import_module(where), name)

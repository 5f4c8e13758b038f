"""
L{LogCount}: the number of log records of each level, in the stats as C{log_count/<LEVEL>},
as Scrapy's C{LogCount} extension: every record at or above C{LOG_LEVEL} from
C{spider_opened} to C{spider_closed} is counted (its handler is
L{tinyscrapy.utils.log.LogCounterHandler}).
"""

import logging

from tinyscrapy.utils.log import LogCounterHandler


class LogCount:
    """
    Scrapy's C{LogCount} extension (in C{EXTENSIONS_BASE}): from C{spider_opened} to
    C{spider_closed}, a L{LogCounterHandler} on the root logger counts every record at or
    above the crawl's C{LOG_LEVEL}, whatever logger it comes from (a user's, Twisted's,
    tinyscrapy's). With several crawls in one process each counts every record, as in
    Scrapy.
    """

    def __init__(self, crawler):
        self.crawler = crawler
        self.handler = None

    @classmethod
    def from_crawler(cls, crawler):
        from tinyscrapy import signals
        extension = cls(crawler)
        crawler.signals.connect(extension.spider_opened, signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signals.spider_closed)
        return extension

    def spider_opened(self, **_):
        """Install the handler on the root logger."""
        self.handler = LogCounterHandler(self.crawler,
                                         self.crawler.settings.get("LOG_LEVEL") or "DEBUG")
        logging.getLogger().addHandler(self.handler)

    def spider_closed(self, **_):
        """Remove it: a closed crawl counts nothing more."""
        if self.handler is not None:
            logging.getLogger().removeHandler(self.handler)
            self.handler = None

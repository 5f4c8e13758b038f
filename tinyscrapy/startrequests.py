"""
L{StartRequests}: the spider's start requests, pulled one at a time.

The engine pulls the next start request only when the scheduler has nothing ready, so a
spider that yields a million start URLs never holds them all in memory, and the links
found on the first pages are crawled while start requests are still coming.
"""

import logging

logger = logging.getLogger(__name__)


class StartRequests:
    """
    A lazy iterator of start requests that survives a spider whose generator raises.

    @ivar exhausted: True once the iterator is done (or broke).
    """

    def __init__(self, start_requests, spider, stats):
        self._iterator = iter(start_requests)
        self.spider = spider
        self.stats = stats
        self.exhausted = False

    def feed(self, crawl):
        """Pull one start request and hand it to C{crawl} (the engine's admission)."""
        try:
            request = next(self._iterator)
        except StopIteration:
            self.exhausted = True
            return
        except Exception:
            logger.exception("start_requests of %s raised; no more start requests", self.spider)
            self.stats.inc_value("start_requests/exception")
            self.exhausted = True
            return
        crawl(request)

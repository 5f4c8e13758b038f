"""
L{ItemPipelines}: each scraped item passes through C{ITEM_PIPELINES} in order.

A pipeline's C{process_item(item, spider)} returns the item (maybe changed), or a Deferred
firing with it, or raises L{DropItem}. C{open_spider(spider)} and C{close_spider(spider)}
may return Deferreds too. After the last pipeline the item is "scraped": counted, and
C{item_scraped} is sent (the feed exporters listen to it).
"""

import logging

from twisted.internet.defer import Deferred, DeferredList, maybeDeferred

from tinyscrapy import signals
from tinyscrapy.errors import DropItem

logger = logging.getLogger(__name__)


class ItemPipelines:
    """The enabled pipelines of one crawl."""

    def __init__(self, crawler, pipelines):
        self.crawler = crawler
        self.stats = crawler.stats
        self.signals = crawler.signals
        self.pipelines = list(pipelines)
        self._process = [(path, p.process_item) for path, p in self.pipelines
                         if hasattr(p, "process_item")]

    def open_spider(self, spider):
        return self._call_all("open_spider", spider)

    def close_spider(self, spider):
        return self._call_all("close_spider", spider)

    def _call_all(self, name, spider):
        calls = [maybeDeferred(getattr(p, name), spider) for _, p in self.pipelines
                 if hasattr(p, name)]
        return DeferredList(calls, fireOnOneErrback=True, consumeErrors=True)

    def process_item(self, item, response, spider, start=0):
        """
        Run C{item} through the pipelines, from number C{start} on.

        @return: None when it finished at once (the common, synchronous case), else a
            Deferred that fires with None when it has (never errbacks).
        """
        for index in range(start, len(self._process)):
            path, process = self._process[index]
            try:
                result = process(item, spider)
            except Exception as e:
                self._failed(e, item, response, spider, path)
                return None
            if isinstance(result, Deferred):
                result.addCallbacks(self._cb_continue, self._eb_pipeline_failed,
                                    callbackArgs=(index + 1, response, spider),
                                    errbackArgs=(item, index, response, spider))
                return result if not result.called else None
            item = result
        self._scraped(item, response, spider)
        return None

    def _cb_continue(self, item, start, response, spider):
        """A pipeline's Deferred fired: go on with the next pipelines."""
        return self.process_item(item, response, spider, start)

    def _eb_pipeline_failed(self, failure, item, index, response, spider):
        self._failed(failure.value, item, response, spider, self._process[index][0])
        return None

    def _scraped(self, item, response, spider):
        self.stats.inc_value("item_scraped_count")
        self.signals.send(signals.item_scraped, item=item, response=response, spider=spider)

    def _failed(self, exception, item, response, spider, path):
        url = response.url if response is not None else None
        if isinstance(exception, DropItem):
            self.stats.inc_value("item_dropped_count")
            self.stats.inc_value(f"item_dropped_reasons_count/{type(exception).__name__}")
            logger.info("Dropped item from %s: %s", url, exception)
            self.signals.send(signals.item_dropped, item=item, response=response,
                              exception=exception, spider=spider)
        else:
            self.stats.inc_value(f"pipeline_exceptions/{type(exception).__name__}")
            logger.error("Error in pipeline %s processing an item from %s", path, url,
                         exc_info=(type(exception), exception, exception.__traceback__))

"""
L{StartRequests}: the spider's start requests, pulled one at a time.

The engine pulls the next start request only when the scheduler has nothing ready, so a
spider that yields a million start URLs never holds them all in memory, and the links
found on the first pages are crawled while start requests are still coming.

Where they come from (L{start_of}), Scrapy's rule: a spider that overrides
C{async def start()} (Scrapy 2.13 and later) has it driven; otherwise its
C{start_requests()} is (TinyScrapy's way, whose default reads C{start_urls}). A spider that
defines both runs C{start()} only, as Scrapy 2.19 does (it no longer calls
C{start_requests()} at all).

Either may yield items as well as requests: items go to the item pipelines (with no
response), and the next start request is pulled once the item has left them.

An C{async def start()} may C{await}: while it does, the engine has nothing to pull
(L{StartRequests.ready} is False), and the pull's Deferred wakes it when the generator
yields again. It is driven through L{tinyscrapy.utils.defer.deferred_from_coro}, so
under the asyncio reactor it may await asyncio code.
"""

import logging

from twisted.internet.defer import Deferred

from tinyscrapy.http.request import Request

logger = logging.getLogger(__name__)

_EXHAUSTED = object()


def start_of(spider, spidermw):
    """
    The spider's start: C{start()} if its class overrides it, else C{start_requests()}.
    A synchronous start goes through the spider middlewares' C{process_start_requests};
    an async one, or one that a middleware with only C{process_start} must see, goes
    through their C{process_start(start)} (Scrapy 2.13's hook).

    @return: an iterable or an async iterator of requests and items.
    """
    from tinyscrapy.spiders import Spider
    start = getattr(type(spider), "start", None)
    if start is not None and start is not Spider.start:
        source = spider.start()
    else:
        source = spider.start_requests()
    if source is None:
        return ()
    if not hasattr(source, "__aiter__"):
        source = spidermw.wrap_start_requests(source, spider)
    # Scrapy 2.13's async hook; the nearest the spider (the highest order) wraps first
    hooks = [mw.process_start for _, mw in reversed(spidermw.middlewares)
             if getattr(mw, "process_start", None) is not None
             and (hasattr(source, "__aiter__") or not hasattr(mw, "process_start_requests"))]
    if hooks and not hasattr(source, "__aiter__"):
        source = _as_async(source)
    for hook in hooks:
        source = hook(source)
    return source


async def _as_async(iterable):
    """A synchronous start as an async iterator, for C{process_start} hooks."""
    for each in iterable:
        yield each


class StartRequests:
    """
    A lazy iterator of start requests (an iterable or an async iterator) that survives a
    spider whose generator raises.

    @ivar exhausted: True once the iterator is done (or broke).
    @ivar waiting: True while an async start awaits, or a start item is in a pipeline:
        nothing to pull until it is done.
    """

    def __init__(self, start_requests, engine):
        self._async = hasattr(start_requests, "__aiter__")
        self._iterator = start_requests.__aiter__() if self._async else iter(start_requests)
        self.engine = engine
        self.spider = engine.spider
        self.stats = engine.crawler.stats
        self.exhausted = False
        self.waiting = False
        self._feeding = False

    def ready(self):
        """True when a pull may give something now."""
        return not self.exhausted and not self.waiting

    def feed(self, crawl):
        """Pull one start request and hand it to C{crawl} (the engine's admission)."""
        if self._async:
            self._feed_async(crawl)
            return
        try:
            output = next(self._iterator)
        except StopIteration:
            self.exhausted = True
            return
        except Exception:
            self._broke()
            return
        self._route(output, crawl)

    def _feed_async(self, crawl):
        """Pull from an async iterator: at once when it yields without awaiting, later
        (the engine woken) when it awaits."""
        from tinyscrapy.utils.defer import deferred_from_coro
        self.waiting = True
        self._feeding = True
        d = deferred_from_coro(_anext(self._iterator))
        d.addCallbacks(self._cb_pulled, self._eb_pulled, callbackArgs=(crawl,))
        self._feeding = False

    def _cb_pulled(self, output, crawl):
        """The async start yielded C{output} (or ended)."""
        self.waiting = False
        if output is _EXHAUSTED or self.engine.closing_reason is not None:
            self.exhausted = True  # ended, or the crawl closed while it awaited
        else:
            self._route(output, crawl)
        if not self._feeding:
            self.engine.wake("start")

    def _eb_pulled(self, failure):
        self.waiting = False
        logger.error("start() of %s raised; no more start requests", self.spider,
                     exc_info=(failure.type, failure.value, failure.getTracebackObject()))
        self.stats.inc_value("start_requests/exception")
        self.exhausted = True
        if not self._feeding:
            self.engine.wake("start")

    def _broke(self):
        logger.exception("start_requests of %s raised; no more start requests", self.spider)
        self.stats.inc_value("start_requests/exception")
        self.exhausted = True

    def _route(self, output, crawl):
        """A request to C{crawl}; an item to the pipelines (wait until it left them)."""
        if isinstance(output, Request):
            output.meta.setdefault("is_start_request", True)  # Scrapy's mark, for middlewares
            crawl(output)
            return
        if output is None:
            return
        if isinstance(output, dict) or _is_item(output):
            waiting = self.engine.scraper.pipelines.process_item(output, None, self.spider)
            if isinstance(waiting, Deferred):
                self.waiting = True
                waiting.addBoth(self._cb_item_done)
            return
        self.stats.inc_value("spider_exceptions/BadOutput")
        logger.error("start of %s must yield Request or item, got %r", self.spider,
                     type(output).__name__)

    def _cb_item_done(self, _):
        """A start item left the pipelines: pull the next one."""
        self.waiting = False
        self.engine.wake("start item")


async def _anext(iterator):
    """The next output of an async iterator, or L{_EXHAUSTED}."""
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        return _EXHAUSTED


def _is_item(value):
    from itemadapter import is_item  # as the scraper: imported on first need
    return is_item(value)

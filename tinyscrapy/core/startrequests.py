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
under the asyncio reactor it may await asyncio code. When the crawl closes, a pull still
waiting (and a start item still in a pipeline) is cancelled.

A start that is not what it must be (C{start_requests()} returning no iterable, or a
string; C{start()} not an async generator; a middleware's C{process_start_requests} or
C{process_start} that raises or returns the wrong type) is one error, as a start that
raises is: logged, counted as C{start_requests/exception}, and the crawl goes on without
start requests.
"""

import logging

from twisted.internet.defer import Deferred

from tinyscrapy.http.request import Request
from tinyscrapy.utils.defer import ignore_result

logger = logging.getLogger(__name__)

_EXHAUSTED = object()


def start_of(spider, spidermw):
    """
    The spider's start: C{start()} if its class overrides it, else C{start_requests()}.
    A synchronous start goes through the spider middlewares' C{process_start_requests};
    an async one, or one that a middleware with only C{process_start} must see, goes
    through their C{process_start(start)} (Scrapy 2.13's hook).

    @return: an iterable or an async iterator of requests and items; one that raises at
        once, for a start that could not be made (see the module docstring).
    """
    try:
        return _start_of(spider, spidermw)
    except Exception as e:
        ignore_result(getattr(e, "result", None), "what the start returned",
                      getattr(getattr(spider, "crawler", None), "unwaited", None))
        return _raising(e)


def _start_of(spider, spidermw):
    from tinyscrapy.spiders import Spider
    start = getattr(type(spider), "start", None)
    if start is not None and start is not Spider.start:
        name, source = "start()", spider.start()
    else:
        name, source = "start_requests()", spider.start_requests()
    if source is None:
        return ()
    if not hasattr(source, "__aiter__"):
        _expect_start(f"{type(spider).__name__}.{name}", source)
        source = spidermw.wrap_start_requests(source, spider)
    # Scrapy 2.13's async hook; the nearest the spider (the highest order) wraps first
    hooks = [mw.process_start for mw in reversed(spidermw.middlewares)
             if getattr(mw, "process_start", None) is not None
             and (hasattr(source, "__aiter__") or not hasattr(mw, "process_start_requests"))]
    if hooks and not hasattr(source, "__aiter__"):
        source = _as_async(source)
    for hook in hooks:
        source = hook(source)
        if not hasattr(source, "__aiter__"):
            raise StartOutputError(f"{hook.__qualname__} must return an async iterable, got "
                              f"{type(source).__name__}", source)
    return source


class StartOutputError(TypeError):
    """
    A start that is no iterable of requests and items: C{start_requests()} returned a
    number or a string, C{start()} is no async generator, a middleware's
    C{process_start} returned no async iterable.

    @ivar result: what it returned (a Deferred in it is logged if it fails later).
    """

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


def _expect_start(label, source):
    """@raise TypeError: C{source} is no iterable of requests and items (a string, a
    Deferred or a coroutine is not one, though the first two are iterable)."""
    if not hasattr(source, "__iter__") or isinstance(source, (str, bytes, dict, Request,
                                                              Deferred)):
        kind = "an async generator" if label.endswith("start()") else "an iterable"
        raise StartOutputError(f"{label} must be {kind} of requests and items, got "
                          f"{type(source).__name__}", source)


def _raising(exception):
    """A start that fails as it is first pulled (L{StartRequests} logs it then)."""
    raise exception
    yield  # a generator


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
        self._closed = False
        self._pending = None  # the pull of an async start, or a start item's pipeline wait

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
        d = self._pending = deferred_from_coro(_anext(self._iterator))
        d.addCallbacks(self._cb_pulled, self._eb_pulled, callbackArgs=(crawl,))
        self._feeding = False

    def close(self):
        """The crawl closes: no more pulls; the one waiting, or a start item's pipeline
        wait, is cancelled (quietly: the crawl is over)."""
        self.exhausted = True
        self._closed = True
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.cancel()

    def _cb_pulled(self, output, crawl):
        """The async start yielded C{output} (or ended)."""
        self.waiting = False
        self._pending = None
        if output is _EXHAUSTED or self._closed or self.engine.closing_reason is not None:
            self.exhausted = True  # ended, or the crawl closed while it awaited
        else:
            self._route(output, crawl)
        if not self._feeding:
            self.engine.wake("start")

    def _eb_pulled(self, failure):
        self.waiting = False
        self._pending = None
        if self._closed:
            return
        logger.error("start() of %s raised; no more start requests", self.spider,
                     exc_info=(failure.type, failure.value, failure.getTracebackObject()))
        self.stats.inc_value("start_requests/exception")
        self.stats.inc_value(f"start_requests/exception/{failure.type.__name__}")
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
            waiting = self.engine.scraper.itemproc.process_item(output, None, self.spider)
            if isinstance(waiting, Deferred):
                self.waiting = True
                self._pending = waiting
                waiting.addBoth(self._cb_item_done)
            return
        self.stats.inc_value("spider_exceptions/BadOutput")
        logger.error("start of %s must yield Request or item, got %r", self.spider,
                     type(output).__name__)
        ignore_result(output, f"the {type(output).__name__} the start of {self.spider} "
                              f"yielded", getattr(self.engine.crawler, "unwaited", None))

    def _cb_item_done(self, _):
        """A start item left the pipelines: pull the next one."""
        self.waiting = False
        self._pending = None
        if not self._closed:
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

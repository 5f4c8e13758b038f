"""
L{ItemPipelineManager} (Scrapy's name, at Scrapy's path; the C{ITEM_PROCESSOR} setting
names it): each scraped item passes through C{ITEM_PIPELINES} in order.

A pipeline's C{process_item(item)} returns the item (maybe changed), or a Deferred firing
with it, or is C{async def} (awaited), or raises L{DropItem}. C{open_spider()} and
C{close_spider()} may return Deferreds or be C{async def} too. As in Scrapy, each of them
gets the spider as well when its signature asks for it (C{process_item(self, item,
spider)}, the contract before Scrapy 2.13): that is read once, when the pipelines are
built. After the last pipeline the item is "scraped": counted, and C{item_scraped} is sent
(the feed exporters listen to it); a pipeline that raised anything but L{DropItem} sends
C{item_error}.

Opening and closing: every pipeline's C{open_spider} is called together, as in Scrapy, and
each is waited for; one that fails stops the start (L{StartError}, one line). Every
pipeline's C{close_spider} is called together too, and each has finished or failed
(logged, naming the pipeline) before the close goes on to the feeds: a failure in one
never hurries another.

Back-pressure: L{ItemPipelineManager.process_item} returns a Deferred while the item waits in a
pipeline; the scraper stops iterating the callback's output until it fires, and the engine
keeps the page's request in flight until then. So at most one item per page in flight
(C{CONCURRENT_REQUESTS} pages) waits in the pipelines, and a slow pipeline slows the crawl
down instead of piling items up in memory.
"""

import inspect
import logging
from dataclasses import dataclass

from twisted.internet.defer import CancelledError, Deferred, DeferredList, maybeDeferred
from twisted.python.failure import Failure

from tinyscrapy import signals
from tinyscrapy.exceptions import DropItem, StartError
from tinyscrapy.logformatter import LogFormatter, log_line
from tinyscrapy.middleware import MiddlewareManager, takes_spider
from tinyscrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future

logger = logging.getLogger(__name__)


class PipelineOutputError(TypeError):
    """A pipeline's C{process_item} returned something that is not an item."""


@dataclass(frozen=True)
class PipelineStatistics:
    """
    The pipelines' state.

    @ivar waiting: items inside a pipeline now (waiting for a Deferred).
    @ivar peak_waiting: the most items ever waiting at once.
    """

    waiting: int
    peak_waiting: int
    scraped: int
    dropped: int
    failed: int


class ItemPipelineManager(MiddlewareManager):
    """
    The enabled pipelines of one crawl (the scraper's C{itemproc}).

    @ivar middlewares: the instances, lowest order first; C{paths} what enabled each.
    """

    component_name = "item pipeline"
    setting = "ITEM_PIPELINES"

    def __init__(self, *middlewares, crawler=None, paths=None):
        if crawler is None:
            raise TypeError("ItemPipelineManager needs the crawler (crawler=...): it counts "
                            "and signals each item through it")
        super().__init__(*middlewares, crawler=crawler, paths=paths)
        self.stats = crawler.stats
        self.signals = crawler.signals
        # (path, bound process_item, whether it takes the spider): decided once, here
        self._process = [(path, p.process_item, takes_spider(p.process_item, 1))
                         for path, p in self.components if hasattr(p, "process_item")]
        self._waiting = 0
        self._peak = 0
        self._n_scraped = self._n_dropped = self._n_failed = 0
        self.logformatter = crawler.logformatter
        # asked once, not per item (a LOG_FORMATTER of the project's own is always asked)
        self._log_items = logger.isEnabledFor(logging.DEBUG) \
            or type(self.logformatter) is not LogFormatter

    def _add_middleware(self, mw):
        if hasattr(mw, "open_spider"):
            self.methods["open_spider"].append(mw.open_spider)
        if hasattr(mw, "close_spider"):
            self.methods["close_spider"].appendleft(mw.close_spider)
        if hasattr(mw, "process_item"):
            self.methods["process_item"].append(mw.process_item)

    def open_spider(self, spider):
        """
        Call every pipeline's C{open_spider} together, and wait for each.

        @return: a Deferred fired with None once they all have finished; it errbacks with
            L{StartError} naming the first pipeline that failed (any other failure is
            logged), or with C{CancelledError} when it was cancelled (which cancels the
            calls still pending).
        """
        d = self._call_all("open_spider", spider)
        d.addCallback(self._cb_opened)
        return d

    def close_spider(self, spider):
        """
        Call every pipeline's C{close_spider} together, and wait for each: one that fails
        is logged (naming it), and the others still finish.

        @return: a Deferred fired with None once each has finished or failed; it never
            errbacks. Cancelling it (the close's grace period is over) cancels the calls
            still pending, each logged as not finished.
        """
        d = self._call_all("close_spider", spider)
        d.addCallback(self._cb_closed)
        return d

    async def open_spider_async(self):
        """L{open_spider} for the crawl's spider, as a coroutine (Scrapy 2.14's form)."""
        await maybe_deferred_to_future(self.open_spider(self.crawler.spider))

    async def close_spider_async(self):
        """L{close_spider} for the crawl's spider, as a coroutine (Scrapy 2.14's form)."""
        await maybe_deferred_to_future(self.close_spider(self.crawler.spider))

    def _call_all(self, name, spider):
        """@return: a Deferred fired with C{(label, failure or None)} of every call."""
        calls, labels = [], []
        for path, pipeline in self.components:
            method = getattr(pipeline, name, None)
            if method is not None:
                args = (spider,) if takes_spider(method, 0) else ()
                calls.append(maybeDeferred(_run_hook, method, args))
                labels.append(f"{path}.{name}")
        d = DeferredList(calls, consumeErrors=True)
        d.addCallback(_labelled, labels)
        return d

    def _cb_opened(self, outcomes):
        failed = [(label, failure) for label, failure in outcomes if failure is not None]
        if failed and all(failure.check(CancelledError) for _, failure in failed):
            raise CancelledError()
        for label, failure in failed[1:]:
            logger.error("%s raised %s", label, _one_line(failure))
        if failed:
            label, failure = failed[0]
            logger.debug("%s raised", label, exc_info=(failure.type, failure.value,
                                                      failure.getTracebackObject()))
            raise StartError(f"{label} raised {_one_line(failure)}") from failure.value

    def _cb_closed(self, outcomes):
        for label, failure in outcomes:
            if failure is None:
                continue
            if failure.check(CancelledError):
                logger.warning("%s did not finish in time (CLOSE_GRACE_PERIOD): cancelled",
                               label)
            else:
                logger.error("Error in %s", label, exc_info=(
                    failure.type, failure.value, failure.getTracebackObject()))

    def process_item(self, item, response, spider, start=0):
        """
        Run C{item} through the pipelines, from number C{start} on.

        @return: None when it finished at once (the common, synchronous case), else a
            Deferred that fires with None when it has (never errbacks).
        """
        for index in range(start, len(self._process)):
            path, process, with_spider = self._process[index]
            try:
                result = process(item, spider) if with_spider else process(item)
            except Exception as e:
                self._failed(e, item, response, spider, path)
                return None
            if isinstance(result, Deferred):
                return self._wait(result, item, index, response, spider)
            if inspect.isawaitable(result):  # async def process_item (an asyncio Task
                # under the asyncio reactor, so that it may await asyncio code)
                return self._wait(deferred_from_coro(_awaited(result)), item, index,
                                  response, spider)
            if not _is_item(result):
                self._failed(_bad_output(path, result), item, response, spider, path)
                return None
            item = result
        return self._scraped(item, response, spider)

    def _wait(self, result, item, index, response, spider):
        """
        Pipeline number C{index} answered with a Deferred: go on when it fires.

        @return: None if everything after it already finished, else a Deferred.
        """
        self._waiting += 1
        self._peak = max(self._peak, self._waiting)
        result.addCallbacks(self._cb_continue, self._eb_pipeline_failed,
                            callbackArgs=(item, index, response, spider),
                            errbackArgs=(item, index, response, spider))
        # A Deferred that already fired has run the pipelines after it, unless one of
        # them returned a Deferred that has not fired yet: ask the chain, not .called.
        finished = []
        result.addBoth(_note_finished, finished)
        return None if finished else result

    def _cb_continue(self, output, item, index, response, spider):
        """A pipeline's Deferred fired with C{output}: go on with the next pipelines."""
        self._waiting -= 1
        path = self._process[index][0]
        if not _is_item(output):
            self._failed(_bad_output(path, output), item, response, spider, path)
            return None
        return self.process_item(output, response, spider, index + 1)

    def _eb_pipeline_failed(self, failure, item, index, response, spider):
        self._waiting -= 1
        path = self._process[index][0]
        if failure.check(CancelledError):  # the close gave up on the item's page
            logger.info("Item from %s cancelled in pipeline %s (the crawl closed)",
                        response.url if response is not None else None, path)
            return None
        self._failed(failure.value, item, response, spider, path)
        return None

    def _scraped(self, item, response, spider):
        """Count and send C{item_scraped}. @return: None, or a Deferred when a receiver
        answered with one (it is waited for, as in Scrapy: back-pressure again)."""
        self._n_scraped += 1
        self.stats.inc_value("item_scraped_count")
        if self._log_items:  # Scrapy's line: the page, then the item on the next line
            log_line(logger, self.logformatter.scraped(item, response, spider))
        return self.signals.send_waiting(signals.item_scraped, item=item, response=response,
                                         spider=spider)

    def _failed(self, exception, item, response, spider, path):
        if isinstance(exception, DropItem):
            self._n_dropped += 1
            self.stats.inc_value("item_dropped_count")
            self.stats.inc_value(f"item_dropped_reasons_count/{type(exception).__name__}")
            log_line(logger, self.logformatter.dropped(item, exception, response, spider))
            self.signals.send(signals.item_dropped, item=item, response=response,
                              exception=exception, spider=spider)
        else:
            self._n_failed += 1
            self.stats.inc_value(f"pipeline_exceptions/{type(exception).__name__}")
            log_line(logger, self.logformatter.item_error(item, exception, response, spider),
                     exc_info=(type(exception), exception, exception.__traceback__))
            if self.signals.listened(signals.item_error):
                self.signals.send(signals.item_error, item=item, response=response,
                                  spider=spider, failure=Failure(exception))

    def statistics(self):
        """@return: a L{PipelineStatistics} of now."""
        return PipelineStatistics(waiting=self._waiting, peak_waiting=self._peak,
                                  scraped=self._n_scraped, dropped=self._n_dropped,
                                  failed=self._n_failed)


def _is_item(value):
    if isinstance(value, dict):
        return True
    from itemadapter import is_item  # imported on first need (see the scraper)
    return is_item(value)


def _bad_output(path, value):
    return PipelineOutputError(f"{path}.process_item must return an item or raise DropItem, "
                               f"got {type(value).__name__}")


def _run_hook(method, args):
    """Call C{open_spider} or C{close_spider}: a coroutine runs as the scraper runs
    callbacks (an asyncio Task under the asyncio reactor)."""
    result = method(*args)
    if inspect.iscoroutine(result):
        return deferred_from_coro(result)
    return result


def _labelled(results, labels):
    return [(label, None if ok else value)
            for label, (ok, value) in zip(labels, results, strict=True)]


def _one_line(failure):
    return f"{failure.type.__name__}: {failure.value}"


async def _awaited(awaitable):
    """A coroutine for any awaitable, so that L{deferred_from_coro} can drive it."""
    return await awaitable


def _note_finished(result, finished):
    finished.append(True)
    return result

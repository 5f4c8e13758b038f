"""
L{SpiderMiddlewareManager}: the spider middlewares around every callback, with Scrapy's
contracts::

    process_spider_input(response, spider)
                                          first to last, before the callback; None goes
                                          on, an exception goes to the request's errback
                                          (without one, to process_spider_exception)
    process_spider_output(response, result, spider)
                                          last to first (nearest the spider first);
                                          returns an iterable, usually a generator
    process_spider_exception(response, exception, spider)
                                          last to first; None goes on, an iterable
                                          replaces the output
    process_start_requests(start_requests, spider)      last to first; an iterable
    process_start(start)                  last to first; an async iterable (Scrapy 2.13)

"First" is the lowest number in C{SPIDER_MIDDLEWARES}: the middleware nearest the engine.
C{process_spider_output} may return a Deferred or be C{async def} (an async generator:
its output is gathered before it is routed). A hook that returns the wrong type raises
L{tinyscrapy.middleware.MiddlewareError} naming the middleware and the hook. The C{spider}
argument is given only to a hook whose signature asks for it (Scrapy 2.13's contract),
but always to C{process_start_requests}, as in Scrapy.
"""

import inspect

from twisted.internet.defer import Deferred, ensureDeferred

from tinyscrapy.middleware import (
    MiddlewareError,
    MiddlewareManager,
    _add_hook,
    _call,
    _expect_iterable,
    _gather,
)
from tinyscrapy.utils.defer import deferred_from_coro


class SpiderMiddlewareManager(MiddlewareManager):
    """
    The spider middlewares, in the order of C{SPIDER_MIDDLEWARES} (the scraper's
    C{spidermw}).

    @ivar middlewares: the instances, lowest order first; C{paths} what enabled each.
    """

    component_name = "spider middleware"
    setting = "SPIDER_MIDDLEWARES"

    def __init__(self, *middlewares, crawler=None, paths=None):
        # (label, bound hook, whether it takes the spider), in calling order, each read
        # once, as _add_middleware adds it
        self._input_hooks, self._output_hooks, self._exception_hooks = [], [], []
        self._start_hooks = []
        super().__init__(*middlewares, crawler=crawler, paths=paths)

    def _add_middleware(self, mw):
        path = self.path_of(mw)
        for name, n_args, hooks, first in (
                ("process_spider_input", 1, self._input_hooks, False),
                ("process_start", 0, [], True),  # wrapped by core.startrequests
                ("process_start_requests", 1, self._start_hooks, True),
                ("process_spider_output", 2, self._output_hooks, True),
                ("process_spider_exception", 2, self._exception_hooks, True)):
            method = _add_hook(hooks, path, mw, name, n_args, first)
            if method is not None:
                (self.methods[name].appendleft if first else self.methods[name].append)(method)

    @property
    def has_input_hooks(self):
        return bool(self._input_hooks)

    def process_input(self, response, spider):
        """
        Offer a downloaded response to each middleware's C{process_spider_input}, first to
        last, before the callback sees it (Scrapy's contract: it returns None or raises).

        @raise Exception: what a hook raised (the scraper gives it to the request's errback,
            or to the C{process_spider_exception} hooks).
        @raise MiddlewareError: a hook returned something other than None.
        """
        for label, hook, with_spider in self._input_hooks:
            result = hook(response, spider) if with_spider else hook(response)
            if result is not None:
                raise MiddlewareError(f"{label} must return None or raise an exception, got "
                                      f"{type(result).__name__}")

    def wrap_output(self, response, result, spider):
        """
        Wrap a callback's output iterable: each middleware wraps the previous one, the one
        nearest the spider (highest order) first. Nothing runs until it is iterated.

        @return: the wrapped iterable, or a Deferred firing with it when a hook returned a
            Deferred or a coroutine (it errbacks with what the hook raised).
        @raise MiddlewareError: a hook returned something that is not an iterable.
        """
        for index, (label, hook, with_spider) in enumerate(self._output_hooks):
            result = hook(response, result, spider) if with_spider else hook(response, result)
            if isinstance(result, Deferred) or inspect.isawaitable(result) \
                    or inspect.isasyncgen(result):
                return ensureDeferred(self._wrap_rest(index, label, result, response, spider))
            _expect_iterable(label, result)
        return result

    async def _wrap_rest(self, index, label, result, response, spider):
        """Wait for the hook number C{index}, then go on with the hooks after it."""
        if inspect.isasyncgen(result):
            result = await deferred_from_coro(_gather(result))
        else:
            result = await (deferred_from_coro(result) if inspect.iscoroutine(result)
                            else result)
        _expect_iterable(label, result)
        for label, hook, with_spider in self._output_hooks[index + 1:]:
            result = await _call(hook, with_spider, spider, response, result)
            if inspect.isasyncgen(result):
                result = await deferred_from_coro(_gather(result))
            _expect_iterable(label, result)
        return result

    def handle_exception(self, response, exception, spider):
        """
        Offer a callback's exception to the middlewares. A hook is synchronous, as in
        Scrapy: a Deferred or a coroutine it returns is its wrong result.

        @return: an iterable that replaces the output, or None when nobody handled it.
        @raise MiddlewareError: a hook returned something that is neither None nor an
            iterable.
        @raise Exception: what a hook raised (the hooks after it are not asked).
        """
        for label, hook, with_spider in self._exception_hooks:
            result = hook(response, exception, spider) if with_spider \
                else hook(response, exception)
            if result is not None:
                _expect_iterable(label, result)
                return result
        return None

    def wrap_start_requests(self, start_requests, spider):
        for label, hook, _ in self._start_hooks:
            start_requests = hook(start_requests, spider)
            _expect_iterable(label, start_requests)
        return start_requests

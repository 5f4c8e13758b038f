"""
The two middleware chains, with Scrapy's contracts.

Downloader middleware wraps every download::

    process_request(request, spider)      first to last; None goes on,
                                          an HttpResponse skips the download,
                                          a Request replaces this one (back to the scheduler)
    process_response(request, response, spider)
                                          last to first; an HttpResponse goes on,
                                          a Request replaces this one
    process_exception(request, exception, spider)
                                          last to first; None goes on, an HttpResponse or a
                                          Request recovers

Spider middleware wraps every callback's output::

    process_spider_output(response, result, spider)
                                          last to first (nearest the spider first);
                                          returns an iterable, usually a generator
    process_spider_exception(response, exception, spider)
                                          last to first; None goes on, an iterable
                                          replaces the output
    process_start_requests(start_requests, spider)      last to first; an iterable

"First" is the lowest number in C{DOWNLOADER_MIDDLEWARES} / C{SPIDER_MIDDLEWARES}: the
middleware nearest the engine, as in Scrapy.

The C{spider} argument is Scrapy's old contract: since Scrapy 2.13 a hook may leave it out
(C{process_request(self, request)}), and gets it only when its signature requires it
(L{tinyscrapy.components.takes_spider}, read once when the chain is built).
C{process_start_requests} always gets it, as in Scrapy.

Every downloader hook, and C{process_spider_output}, may return a Deferred or be
C{async def}; the chain waits for it. (An C{async def process_spider_output} that yields is
an async generator: its output is gathered before it is routed.) A hook that returns the
wrong type raises L{MiddlewareError} naming the middleware and the hook; that error is a
bug, so it is not offered to C{process_exception} hooks (a retry middleware would retry it).
"""

import inspect

from twisted.internet.defer import Deferred, ensureDeferred

from tinyscrapy.components import takes_spider
from tinyscrapy.http import Request, Response
from tinyscrapy.runner.reactors import deferred_from_coro

# what a hook returns that is never awaited (checked first: the common case)
_READY = (Response, Request)


class MiddlewareError(TypeError):
    """A middleware hook returned something its contract does not allow."""


async def _waited(result):
    """
    What a hook's result stands for once it is ready: a coroutine is run (as an asyncio
    Task under the asyncio reactor, so that it may await asyncio code) and waited for, a
    Deferred or another awaitable waited for; anything else is returned as it is.
    """
    if inspect.iscoroutine(result):
        result = deferred_from_coro(result)
    if isinstance(result, Deferred) or inspect.isawaitable(result):
        result = await result
    return result


async def _call(hook, with_spider, spider, *args):
    """Call a hook (with the spider last if it takes it) and wait for its result."""
    result = hook(*args, spider) if with_spider else hook(*args)
    if result is None or isinstance(result, _READY):  # most hooks: nothing to wait for
        return result
    return await _waited(result)


async def _gather(agen):
    """An async generator's output as a list."""
    return [each async for each in agen]


def _hooks(middlewares, name, n_args, reverse=False):
    """
    C{(label, bound method, whether it takes the spider)} of every middleware that defines
    hook C{name}, whose arguments before the spider are C{n_args}.
    """
    found = [(f"{path}.{name}", getattr(mw, name), takes_spider(getattr(mw, name), n_args))
             for path, mw in middlewares if getattr(mw, name, None) is not None]
    return found[::-1] if reverse else found


class DownloaderMiddlewareChain:
    """
    The downloader middlewares, in the order of C{DOWNLOADER_MIDDLEWARES}.

    @ivar middlewares: C{(dotted path, instance)} pairs, lowest order first.
    """

    def __init__(self, middlewares):
        self.middlewares = list(middlewares)
        self._request_hooks = _hooks(self.middlewares, "process_request", 1)
        self._response_hooks = _hooks(self.middlewares, "process_response", 2, reverse=True)
        self._exception_hooks = _hooks(self.middlewares, "process_exception", 2,
                                       reverse=True)

    def download(self, request, spider, fetch):
        """
        Run C{request} through the chain around C{fetch(request, spider)}.

        @return: a Deferred that fires with an L{HttpResponse}, or with a L{Request} that
            replaces C{request} (a redirect, a retry); it errbacks with the download's
            failure when no middleware recovered from it.
        """
        if not self.middlewares:
            return fetch(request, spider)
        return ensureDeferred(self._download(request, spider, fetch))

    async def _download(self, request, spider, fetch):
        try:
            result = await self._process_request(request, spider)
            if result is None:
                result = await fetch(request, spider)
        except MiddlewareError:
            raise
        except Exception as exception:
            result = await self._process_exception(request, exception, spider)
        if isinstance(result, Response):
            result = await self._process_response(request, result, spider)
        return result

    # Each hook is called directly and only awaited when it returned a Deferred or a
    # coroutine: a chain of plain hooks makes no coroutine per hook.

    async def _process_request(self, request, spider):
        for label, hook, with_spider in self._request_hooks:
            result = hook(request, spider) if with_spider else hook(request)
            if result is None:
                continue
            if not isinstance(result, _READY):
                result = await _waited(result)
                if result is None:
                    continue
                _expect(label, result)
            return result
        return None

    async def _process_response(self, request, response, spider):
        for label, hook, with_spider in self._response_hooks:
            response = hook(request, response, spider) if with_spider \
                else hook(request, response)
            if not isinstance(response, _READY):
                response = await _waited(response)
                _expect(label, response)
            if isinstance(response, Request):
                break
        return response

    async def _process_exception(self, request, exception, spider):
        for label, hook, with_spider in self._exception_hooks:
            result = await _call(hook, with_spider, spider, request, exception)
            if result is not None:
                _expect(label, result)
                return result
        raise exception


class SpiderMiddlewareChain:
    """The spider middlewares, in the order of C{SPIDER_MIDDLEWARES}."""

    def __init__(self, middlewares):
        self.middlewares = list(middlewares)
        self._output_hooks = _hooks(self.middlewares, "process_spider_output", 2,
                                    reverse=True)
        self._exception_hooks = _hooks(self.middlewares, "process_spider_exception", 2,
                                       reverse=True)
        self._start_hooks = _hooks(self.middlewares, "process_start_requests", 1,
                                   reverse=True)

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
        Offer a callback's exception to the middlewares.

        @return: an iterable that replaces the output, or None when nobody handled it.
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


def _expect(label, value):
    if not isinstance(value, _READY):
        raise MiddlewareError(f"{label} must return HttpResponse or Request, got "
                              f"{type(value).__name__}")


def _expect_iterable(label, value):
    # a dict, a string or a single Request is iterable, but never what the hook meant
    if not hasattr(value, "__iter__") or isinstance(value, (dict, str, bytes, Request)):
        raise MiddlewareError(f"{label} must return an iterable, got {type(value).__name__}")

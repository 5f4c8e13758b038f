"""
L{DownloaderMiddlewareManager}: the downloader middlewares around every download, with
Scrapy's contracts::

    process_request(request, spider)      first to last; None goes on,
                                          an HttpResponse skips the download,
                                          a Request replaces this one (back to the scheduler)
    process_response(request, response, spider)
                                          last to first; an HttpResponse goes on,
                                          a Request replaces this one
    process_exception(request, exception, spider)
                                          last to first; None goes on, an HttpResponse or a
                                          Request recovers

"First" is the lowest number in C{DOWNLOADER_MIDDLEWARES}: the middleware nearest the
engine. Every hook may return a Deferred or be C{async def}; the chain waits for it. A
hook that returns the wrong type raises L{tinyscrapy.middleware.MiddlewareError} naming
the middleware and the hook; that error is a bug, so it is not offered to
C{process_exception} hooks (a retry middleware would retry it), and neither is the
C{CancelledError} of a download the close cancelled. The C{spider} argument is given only
to a hook whose signature asks for it (Scrapy 2.13's contract).
"""

from twisted.internet.defer import CancelledError, ensureDeferred

from tinyscrapy.http.request import Request
from tinyscrapy.http.response import Response
from tinyscrapy.middleware import (
    _READY,
    MiddlewareError,
    MiddlewareManager,
    _add_hook,
    _call,
    _expect,
    _waited,
)
from tinyscrapy.utils.defer import maybe_deferred_to_future


class DownloaderMiddlewareManager(MiddlewareManager):
    """
    The downloader middlewares, in the order of C{DOWNLOADER_MIDDLEWARES} (the
    downloader's C{middleware}).

    @ivar middlewares: the instances, lowest order first; C{paths} what enabled each.
    """

    component_name = "downloader middleware"
    setting = "DOWNLOADER_MIDDLEWARES"

    def __init__(self, *middlewares, crawler=None, paths=None):
        # (label, bound hook, whether it takes the spider), in calling order, each read
        # once, as _add_middleware adds it
        self._request_hooks, self._response_hooks, self._exception_hooks = [], [], []
        super().__init__(*middlewares, crawler=crawler, paths=paths)

    @property
    def hooked(self):
        """Whether any middleware has a hook (without one a download skips the chain)."""
        return bool(self._request_hooks or self._response_hooks or self._exception_hooks)

    def _add_middleware(self, mw):
        path = self.path_of(mw)
        for name, n_args, hooks, first in (
                ("process_request", 1, self._request_hooks, False),
                ("process_response", 2, self._response_hooks, True),
                ("process_exception", 2, self._exception_hooks, True)):
            method = _add_hook(hooks, path, mw, name, n_args, first)
            if method is not None:
                (self.methods[name].appendleft if first else self.methods[name].append)(method)

    def download(self, request, spider, fetch):
        """
        Run C{request} through the chain around C{fetch(request, spider)}.

        @return: a Deferred that fires with an L{HttpResponse}, or with a L{Request} that
            replaces C{request} (a redirect, a retry); it errbacks with the download's
            failure when no middleware recovered from it.
        """
        if not self.hooked:
            return fetch(request, spider)
        return ensureDeferred(self._download(request, spider, fetch))

    async def download_async(self, download_func, request):
        """
        Scrapy's form of L{download}: C{request} through the chain around
        C{download_func(request)} (a coroutine function, or one returning a Deferred or a
        response), for the crawl's spider.

        @return: the L{HttpResponse}, or the L{Request} that replaces C{request}.
        @raise Exception: the download's failure when no middleware recovered from it.
        @raise MiddlewareError: a hook returned what its contract does not allow, or
            C{download_func} returned None.
        """
        spider = getattr(self.crawler, "spider", None)

        async def fetch(request, _spider):
            result = await _waited(download_func(request))
            if result is None:
                raise MiddlewareError("Received None in process_response from the download "
                                      "function: it must return a response or a request",
                                      "download_func")
            return result

        # driven by Twisted (its awaits are Deferreds), awaited as the reactor needs
        return await maybe_deferred_to_future(ensureDeferred(self._download(request, spider,
                                                                            fetch)))

    async def _download(self, request, spider, fetch):
        try:
            result = await self._process_request(request, spider)
            if result is None:
                result = await fetch(request, spider)
        except (MiddlewareError, CancelledError):  # a bug, or the close gave up on it
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

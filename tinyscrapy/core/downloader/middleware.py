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
    _call,
    _expect,
    _hooks,
    _waited,
)


class DownloaderMiddlewareManager(MiddlewareManager):
    """
    The downloader middlewares, in the order of C{DOWNLOADER_MIDDLEWARES} (the
    downloader's C{middleware}).

    @ivar middlewares: the instances, lowest order first; C{paths} what enabled each.
    """

    component_name = "downloader middleware"
    setting = "DOWNLOADER_MIDDLEWARES"

    def __init__(self, *middlewares, crawler=None, paths=None):
        super().__init__(*middlewares, crawler=crawler, paths=paths)
        # (label, bound hook, whether it takes the spider), in calling order: read once
        components = self.components
        self._request_hooks = _hooks(components, "process_request", 1)
        self._response_hooks = _hooks(components, "process_response", 2, reverse=True)
        self._exception_hooks = _hooks(components, "process_exception", 2, reverse=True)

    def _add_middleware(self, mw):
        if getattr(mw, "process_request", None) is not None:
            self.methods["process_request"].append(mw.process_request)
        if getattr(mw, "process_response", None) is not None:
            self.methods["process_response"].appendleft(mw.process_response)
        if getattr(mw, "process_exception", None) is not None:
            self.methods["process_exception"].appendleft(mw.process_exception)

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

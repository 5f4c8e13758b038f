"""
Download handlers: how a request is fetched, by its URL's scheme, as in Scrapy.

C{DOWNLOAD_HANDLERS_BASE} maps each scheme to a handler class by dotted path; a project's
C{DOWNLOAD_HANDLERS} adds schemes or replaces them, and C{None} switches one off. The
built-ins: C{http} and C{https},
L{tinyscrapy.core.downloader.handlers.http11.HTTP11DownloadHandler} (treq over one
persistent connection pool, with the crawl's timeouts, size limits and decoding); C{data},
L{tinyscrapy.core.downloader.handlers.datauri.DataURIDownloadHandler}; C{file}, off
unless a project enables L{tinyscrapy.core.downloader.handlers.file.FileDownloadHandler}.

A handler (L{tinyscrapy.core.downloader.handlers.base}) is built once, by its
C{from_crawler} (one instance serves every scheme it is named for): when the crawl starts,
or at the first request of its scheme when it is C{lazy} (a handler without the attribute
is, as in Scrapy). Its C{download_request} is Scrapy 2.19's coroutine C{(request)} or the
older C{(request, spider)} returning a Deferred; a handler that raises L{NotConfigured}
leaves its scheme unsupported, with the reason.
"""

import inspect
import logging

from twisted.internet.defer import DeferredList, fail, maybeDeferred

from tinyscrapy.exceptions import NotConfigured, NotSupported
from tinyscrapy.utils.defer import deferred_from_coro
from tinyscrapy.utils.misc import build_from_crawler, load_object

logger = logging.getLogger(__name__)


def handler_paths(settings):
    """C{DOWNLOAD_HANDLERS_BASE} updated by C{DOWNLOAD_HANDLERS}: scheme (lower case) to
    the dotted path (or class) of its handler, the switched-off schemes left out."""
    paths = {scheme.lower(): path
             for scheme, path in settings.getdict("DOWNLOAD_HANDLERS_BASE").items()}
    paths.update((scheme.lower(), path)
                 for scheme, path in settings.getdict("DOWNLOAD_HANDLERS").items())
    return {scheme: path for scheme, path in paths.items() if path}


class DownloadHandlers:
    """
    The handler of each scheme.

    @ivar handlers: scheme -> the handler built for it (a lazy one once it was needed).
    """

    def __init__(self, crawler):
        self.crawler = crawler
        self._paths = handler_paths(crawler.settings)
        self._built = {}  # handler class -> its one instance
        self._calls = {}  # scheme -> a callable (request, spider) returning a Deferred
        self._refused = {}  # scheme -> why it has no handler
        self.handlers = {}
        for scheme, path in self._paths.items():
            self._load(scheme, path, startup=True)

    def _load(self, scheme, path, startup=False):
        """Build the handler of C{scheme} (at C{startup}, only if it is not lazy).
        @return: the callable that downloads with it, or None."""
        try:
            cls = load_object(path) if isinstance(path, str) else path
            if startup and getattr(cls, "lazy", True):
                return None
            handler = self._built.get(cls)
            if handler is None:
                handler = self._built[cls] = build_from_crawler(cls, self.crawler)
        except NotConfigured as e:
            self._refused[scheme] = str(e) or "the handler is not configured"
            return None
        except Exception as e:  # one broken handler leaves its scheme unsupported
            logger.error("Loading %r for scheme %r", path, scheme, exc_info=True)
            self._refused[scheme] = f"its handler {path!r} failed to load: {e}"
            return None
        self.handlers[scheme] = handler
        call = self._calls[scheme] = _caller(handler)
        return call

    def handler_for(self, scheme):
        """@return: the handler of C{scheme} (lower case), built now if lazy, or None."""
        if scheme not in self.handlers and scheme in self._paths \
                and scheme not in self._refused:
            self._load(scheme, self._paths[scheme])
        return self.handlers.get(scheme)

    def download_request(self, request, spider):
        """
        Fetch C{request} with its scheme's handler.

        @return: the handler's Deferred (a response, or its failure); it errbacks with
            L{NotSupported} when no handler takes the scheme.
        """
        scheme = request.url.partition(":")[0].lower()
        call = self._calls.get(scheme)
        if call is None:
            if self.handler_for(scheme) is None:
                return fail(NotSupported(f"Unsupported URL scheme {scheme!r}: "
                                         f"{self._why_refused(scheme)}"))
            call = self._calls[scheme]
        return call(request, spider)

    def _why_refused(self, scheme):
        if scheme in self._refused:
            return self._refused[scheme]
        if scheme == "file":
            return ("file: URLs are not downloaded by default (they read local files); a "
                    "project enables them with DOWNLOAD_HANDLERS = {'file': "
                    "'tinyscrapy.core.downloader.handlers.file.FileDownloadHandler'}")
        return "no handler available for that scheme (DOWNLOAD_HANDLERS)"

    def close(self):
        """Close every handler built. @return: a Deferred firing when all have closed
        (a handler whose close fails is logged, the others still close)."""
        closes = [maybeDeferred(_close, handler) for handler in self._built.values()
                  if hasattr(handler, "close")]
        d = DeferredList(closes, consumeErrors=True)
        d.addCallback(_cb_closed)
        return d


def _caller(handler):
    """How to call C{handler}: Scrapy 2.19's coroutine C{download_request(request)}, or
    the older C{download_request(request, spider)} that returns a Deferred."""
    method = handler.download_request
    if inspect.iscoroutinefunction(method):
        def download(request, spider):
            return deferred_from_coro(method(request))
        return download
    if type(handler).__module__.startswith("tinyscrapy."):
        return method  # the built-in ones return a failed Deferred, never raise
    def download_old_style(request, spider):
        return maybeDeferred(method, request, spider)
    return download_old_style


def _close(handler):
    result = handler.close()
    if inspect.iscoroutine(result):
        return deferred_from_coro(result)
    return result


def _cb_closed(results):
    for ok, failure in results:
        if not ok:
            logger.error("A download handler failed to close: %s",
                         failure.getErrorMessage() or failure.type.__name__)

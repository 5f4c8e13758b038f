"""
Download handlers: how a request is fetched, by its URL's scheme, as in Scrapy.

C{DOWNLOAD_HANDLERS_BASE} maps each scheme to a handler class by dotted path; a project's
C{DOWNLOAD_HANDLERS} adds schemes or replaces them, and C{None} switches one off. The
built-in C{http} and C{https} handler is L{tinyscrapy.core.downloader.handlers.http11}:
treq over one persistent connection pool, with the crawl's timeouts, size limits and
decoding. A handler is built once, by its C{from_crawler} (one instance serves every
scheme it is named for), and offers C{download_request(request, spider)}, returning a
Deferred that fires with the response, and C{close()}.
"""

from twisted.internet.defer import DeferredList, fail, maybeDeferred

from tinyscrapy.exceptions import NotSupported
from tinyscrapy.utils.misc import build_from_crawler, load_object


class DownloadHandlers:
    """
    The handler of each scheme.

    @ivar handlers: scheme -> the handler built for it.
    """

    def __init__(self, crawler):
        settings = crawler.settings
        paths = dict(settings.getdict("DOWNLOAD_HANDLERS_BASE"))
        paths.update(settings.getdict("DOWNLOAD_HANDLERS"))
        built = {}  # one instance per class
        self.handlers = {}
        for scheme, path in paths.items():
            if not path:
                continue
            cls = load_object(path)
            if cls not in built:
                built[cls] = build_from_crawler(cls, crawler)
            self.handlers[scheme.lower()] = built[cls]
        self._distinct = list(built.values())

    def handler_for(self, scheme):
        """@return: the handler of C{scheme} (lower case), or None."""
        return self.handlers.get(scheme)

    def download_request(self, request, spider):
        """
        Fetch C{request} with its scheme's handler.

        @return: the handler's Deferred (a response, or its failure); it errbacks with
            L{NotSupported} when no handler takes the scheme.
        """
        scheme = request.url.partition(":")[0].lower()
        handler = self.handlers.get(scheme)
        if handler is None:
            return fail(NotSupported(f"Unsupported URL scheme {scheme!r}: no handler "
                                     f"available for that scheme (DOWNLOAD_HANDLERS)"))
        return handler.download_request(request, spider)

    def close(self):
        """Close every handler. @return: a Deferred firing when all have closed."""
        closes = [maybeDeferred(handler.close) for handler in self._distinct
                  if hasattr(handler, "close")]
        return DeferredList(closes, consumeErrors=True)

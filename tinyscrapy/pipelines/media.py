"""
L{MediaPipeline}, Scrapy's (C{scrapy.pipelines.media}): the base of the item pipelines
that download what an item points to (L{tinyscrapy.pipelines.files.FilesPipeline},
L{tinyscrapy.pipelines.images.ImagesPipeline}).

For each item, C{get_media_requests(item, info)} says what to download;
C{media_to_download(request, info, item=...)} may answer a request without downloading it
(a file already stored and still fresh); the others are downloaded with
L{tinyscrapy.core.engine.ExecutionEngine.download}: through the downloader middlewares,
with their per-host slot, delays, retries, robots.txt and stats, but no place under
C{CONCURRENT_REQUESTS} (the item's page holds one already, and a second would deadlock
at C{CONCURRENT_REQUESTS=1}); each is an entry of its own in the request ledger. The
response goes to C{media_downloaded(response, request, info, item=...)}, a failure to
C{media_failed(failure, request, info)}, and once every request of the item has its
result, C{item_completed(results, item, info)} returns the item, with C{results} a list
of C{(True, file info)} or C{(False, failure)}.

A URL is downloaded once per crawl, however many items want it (by request fingerprint):
an item that wants one already downloaded gets the result at once, one that wants one
being downloaded waits for it. A media request's status is handled by the pipeline
(C{handle_httpstatus_all}); with C{MEDIA_ALLOW_REDIRECTS}, redirects are followed first.
Settings are read with the pipeline class's own prefix first (C{MYPIPELINE_FILES_EXPIRES}
for a C{MyPipeline} subclass), as in Scrapy.
"""

import functools
import inspect
import logging
import warnings
from collections import defaultdict
from typing import Literal, TypedDict

from twisted.internet.defer import Deferred, DeferredList
from twisted.python.failure import Failure

from tinyscrapy.exceptions import ScrapyDeprecationWarning
from tinyscrapy.http.request import NO_CALLBACK
from tinyscrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from tinyscrapy.utils.misc import arg_to_iter

logger = logging.getLogger(__name__)


class FileInfo(TypedDict):
    """What a media pipeline records of one file: its C{url}, the C{path} it is stored
    under, its C{checksum} (MD5) and C{status} (C{downloaded}, C{uptodate}, C{cached})."""

    url: str
    path: str
    checksum: str | None
    status: str


# a media request's result, as item_completed gets it
FileInfoOrError = tuple[Literal[True], FileInfo] | tuple[Literal[False], Failure]


class FileException(Exception):
    """A media file could not be downloaded or stored (its item goes on without it)."""


class _MediaRequestFiltered(FileException):
    """A media request was refused (offsite, robots.txt): logged at DEBUG, not an error."""


class MediaPipeline:
    """
    Downloads an item's media before the item goes on (see the module docstring); a
    subclass defines the hooks.

    @cvar LOG_FAILED_RESULTS: whether L{item_completed} logs each failed download.
    @ivar allow_redirects: C{MEDIA_ALLOW_REDIRECTS}.
    @ivar spiderinfo: the L{SpiderInfo} of the crawl, once open.
    """

    LOG_FAILED_RESULTS = True

    class SpiderInfo:
        """
        The pipeline's memory of one crawl.

        @ivar downloading: fingerprints of the requests being downloaded.
        @ivar downloaded: fingerprint -> the file info, or the failure.
        @ivar waiting: fingerprint -> the Deferreds of the items waiting for it.
        """

        def __init__(self, spider):
            self.spider = spider
            self.downloading = set()
            self.downloaded = {}
            self.waiting = defaultdict(list)

    def __init__(self, download_func=None, *, crawler):
        """@param download_func: ignored, as in Scrapy 2.19 (the engine downloads)."""
        self.crawler = crawler
        self._fingerprinter = crawler.request_fingerprinter
        resolve = functools.partial(self._key_for_pipe, base_class_name="MediaPipeline",
                                    settings=crawler.settings)
        self.allow_redirects = crawler.settings.getbool(resolve("MEDIA_ALLOW_REDIRECTS"),
                                                        False)
        self._handle_statuses(self.allow_redirects)

    def _handle_statuses(self, allow_redirects):
        self.handle_httpstatus_list = _AllBut3xx() if allow_redirects else None

    def _key_for_pipe(self, key, base_class_name=None, settings=None):
        """
        The setting C{key} as this class reads it: C{CLASSNAME_KEY} for a subclass that
        has it set, else C{key}.
        """
        class_name = type(self).__name__
        formatted = f"{class_name.upper()}_{key}"
        if not base_class_name or class_name == base_class_name \
                or (settings is not None and not settings.get(formatted)):
            return key
        return formatted

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler=crawler)

    def open_spider(self, spider=None):
        self.spiderinfo = self.SpiderInfo(self.crawler.spider)

    async def process_item(self, item, spider=None):
        """
        Download the item's media, then hand the results to L{item_completed}.

        @return: what L{item_completed} returns (the item).
        """
        info = self.spiderinfo
        requests = arg_to_iter(self.get_media_requests(item, info))
        downloads = [deferred_from_coro(self._process_request(request, info, item))
                     for request in requests]
        results = []
        if downloads:
            results = await maybe_deferred_to_future(DeferredList(downloads,
                                                                  consumeErrors=True))
        return self.item_completed(results, item, info)

    async def _process_request(self, request, info, item):
        """
        The file info of one media request: remembered, awaited from another item's
        download, or downloaded now.

        @raise Exception: its failure (after the request's own errback, if it has one).
        """
        fingerprint = self._fingerprinter.fingerprint(request)
        errback = request.errback
        request.callback = NO_CALLBACK
        request.errback = None
        if fingerprint in info.downloaded:
            cached = info.downloaded[fingerprint]
            if isinstance(cached, Failure):
                if errback is not None:
                    return errback(cached)
                cached.raiseException()
            return cached
        waiting = Deferred()
        if errback is not None:
            waiting.addErrback(errback)
        info.waiting[fingerprint].append(waiting)
        if fingerprint in info.downloading:  # another item's download: wait for it
            return await maybe_deferred_to_future(waiting)
        info.downloading.add(fingerprint)
        try:
            result = await _resolved(self.media_to_download(request, info, item=item))
            if not result:
                result = await self._check_media_to_download(request, info, item=item)
        except Exception:
            result = Failure()
            if not isinstance(result.value, FileException):  # those are logged where raised
                logger.error("%s: error handling %s", type(self).__name__, request,
                             exc_info=(result.type, result.value, result.getTracebackObject()))
        self._cache_result_and_execute_waiters(result, fingerprint, info)
        return await maybe_deferred_to_future(waiting)

    def _modify_media_request(self, request):
        """The pipeline, not the HTTP-error rule, judges a media response's status."""
        if self.handle_httpstatus_list:
            request.meta["handle_httpstatus_list"] = self.handle_httpstatus_list
        else:
            request.meta["handle_httpstatus_all"] = True

    async def _check_media_to_download(self, request, info, item):
        """Download C{request}; its response through L{media_downloaded}, a failure
        through L{media_failed}."""
        try:
            self._modify_media_request(request)
            response = await self.crawler.engine.download_async(request)
            return await _resolved(self.media_downloaded(response, request, info, item=item))
        except Exception:
            failure = self.media_failed(Failure(), request, info)
            if isinstance(failure, Failure):  # Scrapy's old contract: returned, not raised
                warnings.warn(f"{type(self).__qualname__}.media_failed returned a Failure "
                              "instance. This is deprecated, please raise an exception "
                              "instead, e.g. via failure.raiseException().",
                              ScrapyDeprecationWarning, stacklevel=2)
                failure.raiseException()
            return failure

    def _cache_result_and_execute_waiters(self, result, fingerprint, info):
        """Remember C{result} (a failure without its frames and context, so that it holds
        no request or response) and fire every item waiting for it."""
        if isinstance(result, Failure):
            result.cleanFailure()
            result.frames.clear()
            if isinstance(getattr(result.value, "__context__", None), StopIteration):
                result.value.__context__ = None
        info.downloading.discard(fingerprint)
        info.downloaded[fingerprint] = result
        for waiting in info.waiting.pop(fingerprint, ()):
            if isinstance(result, Failure):
                waiting.errback(result)
            else:
                waiting.callback(result)

    # the hooks a subclass defines

    def media_to_download(self, request, info, *, item=None):
        """@return: the file info when C{request} need not be downloaded, else None (or a
            Deferred, or an awaitable, of either)."""
        raise NotImplementedError

    def get_media_requests(self, item, info):
        """@return: the requests of C{item}'s media (a list, one request, or None)."""
        raise NotImplementedError

    def media_downloaded(self, response, request, info, *, item=None):
        """@return: the file info of a downloaded response (or an awaitable of it).
        @raise FileException: it cannot be used."""
        raise NotImplementedError

    def media_failed(self, failure, request, info):
        """A download failed. @raise Exception: what the item's results record."""
        raise NotImplementedError

    def item_completed(self, results, item, info):
        """
        Every media request of C{item} has its result; log the failures (unless
        L{LOG_FAILED_RESULTS} is off; a refused request is not one).

        @param results: C{(True, file info)} or C{(False, failure)}, one per request.
        @return: the item.
        """
        if self.LOG_FAILED_RESULTS:
            for ok, value in results:
                if not ok and not isinstance(value.value, _MediaRequestFiltered):
                    logger.error("%(class)s found errors processing %(item)s",
                                 {"class": type(self).__name__, "item": item},
                                 exc_info=(value.type, value.value, value.getTracebackObject()))
        return item

    def file_path(self, request, response=None, info=None, *, item=None):
        """@return: the path, under the store, that C{request}'s file is stored at."""
        raise NotImplementedError


class _AllBut3xx:
    """C{handle_httpstatus_list} for "every status but redirects" (Scrapy's
    C{SequenceExclude(range(300, 400))})."""

    def __contains__(self, status):
        return not 300 <= status < 400


async def _resolved(value):
    """C{value}, or what it resolves to when it is a Deferred or an awaitable."""
    if isinstance(value, Deferred):
        return await maybe_deferred_to_future(value)
    if inspect.isawaitable(value):
        return await value
    return value

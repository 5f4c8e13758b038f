"""
L{HttpCacheMiddleware}: keep responses, and answer the same request from them the next
time, as Scrapy's C{HttpCacheMiddleware}: a policy (C{HTTPCACHE_POLICY}) decides what is
stored and what is fresh, a storage (C{HTTPCACHE_STORAGE}) keeps the entries; both are in
L{tinyscrapy.extensions.httpcache}. Off by default (C{HTTPCACHE_ENABLED}); for developing a
spider against pages already fetched once, or offline with C{HTTPCACHE_IGNORE_MISSING}.

With the default C{DummyPolicy} every response whose status is not in
C{HTTPCACHE_IGNORE_HTTP_CODES} is stored, and any stored one younger than
C{HTTPCACHE_EXPIRATION_SECS} (0: never too old) is served without asking the server;
C{RFC2616Policy} follows HTTP's caching headers, revalidating a stale entry (a C{304}
keeps it). Requests whose scheme is in C{HTTPCACHE_IGNORE_SCHEMES}, or with
C{meta["dont_cache"]}, pass by the cache both ways.

The middleware sits at 900 in C{DOWNLOADER_MIDDLEWARES_BASE}, nearest the downloader: its
C{process_request} runs last, and its C{process_response} first. So it stores responses as
they came off the wire (a 302 is stored as a 302, a 503 as a 503), and a cached response
goes back through every other middleware's C{process_response}, as a fresh one would: the
redirect middleware follows a cached 302, the cookies middleware reads its C{Set-Cookie}.

A cached response has C{"cached"} in C{response.flags}. Stats, as Scrapy's:
C{httpcache/hit}, C{httpcache/miss}, C{httpcache/store}, C{httpcache/uncacheable},
C{httpcache/ignore} (a miss dropped by C{HTTPCACHE_IGNORE_MISSING}), C{httpcache/firsthand},
C{httpcache/revalidate}, C{httpcache/invalidate}, C{httpcache/errorrecovery},
C{httpcache/retrieve_error} (an entry that cannot be used: a miss); and tinyscrapy's
C{httpcache/corrupt} (an entry that does not read back as one, or is another URL's: it goes),
C{httpcache/too_large} (an entry stored encoded that decodes past the download limits),
C{httpcache/read_error} and C{httpcache/store_error} (logged once per errno, summed up at
close).

An entry that cannot be used is a miss, said once at WARNING with its URL: a file cut
short or crafted, an entry stored for another URL than the request's (a crafted file
under a fingerprint must not answer for another page), one that cannot be read. The cache's
folders and files are private (C{0700}, C{0600}): they hold pages fetched with the crawl's
cookies.

Files are read and written with plain blocking calls on the reactor thread, as Scrapy's
filesystem storage does. A body is at most C{DOWNLOAD_MAXSIZE} bytes and usually a page of
some tens of kilobytes, which a local disk writes in well under a millisecond; a cache on a
slow network disk would need a thread (C{deferToThread}) and is not supported.
"""

import logging
from email.utils import formatdate

from tinyscrapy import signals
from tinyscrapy.downloadermiddlewares.httpcompression import body_decoder
from tinyscrapy.exceptions import (
    ContentDecodingError,
    NotCached,
    NotConfigured,
    ResponseTooLarge,
    UsageError,
)
from tinyscrapy.extensions.httpcache import (
    CorruptEntry,
    FilesystemCacheStorage,
    UnusableEntry,
    cache_dir,
    error_kind,
    make_private_dirs,
)
from tinyscrapy.responsetypes import response_for
from tinyscrapy.utils import request as _fingerprints
from tinyscrapy.utils.misc import load_object
from tinyscrapy.utils.request import request_fingerprint

logger = logging.getLogger(__name__)

# the scheduler's default, compared by identity (request_fingerprint is patched in tests)
DEFAULT_FINGERPRINT = _fingerprints.request_fingerprint

__all__ = ["FilesystemCacheStorage", "HttpCacheMiddleware", "cache_dir"]


class HttpCacheMiddleware:
    """
    Answer requests from the cache when it holds a fresh response; store the others.

    @ivar policy: the C{HTTPCACHE_POLICY} in use.
    @ivar storage: the C{HTTPCACHE_STORAGE} in use.
    """

    # a cached response stands in for a fresh one when the download fails these ways
    DOWNLOAD_EXCEPTIONS = (ConnectionError, OSError, TimeoutError)

    def __init__(self, settings, stats, clock=None):
        """
        @param clock: gives the time responses are stored at and aged against
            (C{seconds()}): the crawler's reactor, a C{task.Clock} in tests.
        @raise NotConfigured: C{HTTPCACHE_ENABLED} is off.
        """
        if not settings.getbool("HTTPCACHE_ENABLED"):
            raise NotConfigured("HTTPCACHE_ENABLED is off")
        self.policy = load_object(settings.get("HTTPCACHE_POLICY"))(settings)
        self.storage = load_object(settings.get("HTTPCACHE_STORAGE"))(settings)
        if clock is not None and hasattr(self.storage, "clock"):
            self.storage.clock = clock
        self.ignore_missing = settings.getbool("HTTPCACHE_IGNORE_MISSING")
        # a body stored with its Content-Encoding on is decoded as the fetch path would
        self.compression = settings.getbool("COMPRESSION_ENABLED", True)
        self.maxsize = settings.getint("DOWNLOAD_MAXSIZE")
        self.ratio = settings.getfloat("DOWNLOAD_MAXRATIO", 100.0)
        self.grace = settings.getint("DOWNLOAD_MAXRATIO_GRACE", 1 << 20)
        self.stats = stats
        self._io_errors = {}  # (read or store, kind of error): how many
        self.crawler = None  # set by from_crawler: its scheduler's fingerprint is read
        self._reuse_fingerprint = None  # decided at the first request
        self._own = isinstance(self.storage, FilesystemCacheStorage)
        self._opened = False

    @classmethod
    def from_crawler(cls, crawler):
        """
        @raise NotConfigured: C{HTTPCACHE_ENABLED} is off.
        @raise UsageError: C{HTTPCACHE_DIR} cannot be made a directory (a regular file
            is in its place, or in the way of its path): the start stops with one line.
        """
        if not crawler.settings.getbool("HTTPCACHE_ENABLED"):
            raise NotConfigured("HTTPCACHE_ENABLED is off")
        directory = cache_dir(crawler.settings)
        try:
            make_private_dirs(directory, directory)
        except OSError as e:
            raise UsageError(f"HTTPCACHE_DIR {directory} cannot be a directory: "
                             f"{e.strerror or e}") from None
        middleware = cls(crawler.settings, crawler.stats, crawler.reactor)
        middleware.crawler = crawler
        crawler.signals.connect(middleware.spider_opened, signals.spider_opened)
        crawler.signals.connect(middleware.spider_closed, signals.spider_closed)
        if crawler.spider is not None:
            middleware.spider_opened(crawler.spider)
        return middleware

    def spider_opened(self, spider):
        """Open the storage (a second call does nothing)."""
        if self._opened:
            return
        self._opened = True
        self.storage.open_spider(spider)

    def process_request(self, request, spider=None):
        """
        @return: the cached L{HttpResponse} when it is fresh, or None to download
            C{request} (with the validators of a stale entry, under C{RFC2616Policy}).
        @raise NotCached: nothing cached and C{HTTPCACHE_IGNORE_MISSING} is on.
        """
        meta = request._meta
        if meta and meta.get("dont_cache"):
            return None
        if not self.policy.should_cache_request(request):
            request.meta["_dont_cache"] = True  # Scrapy's mark: uncacheable both ways
            return None
        spider = spider or getattr(self.crawler, "spider", None)
        cached = self._retrieve(spider, request)
        if cached is None:
            self.stats.inc_value("httpcache/miss")
            if self.ignore_missing:
                self.stats.inc_value("httpcache/ignore")
                raise NotCached(f"not in the cache (HTTPCACHE_IGNORE_MISSING): {request.url}")
            return None
        if "cached" not in cached.flags:
            cached.flags.append("cached")
        if self.policy.is_cached_response_fresh(cached, request):
            self.stats.inc_value("httpcache/hit")
            return cached
        request.meta["cached_response"] = cached  # for process_response: no second read
        return None

    def process_response(self, request, response, spider=None):
        """Store C{response} (unless it came from the cache, or the policy refuses it); a
        stale entry the server confirmed (C{304}) is served instead."""
        meta = request._meta
        if meta and meta.get("dont_cache"):
            return response
        if (meta and "_dont_cache" in meta) or "cached" in response.flags:
            if meta:
                meta.pop("_dont_cache", None)
            return response
        if not self.policy.should_cache_request(request):  # not seen by process_request
            return response
        if "Date" not in response.headers:  # HTTP says the server sets it: as Scrapy
            response.headers["Date"] = formatdate(usegmt=True)
        spider = spider or getattr(self.crawler, "spider", None)
        cached = meta.pop("cached_response", None) if meta else None
        if cached is None:
            self.stats.inc_value("httpcache/firsthand")
            self._store(spider, request, response)
            return response
        if self.policy.is_cached_response_valid(cached, response, request):
            self.stats.inc_value("httpcache/revalidate")
            if response.status == 304:
                _freshen(cached, response)
                self._store(spider, request, cached)
            return cached
        self.stats.inc_value("httpcache/invalidate")
        request.meta.pop("cache_timestamp", None)
        self._store(spider, request, response)
        return response

    def process_exception(self, request, exception, spider=None):
        """A download that failed (a lost connection, a timeout) while a stale entry was
        being revalidated: the entry stands in."""
        cached = request._meta.pop("cached_response", None) if request._meta else None
        if cached is not None and isinstance(exception, self.DOWNLOAD_EXCEPTIONS + (
                _twisted_download_errors())):
            self.stats.inc_value("httpcache/errorrecovery")
            return cached
        return None

    def _retrieve(self, spider, request):
        """The storage's entry for C{request}, decoded; None for none, or for one that
        cannot be used (counted, logged once with its URL)."""
        storage = self.storage
        fingerprint = self._fingerprint(request) if self._own else None
        try:
            if self._own:
                response = storage.retrieve(spider.name, request, fingerprint)
            else:
                response = storage.retrieve_response(spider, request)
            if response is not None and self.compression:
                response = self._decoded(response, request)
        except CorruptEntry as e:  # it read, but not as this request's entry: it goes
            self.stats.inc_value("httpcache/corrupt")
            self.stats.inc_value("httpcache/retrieve_error")
            logger.warning("Ignoring a corrupt cache entry for %r (%s): %s; a miss",
                           request, _where(storage, spider, request, fingerprint), e)
            if hasattr(storage, "remove"):
                storage.remove(spider.name, request, fingerprint)
            return None
        except UnusableEntry as e:  # too large for this crawl's limits: kept
            self.stats.inc_value("httpcache/too_large")
            self.stats.inc_value("httpcache/retrieve_error")
            logger.warning("Ignoring the cache entry for %r (%s): %s; a miss", request,
                           _where(storage, spider, request, fingerprint), e)
            return None
        except OSError as e:  # it could not be read (permissions, a disk error): kept
            self._io_error("read", request, e)
            return None
        except Exception as e:  # a storage of the project's own that fails: a miss
            self.stats.inc_value("httpcache/retrieve_error")
            logger.warning("Could not read the cache entry for %r, treating it as a "
                           "cache miss: %s: %s", request, type(e).__name__, e)
            return None
        return response

    def _store(self, spider, request, response):
        if not self.policy.should_cache_response(response, request):
            self.stats.inc_value("httpcache/uncacheable")
            return
        try:
            if self._own:
                self.storage.store(spider.name, request, response,
                                   self._fingerprint(request))
            else:
                self.storage.store_response(spider, request, response)
        except OSError as e:  # a full disk or a read-only directory: the crawl goes on
            self._io_error("store", request, e)
        else:
            self.stats.inc_value("httpcache/store")

    def _fingerprint(self, request):
        """
        C{request}'s L{request_fingerprint}, computed once: the scheduler has set it in
        C{request.fingerprint} already, or it is set there now. Only when the scheduler
        uses that same function; with one of its own, C{request.fingerprint} is not this
        cache's key, and it is computed on each call.
        """
        if self._reuse_fingerprint is None:
            scheduler = getattr(getattr(self.crawler, "engine", None), "scheduler", None)
            self._reuse_fingerprint = getattr(scheduler, "fingerprint", DEFAULT_FINGERPRINT) \
                is DEFAULT_FINGERPRINT
        if not self._reuse_fingerprint:
            return request_fingerprint(request)
        if request.fingerprint is None:
            request.fingerprint = request_fingerprint(request)
        return request.fingerprint

    def _decoded(self, response, request):
        """
        C{response} with its body decoded when it was stored with a C{Content-Encoding}
        this crawl decodes (stored with C{COMPRESSION_ENABLED} off, or sent unasked): the
        bounded decoder of the fetch path, within the same limits.

        @raise CorruptEntry: the body does not decode as its header says.
        @raise UnusableEntry: decoded, it crosses C{DOWNLOAD_MAXSIZE} or the ratio.
        """
        encodings = [value.decode("latin-1")
                     for value in response.headers.getlist("Content-Encoding")]
        if not encodings:
            return response
        maxsize = self.maxsize
        if request._meta and "download_maxsize" in request._meta:
            maxsize = request._meta["download_maxsize"]
        try:
            decoder = body_decoder(", ".join(encodings), maxsize, self.ratio, self.grace)
        except ContentDecodingError:  # not one this installation decodes: as stored
            return response
        if decoder is None:  # identity
            return response
        try:
            pieces = decoder.feed(response.body)
            pieces.extend(decoder.finish())
        except ContentDecodingError as e:
            raise CorruptEntry(str(e)) from None
        except ResponseTooLarge as e:  # DecompressionBomb included
            raise UnusableEntry(str(e)) from None
        headers = response.headers.copy()
        del headers["Content-Encoding"]
        return response_for(response.url, response.status, headers, b"".join(pieces),
                            request, flags=response.flags)

    def _io_error(self, action, request, error):
        """
        Count a read or store error; log only the first of each kind (errno), with its
        URL: a cache that cannot be written fails for every request alike.
        """
        self.stats.inc_value(f"httpcache/{action}_error")
        key = (action, error_kind(error))
        count = self._io_errors.get(key, 0)
        self._io_errors[key] = count + 1
        if not count:
            logger.warning("Could not %s %r in the cache: %s (further %s errors are "
                           "counted in httpcache/%s_error, and summed up at close)",
                           action, request, error, key[1], action)

    def spider_closed(self, spider, reason=None):
        """Close the storage; sum up the read and store errors not logged one by one."""
        self.storage.close_spider(spider)
        for (action, kind), count in sorted(self._io_errors.items()):
            if count > 1:
                logger.warning("The cache had %d %s errors %s in all; the first was logged",
                               count, action, kind)


def _where(storage, spider, request, fingerprint):
    path = getattr(storage, "path", None)
    if path is None:
        return type(storage).__name__
    return path(spider.name, request, fingerprint)


def _freshen(cached, response):
    """RFC 9111, 4.3.4: a stored response takes the header fields of the 304 that
    confirmed it (its 1xx warnings go, its 2xx ones stay)."""
    warnings = [warning for warning in cached.headers.getlist(b"Warning")
                if warning.split(None, 1)[0].startswith(b"2")]
    for name, values in response.headers.items():
        cached.headers.setlist(name, values)
    if warnings:
        cached.headers.setlist(b"Warning", warnings)
    else:
        cached.headers.pop(b"Warning", None)


def _twisted_download_errors():
    """The errors a failed download ends with that are not C{OSError}s."""
    from twisted.internet import error
    from twisted.web.client import ResponseFailed

    from tinyscrapy.exceptions import DownloadTimeoutError
    return (error.ConnectError, error.ConnectionLost, error.TimeoutError, ResponseFailed,
            DownloadTimeoutError)


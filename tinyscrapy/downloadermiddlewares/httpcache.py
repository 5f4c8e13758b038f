"""
L{HttpCacheMiddleware}: keep every response on disk, and answer the same request from there
the next time, as Scrapy's C{HttpCacheMiddleware} with its C{DummyPolicy} and filesystem
storage do. Off by default (C{HTTPCACHE_ENABLED}); for developing a spider against pages
already fetched once, or offline with C{HTTPCACHE_IGNORE_MISSING}.

Policy (Scrapy's "dummy" policy): every response whose status is not in
C{HTTPCACHE_IGNORE_HTTP_CODES} is stored; any stored one younger than
C{HTTPCACHE_EXPIRATION_SECS} (0: never too old) is served, without asking the server.
Requests whose scheme is in C{HTTPCACHE_IGNORE_SCHEMES}, or with C{meta["dont_cache"]},
pass by the cache both ways.

The middleware sits at 900 in C{DOWNLOADER_MIDDLEWARES_BASE}, nearest the downloader: its
C{process_request} runs last, and its C{process_response} first. So it stores responses as
they came off the wire (a 302 is stored as a 302, a 503 as a 503), and a cached response
goes back through every other middleware's C{process_response}, as a fresh one would: the
redirect middleware follows a cached 302, the cookies middleware reads its C{Set-Cookie}.

A cached response has C{"cached"} in C{response.flags}. Stats: C{httpcache/hit},
C{httpcache/miss}, C{httpcache/store}, C{httpcache/uncacheable} (an ignored status),
C{httpcache/ignore} (a miss dropped by C{HTTPCACHE_IGNORE_MISSING}), C{httpcache/corrupt},
C{httpcache/too_large} (an entry stored encoded that decodes past the download limits),
C{httpcache/read_error} and C{httpcache/store_error} (logged once per errno, summed up at
close).

Storage (L{FilesystemCacheStorage}, in L{tinyscrapy.extensions.httpcache}):
C{DIR/<spider name>/<fp[:2]>/<fp>}, one file per request fingerprint
(L{request_fingerprint} in 16 hex digits): a line of JSON (url, status, headers, the time
it was stored, the body's length), then the body as it is. A file that does not read back
as that (cut short, edited, from another program) is a miss, logged once with its URL and
removed; a file that cannot be read (permissions) is a miss, and kept.
The directory is made at start: one that cannot be is a L{UsageError}.

Files are read and written with plain blocking calls on the reactor thread, as Scrapy's
filesystem storage does. A body is at most C{DOWNLOAD_MAXSIZE} bytes and usually a page of
some tens of kilobytes, which a local disk writes in well under a millisecond; a cache on a
slow network disk would need a thread (C{deferToThread}) and is not supported.
"""

import logging
import os

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
    error_kind,
)
from tinyscrapy.responsetypes import response_for
from tinyscrapy.utils import request as _fingerprints
from tinyscrapy.utils.request import request_fingerprint

logger = logging.getLogger(__name__)

# the scheduler's default, compared by identity (request_fingerprint is patched in tests)
DEFAULT_FINGERPRINT = _fingerprints.request_fingerprint


def cache_dir(settings):
    """
    The directory of C{HTTPCACHE_DIR}: an absolute path as it is, a relative one under
    C{.tinyscrapy/} in the current directory (Scrapy uses C{.scrapy/}).
    """
    path = os.path.expanduser(settings.get("HTTPCACHE_DIR") or "httpcache")
    if os.path.isabs(path):
        return path
    return os.path.join(os.getcwd(), ".tinyscrapy", path)


class HttpCacheMiddleware:
    """
    Answer requests from the cache when it holds a fresh response; store the others.

    @ivar storage: the L{FilesystemCacheStorage}.
    """

    def __init__(self, settings, stats, clock):
        """
        @param clock: gives the time responses are stored at and aged against
            (C{seconds()}): the crawler's reactor, a C{task.Clock} in tests.
        """
        self.storage = FilesystemCacheStorage(cache_dir(settings), clock,
                                              settings.getfloat("HTTPCACHE_EXPIRATION_SECS"))
        self.ignore_codes = frozenset(
            int(code) for code in settings.getlist("HTTPCACHE_IGNORE_HTTP_CODES"))
        self.ignore_schemes = frozenset(
            scheme.lower() for scheme in settings.getlist("HTTPCACHE_IGNORE_SCHEMES"))
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
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise UsageError(f"HTTPCACHE_DIR {directory} cannot be a directory: "
                             f"{e.strerror or e}") from None
        middleware = cls(crawler.settings, crawler.stats, crawler.reactor)
        middleware.crawler = crawler
        crawler.signals.connect(middleware.spider_closed, signals.spider_closed)
        return middleware

    def process_request(self, request, spider=None):
        """
        @return: the cached L{HttpResponse}, or None to download C{request}.
        @raise NotCached: nothing cached and C{HTTPCACHE_IGNORE_MISSING} is on.
        """
        spider = spider or self.crawler.spider
        if not self._cacheable(request):
            return None
        fingerprint = self._fingerprint(request)
        try:
            response = self.storage.retrieve(spider.name, request, fingerprint)
            if response is not None and self.compression:
                response = self._decoded(response, request)
        except CorruptEntry as e:  # it read, but not as an entry: it will be written again
            self.stats.inc_value("httpcache/corrupt")
            logger.warning("Ignoring a corrupt cache entry for %r (%s): %s", request,
                           self.storage.path(spider.name, request, fingerprint), e)
            self.storage.remove(spider.name, request, fingerprint)
            response = None
        except UnusableEntry as e:  # too large for this crawl's limits: kept
            self.stats.inc_value("httpcache/too_large")
            logger.warning("Ignoring the cache entry for %r (%s): %s", request,
                           self.storage.path(spider.name, request, fingerprint), e)
            response = None
        except OSError as e:  # it could not be read (permissions, a disk error): kept
            self._io_error("read", request, e)
            response = None
        if response is not None:
            self.stats.inc_value("httpcache/hit")
            return response
        if self.ignore_missing:
            self.stats.inc_value("httpcache/ignore")
            raise NotCached(f"not in the cache (HTTPCACHE_IGNORE_MISSING): {request.url}")
        self.stats.inc_value("httpcache/miss")
        return None

    def process_response(self, request, response, spider=None):
        """Store C{response} unless it came from the cache or its status is ignored."""
        spider = spider or self.crawler.spider
        if "cached" in response.flags or not self._cacheable(request):
            return response
        if response.status in self.ignore_codes:
            self.stats.inc_value("httpcache/uncacheable")
            return response
        try:
            self.storage.store(spider.name, request, response, self._fingerprint(request))
        except OSError as e:  # a full disk or a read-only directory: the crawl goes on
            self._io_error("store", request, e)
        else:
            self.stats.inc_value("httpcache/store")
        return response

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

    def spider_closed(self, spider, reason):
        """Sum up the read and store errors that were not logged one by one."""
        for (action, kind), count in sorted(self._io_errors.items()):
            if count > 1:
                logger.warning("The cache had %d %s errors %s in all; the first was logged",
                               count, action, kind)

    def _cacheable(self, request):
        if request._meta and request._meta.get("dont_cache"):
            return False
        return request.url.partition(":")[0].lower() not in self.ignore_schemes

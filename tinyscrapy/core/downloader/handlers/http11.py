"""
L{HttpFetcher}: one HTTP transfer, on one persistent connection pool, safe to point at
the real web.

The stack, measured against a bare twisted C{Agent} (docs/downloader.md has the numbers):

    HttpFetcher.fetch        (here) the route, the headers, the timer
      Transfer               (below) timeouts, size limits, decoding, stats, errors
        treq.collect         streams the body into C{Transfer.collect}
      CrawlAgent             (L{tinyscrapy.core.downloader.handlers.pool}) an C{IAgent}:
                             endpoints cached per host, the pool key carries the TLS
                             policy, a hook when a request is sent
        CrawlPool            (L{tinyscrapy.core.downloader.handlers.pool}) twisted's
                             C{HTTPConnectionPool}: persistent, no automatic replays

treq stays the front door for bodies (C{treq.collect}: a collector that raises closes
the connection) and C{CrawlAgent} is an C{IAgent}, so C{treq.client.HTTPClient(agent)}
works on it too. The fetcher does not go through C{HTTPClient.request} itself: that call
parses the URL with hyperlink, wraps a cookie agent and twisted's C{GzipDecoder} for
every request (that decoder calls C{decompress()} with no C{max_length}: one 64 KiB read
of a compression bomb can inflate to tens of MiB before any limit is checked), and costs
more than the whole transfer on a fast site.

What the fetcher adds to twisted and treq, because a crawler meets servers that
misbehave:

    - the pool keeps as many idle connections per host as C{CONCURRENT_REQUESTS_PER_DOMAIN},
      closes idle ones after C{DOWNLOAD_IDLE_TIMEOUT}, and never replays a request on its
      own (C{retryAutomatically=False}): retrying is the retry middleware's job;
    - C{DOWNLOAD_TIMEOUT} covers the whole download (connect, headers, body): when it
      fires the connection is aborted, whatever phase it is in. C{DOWNLOAD_CONNECT_TIMEOUT}
      bounds the TCP connect alone;
    - C{DOWNLOAD_MAXSIZE} refuses a declared C{Content-Length} before reading the body, cuts
      any other body the moment it crosses the limit, and bounds the decoded bytes too,
      while they are decoded (L{tinyscrapy.downloadermiddlewares.httpcompression});
      C{DOWNLOAD_WARNSIZE} logs once;
    - TLS certificates are verified unless the crawl says otherwise
      (L{tinyscrapy.core.downloader.tls});
    - a bad URL or host is an errback (L{InvalidUrl}), never an exception out of C{fetch};
    - a request with C{meta["proxy"]} goes through
      L{tinyscrapy.core.downloader.handlers.tunnel.ProxyRouter}'s agent
      (a forward proxy for http, a CONNECT tunnel for https), on the same pool, with the
      same timeouts, limits and send hook;
    - host names are looked up once per crawl, not once per new connection, each
      lookup bounded by C{DNS_TIMEOUT} (L{tinyscrapy.resolver}; C{DNSCACHE_ENABLED},
      C{DNSCACHE_SIZE});
    - no cookies (the cookies middleware does that).

L{Transfer}: one download of L{tinyscrapy.core.downloader.handlers.http11.HttpFetcher}, from the
connection to the L{HttpResponse}: its whole-download timer, its size limits, its decoding, its
errors.

    cb_connected(connection)     the pool handed out a connection: the send hook
    cb_response(response)        status and headers: refuse a too-large declared body,
                                 send C{headers_received}, set up the bounded decoder
                                 (L{tinyscrapy.downloadermiddlewares.httpcompression})
      collect(chunk)             every read of the body (treq.collect): count, cut at
                                 C{DOWNLOAD_MAXSIZE}, decode, send C{bytes_received}
      cb_body(...)               the body is complete: the L{HttpResponse}
      eb_body(...)               a C{bytes_received} receiver raised L{StopDownload}, or a
                                 C{download_truncate} body crossed the limit: the partial
                                 L{HttpResponse}
    cb_done(outcome)             last: stop the timer, count the bytes, name the error,
                                 fire the caller's Deferred

C{time_out} (the timer), C{cancel} (the caller), the limits and L{StopDownload} end a
transfer the same way, through L{Transfer.abort}: the connection is closed and never goes
back to the pool. The two signals cost one dictionary lookup when nobody listens.
"""

import logging
import re
from dataclasses import dataclass

from twisted.internet.defer import CancelledError, Deferred, fail, succeed
from twisted.web.http_headers import Headers as TwistedHeaders
from twisted.web.iweb import UNKNOWN_LENGTH, IBodyProducer
from zope.interface import implementer

from tinyscrapy.core.downloader.handlers.pool import CrawlAgent, CrawlPool
from tinyscrapy.core.downloader.handlers.tunnel import ProxyRouter
from tinyscrapy.core.downloader.tls import https_policy, policy_key, tls_error
from tinyscrapy.downloadermiddlewares.httpcompression import body_decoder
from tinyscrapy.exceptions import (
    ContentDecodingError,
    DownloadTimeout,
    InvalidUrl,
    ResponseTooLarge,
    StopDownload,
)
from tinyscrapy.http.headers import Headers
from tinyscrapy.http.response import Response
from tinyscrapy.resolver import DnsCache
from tinyscrapy.responsetypes import response_for
from tinyscrapy.signals import bytes_received, headers_received

_METHOD = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


class HttpFetcher:
    """
    Fetch requests over a shared L{HTTPConnectionPool}.

    @ivar agent: the L{CrawlAgent} (an C{IAgent}; treq's C{HTTPClient} runs on it).
    @ivar pool: the L{CrawlPool}; L{close} empties it.
    @ivar dns: the L{tinyscrapy.resolver.DnsCache} its connections look host
        names up through.
    @ivar wire_bytes: body bytes received, as sent (compressed).
    @ivar decoded_bytes: body bytes after C{Content-Encoding} was decoded.
    """

    def __init__(self, reactor, settings, stats=None, on_sent=None):
        """
        @param stats: a stats collector for the byte counts, or None.
        @param on_sent: called with the L{tinyscrapy.http.Request} at the moment it goes out
            on the wire (the pool handed out a connection and the request is written now),
            so politeness delays can be timed from the real send. Not called for a
            request that never got a connection.
        """
        self.reactor = reactor
        self.stats = stats
        self.on_sent = on_sent
        self.signals = None  # the crawler's SignalBus, for headers_received, bytes_received
        self.timeout = settings.getfloat("DOWNLOAD_TIMEOUT")
        self.maxsize = settings.getint("DOWNLOAD_MAXSIZE")
        self.warnsize = settings.getint("DOWNLOAD_WARNSIZE")
        self.ratio = settings.getfloat("DOWNLOAD_MAXRATIO", 100.0)
        self.grace = settings.getint("DOWNLOAD_MAXRATIO_GRACE", 1 << 20)
        self.compression = settings.getbool("COMPRESSION_ENABLED", True)
        self.pool = CrawlPool(reactor)
        self.pool.maxPersistentPerHost = max(1, settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"))
        self.pool.cachedConnectionTimeout = settings.getfloat("DOWNLOAD_IDLE_TIMEOUT", 60.0)
        connect_timeout = settings.getfloat("DOWNLOAD_CONNECT_TIMEOUT") or self.timeout or 30
        policy = https_policy(settings)
        self.dns = DnsCache.from_settings(reactor, settings, stats)
        self.agent = CrawlAgent(reactor, self.pool, policy, policy_key(settings),
                                connect_timeout, dns=self.dns)
        # proxies: tinyscrapy.core.downloader.handlers.tunnel picks the agent for requests with
        # meta["proxy"]; sites reached through a tunnel are checked with the crawl's TLS policy too
        self.proxies = ProxyRouter(reactor, self.pool, connect_timeout, tls_policy=policy,
                                   dns=self.dns)
        self.wire_bytes = 0
        self.decoded_bytes = 0
        self._transfers = set()

    @classmethod
    def from_crawler(cls, crawler):
        """The crawl's settings and stats; sends reported to the crawl's slots
        (C{crawler.slots}), which time politeness delays from them."""
        slots = getattr(crawler, "slots", None)
        fetcher = cls(crawler.reactor, crawler.settings, stats=crawler.stats,
                      on_sent=slots.sent if slots is not None else None)
        fetcher.signals = crawler.signals
        return fetcher

    def download_request(self, request, spider=None):
        """Scrapy's download handler interface: L{fetch}."""
        return self.fetch(request, spider)

    def fetch(self, request, spider=None):
        """
        Download C{request}.

        @return: a Deferred that fires with an L{HttpResponse} (any status); it errbacks
            with L{InvalidUrl}, L{DownloadTimeout}, L{ResponseTooLarge} (or its
            L{DecompressionBomb}), L{ContentDecodingError}, L{CertificateError} /
            L{TlsError}, or the connection's own error (C{ConnectionRefusedError},
            C{ResponseFailed}, ...). Cancelling it aborts the transfer.
        """
        meta = request._meta
        try:
            target = self.agent.target(request.url)
            proxy_agent, headers = self._route(request, target, meta)
        except (InvalidUrl, ValueError) as e:  # a bad URL, header or proxy URL
            return fail(e)
        if not _METHOD.fullmatch(request.method):
            return fail(ValueError(f"bad HTTP method {request.method!r} for {request.url}"))
        transfer = Transfer(self, request, meta)
        self._transfers.add(transfer)
        # the caller's Deferred: cancelling it aborts the transfer and errbacks at once
        # with CancelledError (whatever twisted makes of the abort underneath). It and the
        # timer exist before anything is sent: a connection can fail synchronously.
        result = transfer.result = Deferred(transfer.cancel)
        timeout = meta.get("download_timeout", self.timeout) if meta else self.timeout
        if timeout:
            transfer.timer = self.reactor.callLater(timeout, transfer.time_out, timeout)
        body = _BytesProducer(request.body) if request.body else None
        method = request.method.encode("ascii")
        if proxy_agent is None:
            d = self.agent.send(target, self.agent.path(request.url, target), method,
                                headers, body, transfer.cb_connected)
        else:
            d = self._send_through(proxy_agent, request, method, headers, body, transfer)
        transfer.deferred = d
        d.addCallback(transfer.cb_response)
        d.addBoth(transfer.cb_done)
        return result

    def _route(self, request, target, meta):
        """
        The agent for C{request} (None: L{CrawlAgent}; else a proxy's) and its headers as twisted
        sends them, with C{Host} added unless the request has its own (the C{Accept-Encoding} is
        the compression middleware's). A C{Proxy-Authorization} header only ever reaches a proxy.

        @raise InvalidUrl: a header twisted refuses.
        @raise ValueError: C{meta["proxy"]} is not a proxy URL.
        """
        items = request.header_items()
        agent = None
        if (meta and meta.get("proxy")) or any(name == b"Proxy-Authorization"
                                               for name, _ in items):
            agent, routed = self.proxies.route(request, dict(items) or None)
            items = routed.items() if routed else ()
        headers = TwistedHeaders()
        try:
            for name, values in items:
                headers.setRawHeaders(name, values)
        except (ValueError, TypeError) as e:
            raise InvalidUrl(f"bad request header for {request.url}: {e}") from None
        if not headers.hasHeader(b"host"):
            headers.setRawHeaders(b"Host", [target.host_header])
        return agent, headers

    def _send_through(self, agent, request, method, headers, body, transfer):
        """
        Send through a proxy's agent (twisted's C{IAgent.request}). The pool reports the
        connection it hands out for this request to C{transfer} (L{CrawlPool.starting}),
        so the send hook and the timeouts work as on a direct request.
        """
        url = request.url.partition("#")[0].encode("ascii")
        self.pool.starting = transfer
        try:
            return agent.request(method, url, headers, body)
        except Exception:
            return fail()
        finally:
            self.pool.starting = None

    def close(self):
        """
        Abort the transfers still running, give up the host name lookups still running,
        and close every pooled connection.

        @return: a Deferred fired once the pooled connections are closed.
        """
        for transfer in list(self._transfers):
            transfer.abort()
        self.dns.close()
        return self.pool.closeCachedConnections()

    def statistics(self):
        """@return: a L{FetcherStatistics}."""
        idle = sum(len(connections) for connections in self.pool._connections.values())
        return FetcherStatistics(len(self._transfers), idle, self.wire_bytes,
                                 self.decoded_bytes)


@dataclass(frozen=True)
class FetcherStatistics:
    """
    What the fetcher is doing.

    @ivar transfers: downloads running now.
    @ivar idle_connections: connections waiting in the pool.
    @ivar wire_bytes: body bytes received so far, as sent (compressed).
    @ivar decoded_bytes: body bytes after decoding.
    """

    transfers: int
    idle_connections: int
    wire_bytes: int
    decoded_bytes: int


@implementer(IBodyProducer)
class _BytesProducer:
    """A request body already in memory, written in one go."""

    def __init__(self, body):
        self.body = body
        self.length = len(body)

    def startProducing(self, consumer):
        consumer.write(self.body)
        return succeed(None)

    def stopProducing(self):
        pass

    def pauseProducing(self):
        pass

    def resumeProducing(self):
        pass

# the fetcher's log, as before the transfer had a module of its own
logger = logging.getLogger("tinyscrapy.core.downloader.handlers.http11")


class HeaderLineTooLong(Exception):
    """A status or header line of the response is longer than twisted reads (not retried:
    the same server sends the same line again)."""


class _Truncated(Exception):
    """The body crossed the limit of a transfer that keeps its beginning instead."""


def _line_too_long(parser, line):
    """
    twisted's C{LineReceiver.lineLengthExceeded} for the HTTP client's parser. twisted only
    closes the connection, and the request fails as "Connection was closed cleanly" (so it
    was retried as a lost connection); raising here makes it fail with the reason instead
    (twisted's client protocol closes the connection and wraps this in its
    C{ResponseFailed} or C{ResponseNeverReceived}; L{Transfer.cb_done} unwraps it).
    """
    raise HeaderLineTooLong(f"a response status or header line is longer than "
                            f"{parser.MAX_LENGTH} bytes (twisted's limit)")


def _report_long_lines():
    from twisted.web._newclient import HTTPClientParser
    HTTPClientParser.lineLengthExceeded = _line_too_long


_report_long_lines()


class Transfer:
    """
    One download: its connection, its timer, its body.

    @ivar fetcher: the L{tinyscrapy.core.downloader.handlers.http11.HttpFetcher} it belongs to: its
        limits, C{stats} and C{on_sent} are read here, its byte counts and C{_transfers}
        kept up to date.
    @ivar result: the caller's Deferred (made by the fetcher; L{cancel} is its canceller).
    @ivar deferred: the agent's Deferred: the response, then the body.
    @ivar connection: the C{HTTP11ClientProtocol} once the pool handed one out.
    """

    __slots__ = ("fetcher", "request", "maxsize", "warnsize", "deferred", "result",
                 "connection", "timer", "timed_out", "decoder", "chunks", "wire", "size",
                 "failed", "warned", "stopped", "truncate")

    def __init__(self, fetcher, request, meta):
        self.fetcher = fetcher
        self.request = request
        if meta:
            self.maxsize = meta.get("download_maxsize", fetcher.maxsize)
            self.warnsize = meta.get("download_warnsize", fetcher.warnsize)
            # keep the first maxsize bytes instead of failing (robots.txt, as Google reads it)
            self.truncate = meta.get("download_truncate", False)
        else:
            self.maxsize = fetcher.maxsize
            self.warnsize = fetcher.warnsize
            self.truncate = False
        self.deferred = self.result = self.connection = self.timer = self.timed_out = None
        self.decoder = None
        self.chunks = []
        self.wire = self.size = 0
        self.failed = self.warned = False
        self.stopped = None

    def cb_connected(self, connection):
        """The pool handed out C{connection}; the request is written right after.
        @return: C{connection}."""
        self.connection = connection
        on_sent = self.fetcher.on_sent
        if on_sent is not None:
            try:
                on_sent(self.request)
            except Exception:  # a broken hook must not lose the connection
                logger.exception("on_sent hook failed for %r", self.request)
        return connection

    def cb_response(self, response):
        """
        The status and headers arrived: refuse a too-large declared body, read the rest.

        @return: a Deferred firing with the L{HttpResponse} once the body is read.
        """
        declared = response.length
        if declared is not UNKNOWN_LENGTH:
            if self.maxsize and declared > self.maxsize and not self.truncate:
                self.abort()
                raise ResponseTooLarge(
                    f"Content-Length {declared} is larger than the limit {self.maxsize}")
            if self.warnsize and declared > self.warnsize:
                self._warn(declared, "declares")
        headers = Headers.from_raw(response.headers.getAllRawHeaders())
        signals = self.fetcher.signals
        if signals is not None and signals.listened(headers_received):
            length = -1 if declared is UNKNOWN_LENGTH else declared
            stop = _send(signals, headers_received, self.request, headers=headers,
                         body_length=length)
            if stop is not None:
                self.abort()
                return self._stopped(stop, response.code, headers)
        encoding = headers.get(b"Content-Encoding") if self.fetcher.compression else None
        if encoding:
            fetcher = self.fetcher
            try:
                self.decoder = body_decoder(encoding.decode("latin-1"), self.maxsize,
                                            fetcher.ratio, fetcher.grace)
            except ContentDecodingError:
                self.abort()
                raise
            if self.decoder is not None:
                del headers[b"Content-Encoding"]
        from treq import collect
        d = collect(response, self.collect)
        d.addCallbacks(self.cb_body, self.eb_body, callbackArgs=(response.code, headers),
                       errbackArgs=(response.code, headers))
        return d

    def collect(self, data):
        """
        One chunk of the body (treq calls this for every read).

        @raise ResponseTooLarge: the body, or its decoded form, crossed the limit; the
            connection is aborted at once and treq errbacks with this.
        """
        if self.failed:
            return
        try:
            self.wire += len(data)
            if self.decoder is None:
                self.size += len(data)
                if self.maxsize and self.size > self.maxsize:
                    if self.truncate:
                        self.chunks.append(data)  # cut to maxsize in _eb_truncated
                    raise ResponseTooLarge(
                        f"body is larger than the limit {self.maxsize} "
                        f"(cut at {self.size} bytes)")
                self.chunks.append(data)
            else:
                pieces = self.decoder.feed(data)
                self.size = self.decoder.size
                self.chunks.extend(pieces)
            signals = self.fetcher.signals
            if signals is not None and signals.listened(bytes_received):
                self.stopped = _send(signals, bytes_received, self.request, data=data)
                if self.stopped is not None:
                    raise self.stopped
        except ResponseTooLarge:
            self.failed = True
            self.abort()
            if self.truncate:  # what was read so far is the response: at most maxsize
                raise _Truncated() from None
            raise
        except Exception:
            self.failed = True
            self.abort()
            raise
        if self.warnsize and self.size > self.warnsize and not self.warned:
            self._warn(self.size, "has")

    def cb_body(self, _, status, headers):
        """The body is complete: build the L{HttpResponse}."""
        if self.decoder is not None:
            self.chunks.extend(self.decoder.finish())
        body = b"".join(self.chunks) if len(self.chunks) != 1 else self.chunks[0]
        self.chunks = None
        self.size = len(body)
        stats = self.fetcher.stats
        if stats is not None and self.decoder is not None:
            stats.inc_value("httpcompression/response_count")
            stats.inc_value("httpcompression/response_bytes", len(body))
        return response_for(_response_url(self.request), status, headers, body, self.request)

    def eb_body(self, failure, status, headers):
        """
        Reading the body failed: pass it on, unless a receiver stopped the download (the
        partial response), or the body crossed the limit of a transfer that keeps its
        beginning (C{meta["download_truncate"]}: the first C{maxsize} bytes).
        """
        if self.stopped is not None and failure.value is self.stopped:
            return self._stopped(self.stopped, status, headers)
        if self.truncate and failure.check(_Truncated):
            return self._truncated(status, headers)
        return failure

    def _stopped(self, stop, status, headers):
        """
        A receiver raised L{StopDownload}: the response as received so far.

        @return: the partial L{HttpResponse} when C{stop.fail} is False.
        @raise StopDownload: C{stop}, with the partial response, when C{stop.fail} is True.
        """
        body = b"".join(self.chunks or ())
        response = response_for(_response_url(self.request), status, headers, body, self.request,
                                flags=["download_stopped"])
        if stop.fail:
            stop.response = response
            raise stop
        return response

    def _truncated(self, status, headers):
        """C{meta["download_truncate"]}: the body was cut at the limit; the response is
        its first C{maxsize} bytes (or fewer, decoded)."""
        if self.decoder is None and self.chunks:
            kept = b"".join(self.chunks)[:self.maxsize]
            self.chunks = [kept]
        self.decoder = None
        return self.cb_body(None, status, headers)

    def _warn(self, size, verb):
        self.warned = True
        logger.warning("%r %s %d body bytes, more than DOWNLOAD_WARNSIZE (%d)",
                       self.request, verb, size, self.warnsize)
        if self.fetcher.stats is not None:
            self.fetcher.stats.inc_value("downloader/response_warnsize_count")

    def time_out(self, timeout):
        """The whole-download timer fired: abort the transfer, whatever its phase."""
        self.timer = None
        self.timed_out = DownloadTimeout(f"took longer than {timeout} seconds")
        self.abort()

    def abort(self):
        """Close the connection now (or stop connecting); the Deferred errbacks."""
        connection = self.connection
        if connection is not None:
            connection.aborted_by_crawler = True  # never back in the pool (CrawlPool)
            transport = connection.transport
            if transport is not None:
                transport.abortConnection()
        elif self.deferred is not None:
            # not "if not called": once the host is looked up, the Deferred has fired and
            # waits on the connection attempts; cancel() reaches them (and does nothing to
            # a Deferred that is over)
            self.deferred.cancel()

    def cancel(self, result):
        """The caller cancelled: errback with CancelledError, then abort (what twisted
        makes of the abort underneath is of no interest then)."""
        result.errback(CancelledError())
        self.abort()

    def cb_done(self, outcome):
        """
        Last in the chain: stop the timer, forget the connection, name the error, and
        fire the caller's Deferred (unless it was cancelled).
        """
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.connection = None
        self.chunks = None
        fetcher = self.fetcher
        fetcher._transfers.discard(self)
        # bytes received, failed downloads included (a bomb's wire bytes were received)
        fetcher.wire_bytes += self.wire
        fetcher.decoded_bytes += self.size
        if fetcher.stats is not None and self.wire:
            fetcher.stats.inc_value("downloader/response_bytes", self.wire)
            fetcher.stats.inc_value("downloader/response_bytes_decoded", self.size)
        result = self.result
        if result.called:  # cancelled: the outcome of the abort is of no interest
            return None
        if isinstance(outcome, Response):
            result.callback(outcome)
        elif self.timed_out is not None:
            result.errback(self.timed_out)
        else:
            result.errback(tls_error(outcome) or _line_error(outcome) or outcome)
        return None


def _send(signals, signal, request, **kwargs):
    """Send C{signal} about C{request}. @return: the L{StopDownload} a receiver raised, or
    None."""
    spider = getattr(signals.sender, "spider", None)
    for _, result in signals.send(signal, request=request, spider=spider, **kwargs):
        if isinstance(result, StopDownload):
            return result
    return None


def _line_error(failure):
    """The L{HeaderLineTooLong} inside twisted's C{ResponseFailed} (and its kin), or None."""
    for reason in getattr(failure.value, "reasons", ()):
        if reason.check(HeaderLineTooLong):
            return reason
    return None


def _response_url(request):
    """A response's URL: the request's without its fragment, which never left the client
    (as Scrapy's download handlers make it)."""
    url = request.url
    return url.partition("#")[0] if "#" in url else url

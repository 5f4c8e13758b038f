"""
L{HttpFetcher}: the C{http} and C{https} download handler (Scrapy's
C{HTTP11DownloadHandler}): treq's C{HTTPClient} over the crawl's own agent and connection
pool, safe to point at the real web.

The stack (docs/downloader.md has the measurements; docs/twisted/agents.md the why):

    HttpFetcher.fetch        (here) the route, the headers, the timer
      treq HTTPClient        treq's front door: C{request(...)} with a cookie jar that keeps
                             nothing and C{allow_redirects=False} (cookies and redirects
                             are the middlewares' jobs); C{unbuffered=True}
        CrawlAgent           (L{tinyscrapy.core.downloader.handlers.pool}) an C{IAgent}:
                             endpoints cached per origin, the pool key carries the TLS
                             policy (a proxy's agent instead, see
                             L{tinyscrapy.core.downloader.handlers.tunnel})
          CrawlPool          twisted's C{HTTPConnectionPool}: persistent, no automatic
                             replays; it hands each connection to the L{Transfer} first
            Transfer         (below) stands in for the connection: the request's own
                             C{Accept-Encoding}, the status check, C{Content-Encoding}
                             taken out of treq's sight, one replay on a stale connection
      Transfer.collect       the body, through C{treq.collect}: size limits, the bounded
                             decoders (L{tinyscrapy.downloadermiddlewares.httpcompression})

treq's C{HTTPClient.request} wraps twisted's C{CookieAgent} and C{ContentDecoderAgent}
around the agent on every request. Neither may act: the jar the fetcher gives it keeps no
cookie, and the transfer puts back the request's own C{Accept-Encoding} (the one
L{tinyscrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware} set, or none)
where treq added C{gzip}, and hides the response's C{Content-Encoding} from treq's
C{GzipDecoder}, which would inflate a compression bomb with no bound (C{decompress()} with
no C{max_length}). The URL goes to treq as a L{_SentURL}: treq would otherwise parse and
re-encode it with hyperlink.

What the fetcher adds to twisted and treq, because a crawler meets servers that
misbehave:

    - the pool keeps as many idle connections per host as C{CONCURRENT_REQUESTS_PER_DOMAIN},
      closes idle ones after C{DOWNLOAD_IDLE_TIMEOUT}, never reuses a connection the server
      said it closes (C{Connection: close}, an HTTP/1.0 answer), and never replays a
      request on its own; the transfer replays an idempotent request once, on a new
      connection, when a reused one had been closed by the server before any byte of the
      answer came (not a retry: C{downloader/replayed_count});
    - C{DOWNLOAD_TIMEOUT} covers the whole download (connect, headers, body): when it
      fires the connection is aborted, whatever phase it is in. C{DOWNLOAD_CONNECT_TIMEOUT}
      bounds the TCP connect alone;
    - C{DOWNLOAD_MAXSIZE} refuses a declared C{Content-Length} before reading the body, cuts
      any other body the moment it crosses the limit, and bounds the decoded bytes too,
      while they are decoded; C{DOWNLOAD_WARNSIZE} logs once;
    - a status that is not three digits (twisted's parser takes any integer) is
      L{BadStatusCode}, and a status or header line longer than twisted reads is
      L{HeaderLineTooLong}, not a lost connection (neither is retried);
    - TLS certificates are verified unless the crawl says otherwise
      (L{tinyscrapy.core.downloader.tls});
    - a bad URL or host is an errback (L{InvalidUrl}), never an exception out of C{fetch};
    - a request with C{meta["proxy"]} goes through
      L{tinyscrapy.core.downloader.handlers.tunnel.ProxyRouter}'s agent (a forward proxy
      for http, a CONNECT tunnel for https), on the same pool, with the same timeouts,
      limits and send hook;
    - after a redirect to another origin, C{Authorization}, C{Cookie} and
      C{Proxy-Authorization} go only where the middlewares that own them put them for
      this URL (L{credentials_for});
    - host names are looked up once per crawl, not once per new connection, each
      lookup bounded by C{DNS_TIMEOUT} (L{tinyscrapy.resolver}; C{DNSCACHE_ENABLED},
      C{DNSCACHE_SIZE}).

L{Transfer}: one download, from the connection to the L{HttpResponse}: its whole-download
timer, its size limits, its decoding, its errors.

    cb_connected(connection)     the pool handed out a connection: the send hook; the
                                 transfer stands in for the connection
      request(request)           the agent writes the request: the request's own
                                 C{Accept-Encoding}, then the connection's C{request}
        cb_head(response)        status and headers: the status checked, the
                                 C{Content-Encoding} kept here
        eb_exchange(failure)     no answer: a long header line named, or one replay
    cb_response(response)        (after treq) refuse a too-large declared body, send
                                 C{headers_received}, set up the bounded decoder
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
from http.cookiejar import CookieJar

from hyperlink import EncodedURL
from twisted.internet.defer import CancelledError, Deferred, fail, succeed
from twisted.python.failure import Failure

# RequestNotSent is exported by no public module of twisted.web (twisted.web.client only
# imports it)
from twisted.web._newclient import RequestNotSent
from twisted.web.client import ResponseFailed, ResponseNeverReceived

# twisted names the body cut short (fewer bytes than Content-Length, a chunked body that
# never ended) only with this private class, inside the public ResponseFailed
from twisted.web.http import _DataLoss
from twisted.web.http_headers import Headers as TwistedHeaders
from twisted.web.iweb import UNKNOWN_LENGTH, IBodyProducer
from zope.interface import implementer

from tinyscrapy.core.downloader.handlers.base import BaseDownloadHandler
from tinyscrapy.core.downloader.handlers.pool import MAX_LINE, CrawlAgent, CrawlPool
from tinyscrapy.core.downloader.handlers.tunnel import ProxyRouter
from tinyscrapy.core.downloader.tls import https_policy, policy_key, tls_error
from tinyscrapy.downloadermiddlewares.httpcompression import body_decoder
from tinyscrapy.exceptions import (
    ContentDecodingError,
    DownloadTimeout,
    InvalidUrl,
    ResponseDataLossError,
    ResponseTooLarge,
    StopDownload,
    TunnelError,  # noqa: F401 - Scrapy keeps its name in this module
)
from tinyscrapy.http.headers import Headers
from tinyscrapy.http.response import Response
from tinyscrapy.resolver import DnsCache
from tinyscrapy.responsetypes import response_for
from tinyscrapy.signals import bytes_received, headers_received
from tinyscrapy.utils.request import left_its_origin
from tinyscrapy.utils.url import url_origin

logger = logging.getLogger(__name__)

_METHOD = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# RFC 9110, 9.2.2: a request of these methods may be sent again as if it were sent once
IDEMPOTENT = frozenset((b"GET", b"HEAD", b"OPTIONS", b"TRACE", b"PUT", b"DELETE"))
CREDENTIAL_HEADERS = (b"Authorization", b"Cookie", b"Proxy-Authorization")


class HeaderLineTooLong(Exception):
    """A status or header line of the response is longer than twisted reads (not retried:
    the same server sends the same line again)."""


class BadStatusCode(Exception):
    """The response's status is not three digits (twisted's parser takes any integer:
    C{-200}, C{99999999999999999999}); not retried."""


class _Truncated(Exception):
    """The body crossed the limit of a transfer that keeps its beginning instead."""


class _NoCookies(CookieJar):
    """The jar treq's C{HTTPClient} gets: it keeps nothing and sends nothing (cookies are
    L{tinyscrapy.downloadermiddlewares.cookies.CookiesMiddleware}'s)."""

    def set_cookie(self, cookie):
        pass

    def set_cookie_if_ok(self, cookie, request):
        pass

    def add_cookie_header(self, request):
        pass

    def extract_cookies(self, response, request):
        pass

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


class _SentURL(EncodedURL):
    """
    A request's URL as treq's C{HTTPClient.request} sends it: that method renders a
    hyperlink URL with C{to_uri().to_text()}, and parses a text URL into one first, which
    re-encodes it (an empty query's C{?} dropped, C{|} percent-encoded, an IPv6 host
    refused by IDNA) and costs some 40 microseconds a request. The fetcher's URLs are
    checked already (L{CrawlAgent.target}: percent-encoded ASCII), so this one is its own
    URI and renders as the request's URL, unchanged; nothing else of hyperlink's URL is
    used by treq without C{params}.
    """

    def __init__(self, text):  # hyperlink's parse is what this class avoids
        self._sent = text

    def to_uri(self):
        return self

    def to_text(self, with_password=False):
        return self._sent


@implementer(IBodyProducer)
class _BytesProducer:
    """A request body already in memory, written in one go (again, on a replay)."""

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


class HttpFetcher:
    """
    Fetch requests through treq's C{HTTPClient} over a shared L{CrawlPool}.

    @ivar agent: the L{CrawlAgent} (an C{IAgent}).
    @ivar client: treq's C{HTTPClient} over it.
    @ivar pool: the L{CrawlPool}; L{close} empties it.
    @ivar dns: the L{tinyscrapy.resolver.DnsCache} its connections look host
        names up through.
    @ivar wire_bytes: body bytes received, as sent (compressed).
    @ivar decoded_bytes: body bytes after C{Content-Encoding} was decoded.
    """

    lazy = False  # Scrapy's handler attribute: built when the crawl starts

    def __init__(self, reactor, settings, stats=None, on_sent=None):
        """
        @param stats: a stats collector for the byte counts, or None.
        @param on_sent: called with the L{tinyscrapy.http.Request} at the moment it goes out
            on the wire (the pool handed out a connection and the request is written now),
            so politeness delays can be timed from the real send. Not called for a
            request that never got a connection.
        """
        from treq.client import HTTPClient
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
        self.fail_on_dataloss = settings.getbool("DOWNLOAD_FAIL_ON_DATALOSS", True)
        self.pool = CrawlPool(reactor)
        self.pool.maxPersistentPerHost = max(1, settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"))
        self.pool.cachedConnectionTimeout = settings.getfloat("DOWNLOAD_IDLE_TIMEOUT", 60.0)
        connect_timeout = settings.getfloat("DOWNLOAD_CONNECT_TIMEOUT") or self.timeout or 30
        policy = https_policy(settings)
        self.dns = DnsCache.from_settings(reactor, settings, stats)
        self.agent = CrawlAgent(reactor, self.pool, policy, policy_key(settings),
                                connect_timeout, dns=self.dns)
        self.jar = _NoCookies()
        self._client_class = HTTPClient
        self.client = self._client(self.agent)
        self._clients = {}  # a proxy's agent -> treq's HTTPClient over it
        # proxies: tinyscrapy.core.downloader.handlers.tunnel picks the agent for requests with
        # meta["proxy"]; sites reached through a tunnel are checked with the crawl's TLS policy too
        self.proxies = ProxyRouter(reactor, self.pool, connect_timeout, tls_policy=policy,
                                   dns=self.dns)
        self.wire_bytes = 0
        self.decoded_bytes = 0
        self._transfers = set()

    def _client(self, agent):
        return self._client_class(agent, cookiejar=self.jar,
                                  data_to_body_producer=_BytesProducer)

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
        """Scrapy's download handler interface: L{fetch}. The Deferred it returns can be
        awaited, as Scrapy 2.19's coroutine handlers are."""
        return self.fetch(request, spider)

    def fetch(self, request, spider=None):
        """
        Download C{request}.

        @return: a Deferred that fires with an L{HttpResponse} (any status); it errbacks
            with L{InvalidUrl}, L{DownloadTimeout}, L{ResponseTooLarge} (or its
            L{DecompressionBomb}), L{ContentDecodingError}, L{CertificateError} /
            L{TlsError}, L{HeaderLineTooLong}, L{BadStatusCode}, or the connection's own
            error (C{ConnectionRefusedError}, C{ResponseFailed}, ...). Cancelling it
            aborts the transfer.
        """
        meta = request._meta
        url = request.url
        try:
            target = self.agent.target(url)
            client, headers = self._route(request, target, meta)
        except (InvalidUrl, ValueError) as e:  # a bad URL, header or proxy URL
            return fail(e)
        if not _METHOD.fullmatch(request.method):
            return fail(ValueError(f"bad HTTP method {request.method!r} for {url}"))
        transfer = Transfer(self, request, meta)
        transfer.accept_encoding = headers.getRawHeaders(b"accept-encoding")
        self._transfers.add(transfer)
        # the caller's Deferred: cancelling it aborts the transfer and errbacks at once
        # with CancelledError (whatever twisted makes of the abort underneath). It and the
        # timer exist before anything is sent: a connection can fail synchronously.
        result = transfer.result = Deferred(transfer.cancel)
        timeout = meta.get("download_timeout", self.timeout) if meta else self.timeout
        if timeout:
            transfer.timer = self.reactor.callLater(timeout, transfer.time_out, timeout)
        if "#" in url:  # the fragment never leaves the client
            url = url.partition("#")[0]
        # treq reaches the pool synchronously: the connection it hands out is this transfer's
        self.pool.starting = transfer
        try:
            d = client.request(request.method, _SentURL(url), headers=headers,
                               data=request.body or None, cookies=self.jar,
                               allow_redirects=False, unbuffered=True, reactor=self.reactor)
        except Exception:  # an agent that raises instead of failing its Deferred
            d = fail()
        finally:
            self.pool.starting = None
        transfer.deferred = d
        d.addCallback(transfer.cb_response)
        d.addBoth(transfer.cb_done)
        return result

    def _route(self, request, target, meta):
        """
        treq's client for C{request} (over L{CrawlAgent}, or a proxy's agent) and its
        headers as twisted sends them, with C{Host} added unless the request has its own
        (the C{Accept-Encoding} is the compression middleware's). A C{Proxy-Authorization}
        header only ever reaches a proxy; after a redirect to another origin, credentials
        only go where their middleware put them for this URL (L{credentials_for}).

        @raise InvalidUrl: a header twisted refuses.
        @raise ValueError: C{meta["proxy"]} is not a proxy URL.
        """
        items = request.header_items()
        if meta and "redirect_urls" in meta:
            items = credentials_for(request, items)
        client = self.client
        if (meta and meta.get("proxy")) or _has_proxy_authorization(items):
            try:
                agent, routed = self.proxies.route(request, dict(items) or None)
            except ValueError as e:  # say which proxy (its credentials hidden) and where to
                from tinyscrapy.utils.log import redact_url
                proxy = redact_url(str(meta.get("proxy"))) if meta else None
                raise ValueError(f"bad proxy {proxy} for {request.url}: {e}") from None
            items = routed.items() if routed else ()
            if agent is not None:
                client = self._clients.get(agent)
                if client is None:
                    client = self._clients[agent] = self._client(agent)
        headers = TwistedHeaders()
        try:
            for name, values in items:
                headers.setRawHeaders(name, values)
        except (ValueError, TypeError) as e:
            raise InvalidUrl(f"bad request header for {request.url}: {e}") from None
        if not headers.hasHeader(b"host"):
            headers.setRawHeaders(b"Host", [target.host_header])
        return client, headers

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
        return FetcherStatistics(len(self._transfers), self.pool.idle(), self.wire_bytes,
                                 self.decoded_bytes)


class HTTP11DownloadHandler(HttpFetcher, BaseDownloadHandler):
    """
    Scrapy's name for the C{http} and C{https} handler (C{DOWNLOAD_HANDLERS_BASE} names
    it), with Scrapy's constructor: L{HttpFetcher} built for C{crawler}.
    """

    def __init__(self, crawler):
        BaseDownloadHandler.__init__(self, crawler)
        slots = getattr(crawler, "slots", None)
        HttpFetcher.__init__(self, crawler.reactor, crawler.settings, stats=crawler.stats,
                             on_sent=slots.sent if slots is not None else None)
        self.signals = crawler.signals

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)


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


def credentials_for(request, items):
    """
    The headers of C{request}, a hop of a redirect chain, less the credentials not meant
    for its origin: when the hop's origin is not the chain's first, C{Authorization} stays
    only if L{tinyscrapy.downloadermiddlewares.httpauth.HttpAuthMiddleware} set it for this
    origin, C{Cookie} only if it is what the cookie jar holds for this URL, and
    C{Proxy-Authorization} only if L{tinyscrapy.downloadermiddlewares.httpproxy} set it for
    the request's proxy. Whoever added the others (the spider, C{DEFAULT_REQUEST_HEADERS},
    a middleware), they stay behind.

    @param items: C{(name, values)} pairs, title-cased bytes names.
    @return: the pairs to send.
    """
    if not left_its_origin(request):
        return items
    meta = request._meta
    origin = url_origin(request.url)
    return [(name, values) for name, values in items
            if name not in CREDENTIAL_HEADERS or _meant_for(name, values, meta, origin)]


def _meant_for(name, values, meta, origin):
    """Whether the credential header C{name} was set for C{origin} by its middleware."""
    if name == b"Authorization":
        return meta.get("_auth_origin") == origin
    if name == b"Cookie":
        jar = meta.get("_jar_cookie")
        return jar is not None and [jar.encode("latin-1")] == list(values)
    return meta.get("proxy") is not None and meta.get("_auth_proxy") == meta.get("proxy")


class Transfer:
    """
    One download: its connection, its timer, its body.

    @ivar crawl_request: the L{tinyscrapy.http.Request} it downloads.
    @ivar fetcher: the L{HttpFetcher} it belongs to: its limits, C{stats} and C{on_sent}
        are read here, its byte counts and C{_transfers} kept up to date.
    @ivar result: the caller's Deferred (made by the fetcher; L{cancel} is its canceller).
    @ivar deferred: treq's Deferred: the response, then the body.
    @ivar connection: the L{CrawlProtocol} once the pool handed one out (None again while
        a replay connects).
    @ivar accept_encoding: the request's own C{Accept-Encoding} values, or None.
    @ivar encoding: the response's C{Content-Encoding} values, hidden from treq.
    """

    __slots__ = ("fetcher", "crawl_request", "maxsize", "warnsize", "deferred", "result",
                 "connection", "timer", "timed_out", "decoder", "chunks", "wire", "size",
                 "failed", "warned", "stopped", "truncate", "accept_encoding", "encoding",
                 "key", "endpoint", "replayed", "fail_on_dataloss")

    def __init__(self, fetcher, request, meta):
        self.fetcher = fetcher
        self.crawl_request = request
        if meta:
            self.maxsize = meta.get("download_maxsize", fetcher.maxsize)
            self.warnsize = meta.get("download_warnsize", fetcher.warnsize)
            # keep the first maxsize bytes instead of failing (robots.txt, as Google reads it)
            self.truncate = meta.get("download_truncate", False)
            self.fail_on_dataloss = meta.get("download_fail_on_dataloss",
                                             fetcher.fail_on_dataloss)
        else:
            self.maxsize = fetcher.maxsize
            self.warnsize = fetcher.warnsize
            self.truncate = False
            self.fail_on_dataloss = fetcher.fail_on_dataloss
        self.deferred = self.result = self.connection = self.timer = self.timed_out = None
        self.decoder = self.accept_encoding = self.encoding = None
        self.key = self.endpoint = None
        self.chunks = []
        self.wire = self.size = 0
        self.failed = self.warned = self.replayed = False
        self.stopped = None

    # on the connection, below treq

    def cb_connected(self, connection, key, endpoint):
        """
        The pool handed out C{connection} (a L{CrawlProtocol}) for this transfer; the
        request is written right after, through L{request}.

        @return: this transfer, which the agent takes for the connection.
        """
        self.connection = connection
        self.key, self.endpoint = key, endpoint
        on_sent = self.fetcher.on_sent
        if on_sent is not None:
            try:
                on_sent(self.crawl_request)
            except Exception:  # a broken hook must not lose the connection
                logger.exception("on_sent hook failed for %r", self.crawl_request)
        return self

    def request(self, request):
        """
        The agent writes C{request} (twisted's) on the connection: with the request's own
        C{Accept-Encoding} in place of the one treq's C{ContentDecoderAgent} added.

        @return: the connection's Deferred of the C{IResponse}, checked by L{cb_head};
            on a stale connection it waits for the replay (L{eb_exchange}).
        """
        headers = request.headers
        if self.accept_encoding:
            headers.setRawHeaders(b"Accept-Encoding", self.accept_encoding)
        else:
            headers.removeHeader(b"Accept-Encoding")
        d = self.connection.request(request, caller_notes_head=True)
        d.addCallbacks(self.cb_head, self.eb_exchange, errbackArgs=(request,))
        return d

    def cb_head(self, response):
        """
        The status and headers arrived (before treq sees them): refuse a status that is
        not three digits; keep the C{Content-Encoding} here, out of the sight of treq's
        decoder (L{cb_response} decodes, bounded).

        @raise BadStatusCode: the status is not three digits.
        """
        self.connection.head(response)
        code = response.code
        if not 100 <= code <= 999:
            self.abort()
            raise BadStatusCode(f"the response's status {code} is not three digits")
        headers = response.headers
        encoding = headers.getRawHeaders(b"content-encoding")
        if encoding is not None:
            self.encoding = encoding
            headers.removeHeader(b"content-encoding")
        return response

    def eb_exchange(self, failure, request):
        """
        No answer came on the connection: name a header line too long for twisted's
        parser; replay an idempotent request once, on a new connection, when the pooled
        connection it went out on had been closed by the server before any byte of the
        answer arrived (twisted's C{ResponseNeverReceived}, C{RequestNotSent}).

        @return: the replay's Deferred, or the failure.
        """
        connection = self.connection
        if connection is None:
            return failure
        if connection.line_too_long:
            return Failure(HeaderLineTooLong(
                f"a response status or header line is longer than {MAX_LINE} bytes "
                f"(twisted's limit)"))
        if self.replayed or connection.exchanges < 2 or connection.aborted \
                or self.timed_out is not None or self.result.called \
                or request.method not in IDEMPOTENT or not _never_answered(failure):
            return failure
        self.replayed = True
        self.connection = None  # while connecting, an abort cancels the connecting
        stats = self.fetcher.stats
        if stats is not None:
            stats.inc_value("downloader/replayed_count")
        logger.debug("Replaying %r on a new connection: the server had closed the idle "
                     "one it was sent on", self.crawl_request)
        d = self.fetcher.pool.new_connection(self.key, self.endpoint)
        d.addCallback(self._cb_reconnected, request)
        return d

    def _cb_reconnected(self, connection, request):
        self.connection = connection
        return self.request(request)

    # after treq: the body

    def cb_response(self, response):
        """
        The status and headers arrived through treq: refuse a too-large declared body,
        read the rest.

        @return: a Deferred firing with the L{HttpResponse} once the body is read.
        """
        # treq's _Response proxies twisted's, attribute by attribute: read twisted's
        response = getattr(response, "original", response)
        declared = response.length
        if declared is not UNKNOWN_LENGTH:
            if self.maxsize and declared > self.maxsize and not self.truncate:
                self.abort()
                raise ResponseTooLarge(
                    f"Content-Length {declared} is larger than the limit {self.maxsize}")
            if self.warnsize and declared > self.warnsize:
                self._warn(declared, "declares")
        headers = Headers.from_raw(response.headers.getAllRawHeaders())
        # treq's ContentDecoderAgent leaves an empty Content-Encoding where it found
        # none (the transfer had hidden it): the response's own is put back instead
        headers.pop(b"Content-Encoding", None)
        encoding = self.encoding
        if encoding is not None:
            headers[b"Content-Encoding"] = encoding  # until a decoder takes it off
        signals = self.fetcher.signals
        if signals is not None and signals.listened(headers_received):
            length = -1 if declared is UNKNOWN_LENGTH else declared
            stop = _send(signals, headers_received, self.crawl_request, headers=headers,
                         body_length=length)
            if stop is not None:
                self.abort()
                return self._stopped(stop, response.code, headers)
        if encoding is not None and self.fetcher.compression:
            fetcher = self.fetcher
            try:
                self.decoder = body_decoder(b", ".join(encoding).decode("latin-1"),
                                            self.maxsize, fetcher.ratio, fetcher.grace)
            except ContentDecodingError:
                self.abort()
                raise
            if self.decoder is not None:
                del headers[b"Content-Encoding"]
        from treq import collect
        d = collect(response, self.collect)
        status = response.code
        d.addCallbacks(self.cb_body, self.eb_body, callbackArgs=(status, headers),
                       errbackArgs=(status, headers))
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
                self.stopped = _send(signals, bytes_received, self.crawl_request, data=data)
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
        request = self.crawl_request
        return response_for(_response_url(request), status, headers, body, request)

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
        if failure.check(ResponseFailed) and any(
                reason.check(_DataLoss) for reason in failure.value.reasons):
            return self._data_lost(failure, status, headers)
        return failure

    def _data_lost(self, failure, status, headers):
        """
        The connection closed before the whole body came (fewer bytes than its
        C{Content-Length}, a chunked body without its end).

        @return: with C{DOWNLOAD_FAIL_ON_DATALOSS} False (or
            C{meta["download_fail_on_dataloss"]}), the response as received, flagged
            C{dataloss}; else a L{ResponseDataLossError} failure (retried, as in Scrapy)
            whose message says how to take such responses instead (the failure's one
            line names the URL).
        """
        if not self.fail_on_dataloss:
            self.decoder = None  # a cut stream decodes no further: what came is the body
            body = b"".join(self.chunks or ())
            request = self.crawl_request
            return response_for(_response_url(request), status, headers, body, request,
                                flags=["dataloss"])
        error = ResponseDataLossError(f"the connection closed after {self.wire} body bytes, "
                                      f"before the whole body came (data loss; "
                                      f"DOWNLOAD_FAIL_ON_DATALOSS = False takes such "
                                      f"responses as they come)")
        error.__cause__ = failure.value
        return Failure(error)

    def _stopped(self, stop, status, headers):
        """
        A receiver raised L{StopDownload}: the response as received so far.

        @return: the partial L{HttpResponse} when C{stop.fail} is False.
        @raise StopDownload: C{stop}, with the partial response, when C{stop.fail} is True.
        """
        body = b"".join(self.chunks or ())
        request = self.crawl_request
        response = response_for(_response_url(request), status, headers, body, request,
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
                       self.crawl_request, verb, size, self.warnsize)
        if self.fetcher.stats is not None:
            self.fetcher.stats.inc_value("downloader/response_warnsize_count")

    # ending

    def time_out(self, timeout):
        """The whole-download timer fired: abort the transfer, whatever its phase."""
        self.timer = None
        self.timed_out = DownloadTimeout(f"took longer than {timeout} seconds")
        self.abort()

    def abort(self):
        """Close the connection now (or stop connecting); the Deferred errbacks."""
        connection = self.connection
        if connection is not None:
            connection.aborted = True  # never back in the pool (CrawlPool)
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
        if self.timed_out is not None:
            # first: the abort can end the body as if it were whole (a body that runs to
            # the close: twisted's PotentialDataLoss, which treq.collect takes for the
            # end), or as data loss, which DOWNLOAD_FAIL_ON_DATALOSS = False makes a
            # response; a download the timer ended is a DownloadTimeout all the same
            result.errback(self.timed_out)
        elif isinstance(outcome, Response):
            result.callback(outcome)
        else:
            result.errback(tls_error(outcome) or outcome)
        return None


def _has_proxy_authorization(items):
    for name, _ in items:
        if name == b"Proxy-Authorization":
            return True
    return False


def _never_answered(failure):
    """Whether C{failure} says the connection was gone before any byte of the answer came
    (and not because this side cancelled)."""
    if failure.check(RequestNotSent):
        return True
    if not failure.check(ResponseNeverReceived):
        return False
    return not any(reason.check(CancelledError) for reason in failure.value.reasons)


def _send(signals, signal, request, **kwargs):
    """Send C{signal} about C{request}. @return: the L{StopDownload} a receiver raised, or
    None."""
    spider = getattr(signals.sender, "spider", None)
    for _, result in signals.send(signal, request=request, spider=spider, **kwargs):
        if isinstance(result, StopDownload):
            return result
    return None


def _response_url(request):
    """A response's URL: the request's without its fragment, which never left the client
    (as Scrapy's download handlers make it)."""
    url = request.url
    return url.partition("#")[0] if "#" in url else url

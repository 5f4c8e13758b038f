"""
L{HttpFetcher}: one HTTP transfer, on one persistent connection pool, safe to point at
the real web.

The stack, measured against a bare twisted C{Agent} (docs/downloader.md has the numbers):

    HttpFetcher.fetch        (here) the route, the headers, the timer
      Transfer               (L{tinyscrapy.download.transfer}) timeouts, size limits,
                             decoding, stats, errors
        treq.collect         streams the body into C{Transfer.collect}
      CrawlAgent             (L{tinyscrapy.download.pool}) an C{IAgent}: endpoints cached per host,
                             the pool key carries the TLS policy, a hook when a request is sent
        CrawlPool            (L{tinyscrapy.download.pool}) twisted's
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
      while they are decoded (L{tinyscrapy.download.contentencoding});
      C{DOWNLOAD_WARNSIZE} logs once;
    - TLS certificates are verified unless the crawl says otherwise (L{tinyscrapy.download.tls});
    - a bad URL or host is an errback (L{InvalidUrl}), never an exception out of C{fetch};
    - a request with C{meta["proxy"]} goes through L{tinyscrapy.download.tunnel.ProxyRouter}'s agent
      (a forward proxy for http, a CONNECT tunnel for https), on the same pool, with the
      same timeouts, limits and send hook;
    - host names are looked up once per crawl, not once per new connection, each
      lookup bounded by C{DNS_TIMEOUT} (L{tinyscrapy.download.dnscache}; C{DNSCACHE_ENABLED},
      C{DNSCACHE_SIZE});
    - no cookies (the cookies middleware does that).
"""

import re
from dataclasses import dataclass

from twisted.internet.defer import Deferred, fail, succeed
from twisted.web.http_headers import Headers as TwistedHeaders
from twisted.web.iweb import IBodyProducer
from zope.interface import implementer

from tinyscrapy.download.contentencoding import accept_encoding
from tinyscrapy.download.dnscache import DnsCache
from tinyscrapy.download.pool import CrawlAgent, CrawlPool
from tinyscrapy.download.tls import https_policy, policy_key
from tinyscrapy.download.transfer import Transfer
from tinyscrapy.download.tunnel import ProxyRouter
from tinyscrapy.errors import InvalidUrl

_METHOD = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


class HttpFetcher:
    """
    Fetch requests over a shared L{HTTPConnectionPool}.

    @ivar agent: the L{CrawlAgent} (an C{IAgent}; treq's C{HTTPClient} runs on it).
    @ivar pool: the L{CrawlPool}; L{close} empties it.
    @ivar dns: the L{tinyscrapy.download.dnscache.DnsCache} its connections look host
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
        self.accept_encoding = accept_encoding() if self.compression else None
        self.pool = CrawlPool(reactor)
        self.pool.maxPersistentPerHost = max(1, settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"))
        self.pool.cachedConnectionTimeout = settings.getfloat("DOWNLOAD_IDLE_TIMEOUT", 60.0)
        connect_timeout = settings.getfloat("DOWNLOAD_CONNECT_TIMEOUT") or self.timeout or 30
        policy = https_policy(settings)
        self.dns = DnsCache.from_settings(reactor, settings, stats)
        self.agent = CrawlAgent(reactor, self.pool, policy, policy_key(settings),
                                connect_timeout, dns=self.dns)
        # proxies: tinyscrapy.download.tunnel picks the agent for requests with meta["proxy"]; sites
        # reached through a tunnel are checked with the crawl's TLS policy too
        self.proxies = ProxyRouter(reactor, self.pool, connect_timeout, tls_policy=policy,
                                   dns=self.dns)
        self.wire_bytes = 0
        self.decoded_bytes = 0
        self._transfers = set()

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
        The agent for C{request} (None: L{CrawlAgent}; else a proxy's) and its headers as
        twisted sends them, with C{Host} and C{Accept-Encoding} added unless the request
        has its own. A C{Proxy-Authorization} header only ever reaches a proxy.

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
        if self.accept_encoding and not headers.hasHeader(b"accept-encoding"):
            headers.setRawHeaders(b"Accept-Encoding", [self.accept_encoding])
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

"""
L{HttpFetcher}: one HTTP transfer, on one persistent connection pool, safe to point at
the real web.

The stack, measured against a bare twisted C{Agent} (docs/downloader.md has the numbers):

    HttpFetcher.fetch            timeouts, size limits, decoding, stats, errors
      treq.collect               streams the body into L{_Transfer.collect}
      CrawlAgent                 an C{IAgent}: endpoints cached per host, the pool key
                                 carries the TLS policy, a hook when a request is sent
        HTTPConnectionPool       persistent, no automatic replays

treq stays the front door for bodies (C{treq.collect}: a collector that raises closes
the connection) and C{CrawlAgent} is an C{IAgent}, so C{treq.client.HTTPClient(agent)}
works on it too. The fetcher does not go through C{HTTPClient.request} itself: that call
parses the URL with hyperlink, wraps a cookie agent and twisted's C{GzipDecoder} (which
inflates without bound, see TRAPS.md) for every request, and costs more than the whole
transfer on a fast site.

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
      while they are decoded (L{tinyscrapy.decoding}); C{DOWNLOAD_WARNSIZE} logs once;
    - TLS certificates are verified unless the crawl says otherwise (L{tinyscrapy.tls});
    - a bad URL or host is an errback (L{InvalidUrl}), never an exception out of C{fetch};
    - a request with C{meta["proxy"]} goes through L{tinyscrapy.proxy.ProxyRouter}'s agent
      (a forward proxy for http, a CONNECT tunnel for https), on the same pool, with the
      same timeouts, limits and send hook;
    - no cookies (the cookies middleware does that).
"""

import logging
import re
from dataclasses import dataclass

from twisted.internet.defer import CancelledError, Deferred, fail, succeed
from twisted.web.client import HTTPConnectionPool
from twisted.web.http_headers import Headers as TwistedHeaders
from twisted.web.iweb import UNKNOWN_LENGTH, IAgent, IBodyProducer
from zope.interface import implementer

from tinyscrapy.decoding import accept_encoding, body_decoder
from tinyscrapy.errors import ContentDecodingError, DownloadTimeout, InvalidUrl, ResponseTooLarge
from tinyscrapy.http import Headers, HttpResponse
from tinyscrapy.proxy import ProxyRouter
from tinyscrapy.tls import https_policy, policy_key, tls_error

logger = logging.getLogger(__name__)


class HttpFetcher:
    """
    Fetch requests over a shared L{HTTPConnectionPool}.

    @ivar agent: the L{CrawlAgent} (an C{IAgent}; treq's C{HTTPClient} runs on it).
    @ivar pool: the connection pool; L{close} empties it.
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
        self.agent = CrawlAgent(reactor, self.pool, policy, policy_key(settings),
                                connect_timeout)
        # proxies: tinyscrapy.proxy picks the agent for requests with meta["proxy"]; sites
        # reached through a tunnel are checked with the crawl's TLS policy too
        self.proxies = ProxyRouter(reactor, self.pool, connect_timeout, tls_policy=policy)
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
        transfer = _Transfer(self, request, meta)
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
        if (meta and meta.get("proxy")) or any(name == "proxy-authorization"
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
        Abort the transfers still running and close every pooled connection.

        @return: a Deferred fired once the pooled connections are closed.
        """
        for transfer in list(self._transfers):
            transfer.abort()
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


class _Transfer:
    """
    One download: its connection, its timer, its body.

    @ivar connection: the C{HTTP11ClientProtocol} once the pool handed one out.
    """

    __slots__ = ("fetcher", "request", "maxsize", "warnsize", "deferred", "result",
                 "connection", "timer", "timed_out", "decoder", "chunks", "wire", "size",
                 "failed", "warned")

    def __init__(self, fetcher, request, meta):
        self.fetcher = fetcher
        self.request = request
        if meta:
            self.maxsize = meta.get("download_maxsize", fetcher.maxsize)
            self.warnsize = meta.get("download_warnsize", fetcher.warnsize)
        else:
            self.maxsize = fetcher.maxsize
            self.warnsize = fetcher.warnsize
        self.deferred = self.result = self.connection = self.timer = self.timed_out = None
        self.decoder = None
        self.chunks = []
        self.wire = self.size = 0
        self.failed = self.warned = False

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
            if self.maxsize and declared > self.maxsize:
                self.abort()
                raise ResponseTooLarge(
                    f"Content-Length {declared} is larger than the limit {self.maxsize}")
            if self.warnsize and declared > self.warnsize:
                self._warn(declared, "declares")
        headers = _headers(response.headers)
        encoding = headers.get("content-encoding") if self.fetcher.compression else None
        if encoding:
            fetcher = self.fetcher
            try:
                self.decoder = body_decoder(encoding, self.maxsize, fetcher.ratio,
                                            fetcher.grace)
            except ContentDecodingError:
                self.abort()
                raise
            if self.decoder is not None:
                dict.__delitem__(headers, "content-encoding")
        from treq import collect
        d = collect(response, self.collect)
        d.addCallback(self.cb_body, response.code, headers)
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
                    raise ResponseTooLarge(
                        f"body is larger than the limit {self.maxsize} "
                        f"(cut at {self.size} bytes)")
                self.chunks.append(data)
            else:
                pieces = self.decoder.feed(data)
                self.size = self.decoder.size
                self.chunks.extend(pieces)
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
        return HttpResponse(self.request.url, status, headers, body, self.request)

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
            connection.aborted_by_crawler = True  # never back in the pool (L{CrawlPool})
            transport = connection.transport
            if transport is not None:
                transport.abortConnection()
        elif self.deferred is not None and not self.deferred.called:
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
        if isinstance(outcome, HttpResponse):
            result.callback(outcome)
        elif self.timed_out is not None:
            result.errback(self.timed_out)
        else:
            result.errback(tls_error(outcome) or outcome)
        return None


_HEADER_NAMES = {}


def _headers(raw_headers):
    """Twisted's response headers as our L{Headers} (lower-case C{str} names)."""
    headers = Headers()
    names = _HEADER_NAMES
    for name, values in raw_headers.getAllRawHeaders():
        key = names.get(name)
        if key is None:
            key = name.decode("latin-1").lower()
            if len(names) < 1000:
                names[name] = key
        dict.__setitem__(headers, key, [value.decode("latin-1") for value in values])
    return headers


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


# -- the pool and the agent ------------------------------------------------------------

class CrawlPool(HTTPConnectionPool):
    """
    twisted's pool, persistent, with no automatic replays, that never takes back a
    connection the fetcher aborted (the parser may still finish that response after the
    abort) and takes back none once closed.
    """

    retryAutomatically = False

    def __init__(self, reactor):
        super().__init__(reactor, persistent=True)
        self.closed = False
        self.starting = None

    def getConnection(self, key, endpoint):
        """
        twisted's C{getConnection}; when C{starting} names a transfer (set around a
        proxy agent's C{request}, which calls this synchronously), the connection handed
        out is reported to it before the agent writes the request on it.
        """
        transfer, self.starting = self.starting, None
        d = super().getConnection(key, endpoint)
        if transfer is not None:
            d.addCallback(transfer.cb_connected)
        return d

    def _putConnection(self, key, connection):
        if self.closed or getattr(connection, "aborted_by_crawler", False):
            if connection.transport is not None:
                connection.transport.abortConnection()
            return
        super()._putConnection(key, connection)

    def closeCachedConnections(self):
        """Close the idle connections and refuse to keep any from now on.
        @return: a Deferred fired once they are closed."""
        self.closed = True
        return super().closeCachedConnections()


_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
_METHOD = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HOST = re.compile(r"(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*"
                   r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.?")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class _Target:
    """Where a URL's requests go: the pool key, the endpoint, the C{Host} header."""

    __slots__ = ("key", "endpoint", "host_header", "origin")

    def __init__(self, key, endpoint, host_header, origin):
        self.key = key
        self.endpoint = endpoint
        self.host_header = host_header
        self.origin = origin


@implementer(IAgent)
class CrawlAgent:
    """
    A twisted C{IAgent} made for crawling many pages of few hosts.

    Unlike twisted's C{Agent}, it parses a URL's origin (scheme, host, port) once per
    origin, not once per request, and builds each origin's endpoint (and, for HTTPS, its
    TLS options) once; the pool key includes the TLS policy, so agents with different
    policies can share a pool and still never share a connection; and L{send} reports
    the connection a request is about to be written on.

    @ivar pool: the L{HTTPConnectionPool}.
    """

    MAX_ORIGINS = 4096

    def __init__(self, reactor, pool, policy, policy_label, connect_timeout=None):
        self.reactor = reactor
        self.pool = pool
        self.policy = policy
        self.policy_label = policy_label
        self.connect_timeout = connect_timeout
        self._targets = {}

    def request(self, method, uri, headers=None, bodyProducer=None):
        """
        L{IAgent.request}: issue a request for the absolute URL C{uri} (bytes).

        @return: a Deferred firing with the C{IResponse}; it errbacks with L{InvalidUrl}
            for a URL this agent cannot fetch.
        """
        try:
            url = uri.decode("ascii")
            target = self.target(url)
        except (InvalidUrl, UnicodeDecodeError) as e:
            return fail(InvalidUrl(str(e)))
        headers = headers.copy() if headers is not None else TwistedHeaders()
        if not headers.hasHeader(b"host"):
            headers.setRawHeaders(b"Host", [target.host_header])
        return self.send(target, self.path(url, target), method, headers, bodyProducer)

    def target(self, url):
        """
        Check C{url} and find where it goes.

        @param url: an absolute http(s) URL (C{str}), already percent-encoded.
        @return: the L{_Target} of its origin (L{path} gives the rest).
        @raise InvalidUrl: not ASCII, spaces or control characters, not http(s), no
            host, a bad host name or port.
        """
        if not url.isascii() or _UNSAFE.search(url):
            raise InvalidUrl(f"URL must be percent-encoded ASCII without spaces or "
                             f"control characters: {url!r}")
        scheme_end = url.find("://")
        end = len(url)
        for separator in "/?#":
            found = url.find(separator, scheme_end + 3)
            if 0 <= found < end:
                end = found
        origin = url[:end]
        target = self._targets.get(origin)
        if target is None:
            target = self._new_target(origin, scheme_end)
        return target

    def path(self, url, target):
        """The request target (path and query, no fragment) of C{url} as bytes."""
        path = url[len(target.origin):]
        fragment = path.find("#")
        if fragment >= 0:
            path = path[:fragment]
        if not path.startswith("/"):
            path = "/" + path
        return path.encode("ascii")

    def _new_target(self, origin, scheme_end):
        scheme = origin[:scheme_end].lower() if scheme_end > 0 else ""
        if scheme not in _DEFAULT_PORTS:
            raise InvalidUrl(f"unsupported URL scheme {scheme!r}: {origin}")
        netloc = origin[scheme_end + 3:].rpartition("@")[2]
        host, port = _split_host_port(netloc, origin)
        default = _DEFAULT_PORTS[scheme]
        port = default if port is None else port
        host_header = host if port == default else f"{host}:{port}"
        if ":" in host:
            host_header = f"[{host}]" if port == default else f"[{host}]:{port}"
        try:
            endpoint = self._endpoint(scheme, host, port)
        except (ValueError, UnicodeError) as e:
            raise InvalidUrl(f"bad host {host!r} in {origin}: {e}") from None
        key = (scheme, host, port, self.policy_label)
        target = _Target(key, endpoint, host_header.encode("ascii"), origin)
        if len(self._targets) >= self.MAX_ORIGINS:
            self._targets.clear()
        self._targets[origin] = target
        return target

    def _endpoint(self, scheme, host, port):
        from twisted.internet.endpoints import HostnameEndpoint, wrapClientTLS
        endpoint = HostnameEndpoint(self.reactor, host, port, timeout=self.connect_timeout)
        if scheme == "https":
            creator = self.policy.creatorForNetloc(host.encode("ascii"), port)
            endpoint = wrapClientTLS(creator, endpoint)
        return endpoint

    def send(self, target, path, method, headers, body_producer=None, on_connection=None):
        """
        Send a request to C{target} on a pooled (or new) connection.

        @param path: the request target, from L{path}.
        @param method: bytes, e.g. C{b"GET"}.
        @param headers: twisted C{Headers}, C{Host} included.
        @param on_connection: called with the connection protocol just before the request
            is written on it.
        @return: a Deferred firing with the C{IResponse}. Cancelling it stops connecting,
            or aborts the connection once the request is on it.
        """
        d = self.pool.getConnection(target.key, target.endpoint)
        d.addCallback(self._cb_connected, method, path, headers,
                      body_producer, on_connection)
        return d

    def _cb_connected(self, connection, method, path, headers, body_producer,
                      on_connection):
        from twisted.web._newclient import Request
        if on_connection is not None:
            on_connection(connection)
        return connection.request(Request(method, path, headers, body_producer,
                                          persistent=True))


def _split_host_port(netloc, origin):
    """C{(host, port or None)} of a URL's authority, the host lower-cased.
    @raise InvalidUrl: a bad host or port."""
    if netloc.startswith("["):
        close = netloc.find("]")
        host, rest = netloc[1:close], netloc[close + 1:]
        if close < 0 or (rest and not rest.startswith(":")):
            raise InvalidUrl(f"bad IPv6 host in {origin}")
        from twisted.internet.abstract import isIPv6Address
        if not isIPv6Address(host):
            raise InvalidUrl(f"bad IPv6 host in {origin}")
        port_text = rest[1:] if rest else ""
    else:
        host, _, port_text = netloc.partition(":")
        host = host.lower()
        if not _HOST.fullmatch(host):
            raise InvalidUrl(f"bad host name {host!r} in {origin}")
    if not port_text:
        return host, None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise InvalidUrl(f"bad port {port_text!r} in {origin}")
    return host, int(port_text)

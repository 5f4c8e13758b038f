"""
The connections of a crawl: L{CrawlPool} (twisted's pool, tuned for crawling), the
L{CrawlProtocol} its connections speak, and L{CrawlAgent} (an C{IAgent} that knows each
origin once), the agent under treq's C{HTTPClient}.

    CrawlAgent.request(...)      IAgent: the URL's origin (pool key, endpoint, C{Host}),
                                 cached per origin; the endpoint looks its host up through
                                 the crawl's L{tinyscrapy.resolver.DnsCache}
      CrawlPool.getConnection    a pooled connection, or a new one; with C{starting} set,
                                 the connection is handed to that transfer first
        CrawlProtocol.request    twisted's HTTP/1.1 client protocol, counting its
                                 requests, noting an HTTP/1.0 answer (the server closes)
                                 and a header line too long for twisted's parser

What the pool does that twisted's does not, and why:

    - a connection the server said it will close is never handed out again: twisted closes
      it after C{Connection: close}; an HTTP/1.0 answer (which closes unless it says
      otherwise, and twisted's parser does not tell) is closed here when it comes back;
    - a connection the fetcher aborted (a timeout, a size limit) never comes back, nor any
      once the pool is closed;
    - it never replays a request by itself (C{retryAutomatically} off): the transfer
      replays a request once, on a new connection (L{CrawlPool.new_connection}), when a
      reused connection turned out closed before any byte of the answer came
      (L{tinyscrapy.core.downloader.handlers.http11.Transfer}).

The pool key carries the TLS policy, so agents with different certificate settings never
share a connection, even on one pool.
"""

import re

from twisted.internet.defer import fail
from twisted.internet.protocol import Factory

# twisted.web.client uses these but does not export them: their home is the private
# _newclient (there is no public way to subclass the client protocol or build a request)
from twisted.web._newclient import HTTP11ClientProtocol, HTTPClientParser, Request
from twisted.web.client import HTTPConnectionPool
from twisted.web.http_headers import Headers as TwistedHeaders
from twisted.web.iweb import IAgent
from zope.interface import implementer

from tinyscrapy.exceptions import InvalidUrl

# the longest status or header line twisted's parser reads before it drops the connection
MAX_LINE = HTTPClientParser.MAX_LENGTH
_HEAD_END = re.compile(rb"\n\r?\n")


class CrawlProtocol(HTTP11ClientProtocol):
    """
    twisted's HTTP/1.1 client protocol, knowing three things about its connection that
    twisted keeps to itself.

    @ivar exchanges: requests sent on this connection so far (more than one: it was reused).
    @ivar reusable: False once an answer said the server closes the connection (HTTP/1.0).
    @ivar aborted: True once the crawler aborted it: it never goes back to the pool.
    @ivar line_too_long: True when the answer's status or a header line is longer than
        twisted's parser reads (L{MAX_LINE}): the parser then closes the connection, and
        the request fails as if the server had closed it.
    """

    def __init__(self, quiescentCallback):
        super().__init__(quiescentCallback)
        self.exchanges = 0
        self.reusable = True
        self.aborted = False
        self.line_too_long = False
        self._in_head = False
        self._line = 0  # bytes of the head line being received

    def request(self, request, caller_notes_head=False):
        """
        twisted's C{request}, counted; the answer's head is noted (L{head}) by its
        Deferred, unless C{caller_notes_head} says the caller calls L{head} itself (the
        transfer does: one callback less a request).
        """
        self.exchanges += 1
        self._in_head = True
        self._line = 0
        self.line_too_long = False
        d = super().request(request)
        if not caller_notes_head:
            d.addCallback(self.head)
        return d

    def head(self, response):
        """The status and headers arrived: an HTTP/1.0 server closes the connection after
        its answer (this client never asks it to keep it), so it is never reused.
        @return: C{response}."""
        self._in_head = False
        self.line_too_long = False
        if response.version < (b"HTTP", 1, 1):
            self.reusable = False
        return response

    def dataReceived(self, data):
        if self._in_head:
            self._scan_head(data)
        super().dataReceived(data)

    def _scan_head(self, data):
        """Follow the length of the head's lines, as twisted's parser limits them: a chunk
        shorter than the limit can only lengthen the line it continues."""
        newline = data.rfind(b"\n")
        if newline < 0:
            self._line += len(data)
            longest = self._line
        else:
            first = self._line + data.find(b"\n")
            self._line = len(data) - newline - 1
            longest = max(first, self._line)
            if len(data) > MAX_LINE:  # a whole line may lie between: look at the head
                end = _HEAD_END.search(data)
                head = data[:end.start()] if end else data
                longest = max(longest, max(map(len, head.split(b"\n"))))
        if longest > MAX_LINE:
            self.line_too_long = True


class CrawlClientFactory(Factory):
    """Builds the pool's connections as L{CrawlProtocol}s (the factory twisted's pool
    expects: C{(quiescentCallback, metadata)})."""

    noisy = False

    def __init__(self, quiescentCallback, metadata):
        self._quiescentCallback = quiescentCallback
        self.metadata = metadata

    def buildProtocol(self, addr):
        return CrawlProtocol(self._quiescentCallback)


class CrawlPool(HTTPConnectionPool):
    """
    twisted's pool, persistent, with no automatic replays, that never takes back a
    connection the crawler aborted (the parser may still finish that response after the
    abort) or the server closes, and takes back none once closed.

    @ivar starting: the transfer the next connection handed out belongs to, or None. The
        fetcher sets it around treq's C{HTTPClient.request}, which reaches the pool
        synchronously through the agents (L{getConnection}).
    """

    retryAutomatically = False
    # twisted's pool builds its connections with the factory class in _factory; it has no
    # public way to choose the protocol they speak
    _factory = CrawlClientFactory

    def __init__(self, reactor):
        super().__init__(reactor, persistent=True)
        self.closed = False
        self.starting = None

    def getConnection(self, key, endpoint):
        """
        twisted's C{getConnection}; when C{starting} names a transfer, the connection is
        handed to it first (C{transfer.cb_connected(connection, key, endpoint)}), and the
        agent then writes the request through the transfer.

        @return: a Deferred firing with the connection (or the transfer standing in for
            it); cancelling it stops connecting.
        """
        transfer, self.starting = self.starting, None
        d = super().getConnection(key, endpoint)
        if transfer is not None:
            d.addCallback(transfer.cb_connected, key, endpoint)
        return d

    def new_connection(self, key, endpoint):
        """
        A new connection for C{key}, never an idle one (which may be as stale as the one
        that just failed).

        @return: a Deferred firing with the connected L{CrawlProtocol}.
        """
        # getConnection hands out idle connections first: twisted's pool has no public
        # way to a fresh one (its own replay, _RetryingHTTP11ClientProtocol, calls this)
        return self._newConnection(key, endpoint)

    # twisted calls _putConnection when a connection's answer is over; it has no public
    # hook for a connection coming back idle
    def _putConnection(self, key, connection):
        if self.closed or connection.aborted or not connection.reusable:
            transport = connection.transport
            if transport is not None:
                if connection.aborted:
                    transport.abortConnection()
                else:
                    transport.loseConnection()
            return
        super()._putConnection(key, connection)

    def idle(self):
        """@return: how many connections wait in the pool (read from twisted's private
        C{_connections}: the pool has no public count)."""
        return sum(len(connections) for connections in self._connections.values())

    def closeCachedConnections(self):
        """Close the idle connections and refuse to keep any from now on.
        @return: a Deferred fired once they are closed."""
        self.closed = True
        return super().closeCachedConnections()


_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
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
    A twisted C{IAgent} made for crawling many pages of few hosts: the agent under the
    fetcher's treq C{HTTPClient}.

    Unlike twisted's C{Agent}, it parses a URL's origin (scheme, host, port) once per
    origin, not once per request, and builds each origin's endpoint (and, for HTTPS, its
    TLS options) once; and the pool key includes the TLS policy, so agents with different
    policies can share a pool and still never share a connection.

    @ivar pool: the L{CrawlPool}.
    """

    MAX_ORIGINS = 4096

    def __init__(self, reactor, pool, policy, policy_label, connect_timeout=None, dns=None):
        """
        @param dns: the L{tinyscrapy.resolver.DnsCache} host names are looked
            up through, or None for the reactor's resolver on every new connection.
        """
        self.reactor = reactor
        self.pool = pool
        self.policy = policy
        self.policy_label = policy_label
        self.connect_timeout = connect_timeout
        self.dns = dns
        self._targets = {}

    def request(self, method, uri, headers=None, bodyProducer=None):
        """
        L{IAgent.request}: issue a request for the absolute URL C{uri} (bytes) on a pooled
        (or new) connection, with a C{Host} header unless C{headers} has one.

        @return: a Deferred firing with the C{IResponse} once its headers are in; it
            errbacks with L{InvalidUrl} for a URL this agent cannot fetch, or with the
            connection's error. Cancelling it stops connecting, or aborts the connection
            once the request is on it.
        """
        try:
            url = uri.decode("ascii")
            target = self.target(url)
        except (InvalidUrl, UnicodeDecodeError) as e:
            return fail(InvalidUrl(str(e)))
        if headers is None:
            headers = TwistedHeaders()
        if not headers.hasHeader(b"host"):
            headers = headers.copy()
            headers.setRawHeaders(b"Host", [target.host_header])
        d = self.pool.getConnection(target.key, target.endpoint)
        d.addCallback(_cb_connected, method, self.path(url, target), headers, bodyProducer)
        return d

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

        from tinyscrapy.resolver import DnsEndpoint
        if self.dns is not None:
            endpoint = DnsEndpoint(self.reactor, self.dns, host, port, self.connect_timeout)
        else:
            endpoint = HostnameEndpoint(self.reactor, host, port,
                                        timeout=self.connect_timeout)
        if scheme == "https":
            creator = self.policy.creatorForNetloc(host.encode("ascii"), port)
            endpoint = wrapClientTLS(creator, endpoint)
        return endpoint


def _cb_connected(connection, method, path, headers, body_producer):
    """The pool handed out C{connection} (or the transfer standing in for it): write the
    request on it. @return: the Deferred of its C{IResponse}."""
    return connection.request(Request(method, path, headers, body_producer, persistent=True))


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

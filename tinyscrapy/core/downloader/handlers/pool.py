"""
The connections of a crawl: L{CrawlPool} (twisted's pool, tuned for crawling) and
L{CrawlAgent} (an C{IAgent} that knows each origin once).

    CrawlAgent.target(url)       checks the URL; the origin's pool key, endpoint (for HTTPS
                                 with its TLS options) and C{Host} header, cached per origin;
                                 the endpoint looks its host up through the crawl's
                                 L{tinyscrapy.resolver.DnsCache}
    CrawlAgent.send(...)         a pooled (or new) connection, a hook just before the
                                 request is written on it
      CrawlPool.getConnection    persistent, no automatic replays, never takes back a
                                 connection the fetcher aborted

L{tinyscrapy.core.downloader.handlers.http11.HttpFetcher} drives both; treq's C{HTTPClient} runs on
a C{CrawlAgent} too. The pool key carries the TLS policy, so agents with different certificate
settings never share a connection, even on one pool.
"""

import re

from twisted.internet.defer import fail
from twisted.web.client import HTTPConnectionPool
from twisted.web.http_headers import Headers as TwistedHeaders
from twisted.web.iweb import IAgent
from zope.interface import implementer

from tinyscrapy.exceptions import InvalidUrl


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

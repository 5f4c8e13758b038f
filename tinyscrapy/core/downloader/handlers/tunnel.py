"""
Sending requests through proxies: which L{IAgent} sends a request, with which headers.

The fetcher asks L{ProxyRouter.route} once per request, with C{request.meta["proxy"]}
(set by the spider, or from the environment by
L{tinyscrapy.downloadermiddlewares.httpproxy.HttpProxyMiddleware}):

    - no proxy: the fetcher's own agent, and a C{Proxy-Authorization} header is removed,
      so credentials meant for a proxy never reach a site;
    - an http URL through a proxy: twisted's L{ProxyAgent}; the request goes to the proxy
      in absolute form (C{GET http://site/path}) with its C{Proxy-Authorization};
    - an https URL through a proxy: L{TunnelAgent}. A C{CONNECT site:443} carries the
      C{Proxy-Authorization} to the proxy; once the proxy answers 200, TLS to the site runs
      inside the tunnel (the site's certificate is checked as on a direct connection), and
      the request itself is sent without C{Proxy-Authorization}. A refusal is a
      L{TunnelError}.

Every agent shares the fetcher's connection pool; tunnels are pooled under a key naming the
proxy and its credentials, so a connection is only reused through the same proxy.
"""

import base64
from urllib.parse import unquote, urlsplit

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import HostnameEndpoint, wrapClientTLS
from twisted.internet.interfaces import IStreamClientEndpoint
from twisted.internet.protocol import Factory, Protocol
from twisted.web.client import URI, Agent, BrowserLikePolicyForHTTPS, ProxyAgent
from zope.interface import implementer

from tinyscrapy.exceptions import TunnelError
from tinyscrapy.resolver import DnsEndpoint
from tinyscrapy.utils.log import redact_url

_MAX_CONNECT_REPLY = 64 * 1024  # bytes of a proxy's reply to CONNECT we are willing to read


def basic_auth(user, password, encoding="latin-1"):
    """The C{Proxy-Authorization} value for C{user} and C{password} (C{Basic ...})."""
    token = f"{unquote(user)}:{unquote(password)}".encode(encoding)
    return "Basic " + base64.b64encode(token).decode("ascii")


def parse_proxy(url, encoding="latin-1"):
    """
    Split a proxy URL: C{http://user:pass@host:port}, or C{host:port} (http assumed).

    @param encoding: how credentials are encoded in C{Proxy-Authorization}.

    @return: C{(scheme, host, port, authorization or None, url without credentials)}.
    @raise ValueError: not an http or https proxy URL, or no host.
    """
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) proxy URL: {redact_url(url)!r}")
    port = parts.port or (443 if scheme == "https" else 80)
    auth = None
    if parts.username is not None:
        auth = basic_auth(parts.username, parts.password or "", encoding)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return scheme, parts.hostname, port, auth, f"{scheme}://{host}:{port}"


class ProxyRouter:
    """
    Chooses the agent for each request and keeps one agent per proxy.

    @ivar tls_policy: the L{IPolicyForHTTPS} for sites reached through tunnels (and for
        https proxies); give it the one the direct agent uses.
    @ivar dns: the L{tinyscrapy.resolver.DnsCache} proxy host names are
        looked up through (the sites behind a proxy are the proxy's to look up), or None.
    """

    def __init__(self, reactor, pool, connect_timeout=None, tls_policy=None, dns=None):
        self.reactor = reactor
        self.pool = pool
        self.connect_timeout = connect_timeout
        self.tls_policy = tls_policy or BrowserLikePolicyForHTTPS()
        self.dns = dns
        self._agents = {}

    def route(self, request, headers):
        """
        Decide how C{request} goes out.

        @param headers: the headers to send, title-cased C{bytes} name to a list of
            values, or None.
        @return: C{(agent, headers)}: the agent (None for the fetcher's direct one) and the
            headers to send, C{Proxy-Authorization} kept only where the proxy reads it.
        @raise ValueError: C{meta["proxy"]} is not a proxy URL we can use.
        """
        proxy = request._meta.get("proxy") if request._meta else None
        auth = None
        if headers and b"Proxy-Authorization" in headers:
            headers = dict(headers)
            auth = headers.pop(b"Proxy-Authorization")[-1]
            if isinstance(auth, bytes):
                auth = auth.decode("latin-1")
        if not proxy:
            return None, headers
        scheme, host, port, url_auth, key = parse_proxy(proxy)
        auth = auth or url_auth
        if request.url[:6].lower() == "https:":
            if scheme != "http":
                raise ValueError(f"https URLs can only be tunnelled through an http proxy, "
                                 f"not {redact_url(proxy)!r}")
            return self._agent(("tunnel", key, auth), scheme, host, port, auth), headers
        if auth:
            headers = dict(headers or {})
            headers[b"Proxy-Authorization"] = [auth]
        return self._agent(("forward", key), scheme, host, port, None), headers

    def _agent(self, cache_key, scheme, host, port, auth):
        agent = self._agents.get(cache_key)
        if agent is None:
            endpoint = self._proxy_endpoint(scheme, host, port)
            if cache_key[0] == "tunnel":
                agent = TunnelAgent.through(self.reactor, endpoint, cache_key, auth,
                                            self.tls_policy, self.pool)
            else:
                agent = ProxyAgent(endpoint, self.reactor, self.pool)
            self._agents[cache_key] = agent
        return agent

    def _proxy_endpoint(self, scheme, host, port):
        kwargs = {"timeout": self.connect_timeout} if self.connect_timeout else {}
        if self.dns is not None:
            endpoint = DnsEndpoint(self.reactor, self.dns, host, port, **kwargs)
        else:
            endpoint = HostnameEndpoint(self.reactor, host, port, **kwargs)
        if scheme == "https":
            creator = self.tls_policy.creatorForNetloc(host.encode("idna"), port)
            endpoint = wrapClientTLS(creator, endpoint)
        return endpoint


class TunnelAgent(Agent):
    """
    An L{Agent} whose https connections are C{CONNECT} tunnels through one proxy.

    It overrides only L{request}, to pool tunnels under their own key (the approach Scrapy's
    C{TunnelingAgent} takes; it uses the agent's private C{_getEndpoint} and
    C{_requestWithEndpoint}, as C{ProxyAgent} itself does).
    """

    @classmethod
    def through(cls, reactor, proxy_endpoint, pool_key, auth, tls_policy, pool):
        """An agent tunnelling through C{proxy_endpoint}, sending C{auth} to the proxy."""
        factory = _TunnelEndpointFactory(proxy_endpoint, auth, tls_policy)
        agent = cls.usingEndpointFactory(reactor, factory, pool)
        agent._pool_key = pool_key
        return agent

    def request(self, method, uri, headers=None, bodyProducer=None):
        """@see: L{twisted.web.iweb.IAgent.request}"""
        parsed = URI.fromBytes(uri.strip())
        endpoint = self._getEndpoint(parsed)
        key = (self._pool_key, parsed.scheme, parsed.host, parsed.port)
        return self._requestWithEndpoint(key, endpoint, method, parsed, headers, bodyProducer,
                                         parsed.originForm)


class _TunnelEndpointFactory:
    """Makes a L{TunnelEndpoint} for each https URI (the agent's IAgentEndpointFactory)."""

    def __init__(self, proxy_endpoint, auth, tls_policy):
        self.proxy_endpoint = proxy_endpoint
        self.auth = auth
        self.tls_policy = tls_policy

    def endpointForURI(self, uri):
        if uri.scheme != b"https":
            raise ValueError(f"only https is tunnelled, not {uri.scheme!r}")
        creator = self.tls_policy.creatorForNetloc(uri.host, uri.port)
        return TunnelEndpoint(self.proxy_endpoint, uri.host.decode("ascii"), uri.port,
                              creator, self.auth)


@implementer(IStreamClientEndpoint)
class TunnelEndpoint:
    """
    Connects to a site through a proxy: TCP to the proxy, C{CONNECT host:port}, then TLS
    with the site inside the tunnel.
    """

    def __init__(self, proxy_endpoint, host, port, tls_creator, auth=None):
        self.proxy_endpoint = proxy_endpoint
        self.host = host
        self.port = port
        self.tls_creator = tls_creator
        self.auth = auth

    def connect(self, protocolFactory):
        """
        @return: a Deferred that fires with the protocol C{protocolFactory} builds, connected
            to the site once the tunnel is open and TLS started; it errbacks with
            L{TunnelError} when the proxy refuses, or with the connection's error.
            Cancelling it closes the connection to the proxy.
        """
        tunnel = _TunnelProtocol(self, protocolFactory)
        ready = tunnel.ready  # taken first: a connection that fails at once fires it
        tunnel.connecting = self.proxy_endpoint.connect(_SingleProtocol(tunnel))
        tunnel.connecting.addErrback(tunnel.eb_connect_failed)
        return ready


class _SingleProtocol(Factory):
    def __init__(self, protocol):
        self.protocol_instance = protocol

    def buildProtocol(self, addr):
        return self.protocol_instance


class _TunnelProtocol(Protocol):
    """
    Speaks to the proxy until the tunnel is open, then passes the bytes, decrypted, to the
    protocol that talks to the site.

    @ivar ready: the Deferred L{TunnelEndpoint.connect} returned.
    """

    def __init__(self, endpoint, factory):
        self.endpoint = endpoint
        self.factory = factory
        self.inner = None
        self.connecting = None
        self.reply = b""
        self.ready = Deferred(self._cancel)

    def connectionMade(self):
        target = f"{self.endpoint.host}:{self.endpoint.port}"
        if ":" in self.endpoint.host:
            target = f"[{self.endpoint.host}]:{self.endpoint.port}"
        lines = [f"CONNECT {target} HTTP/1.1", f"Host: {target}"]
        if self.endpoint.auth:
            lines.append(f"Proxy-Authorization: {self.endpoint.auth}")
        self.transport.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def dataReceived(self, data):
        if self.inner is not None:
            self.inner.dataReceived(data)
            return
        self.reply += data
        head, found, _rest = self.reply.partition(b"\r\n\r\n")
        if not found:
            if len(self.reply) > _MAX_CONNECT_REPLY:
                self._refused(TunnelError("the proxy's reply to CONNECT is too long"))
            return
        status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = status_line.split(None, 2)
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
        if status is None or not 200 <= status < 300:
            target = f"{self.endpoint.host}:{self.endpoint.port}"
            self._refused(TunnelError(f"proxy refused CONNECT {target}: {status_line!r}",
                                      status))
            return
        self.transport.startTLS(self.endpoint.tls_creator)
        self.inner = self.factory.buildProtocol(self.transport.getPeer())
        self.inner.makeConnection(self.transport)
        ready, self.ready = self.ready, None
        ready.callback(self.inner)

    def _refused(self, error):
        self.transport.abortConnection()
        ready, self.ready = self.ready, None
        if ready is not None:
            ready.errback(error)

    def connectionLost(self, reason):
        if self.inner is not None:
            self.inner.connectionLost(reason)
            return
        ready, self.ready = self.ready, None
        if ready is not None:
            ready.errback(TunnelError(
                f"the proxy closed the connection before opening the tunnel: "
                f"{reason.getErrorMessage()}"))

    def eb_connect_failed(self, failure):
        """Connecting to the proxy failed: the endpoint's Deferred fails the same way."""
        ready, self.ready = self.ready, None
        if ready is not None:
            ready.errback(failure)

    def _cancel(self, ready):
        """The request was cancelled (a timeout) while the tunnel was being opened."""
        self.ready = None
        if self.transport is not None:
            self.transport.abortConnection()
        elif self.connecting is not None and not self.connecting.called:
            self.connecting.cancel()

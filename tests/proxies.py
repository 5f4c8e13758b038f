"""
Proxies and TLS for the tests, on 127.0.0.1 port 0:

    - L{ForwardProxy}: twisted.web's own forward proxy for http, recording what it receives
      and, like any proxy, not passing C{Proxy-Authorization} on;
    - L{ConnectProxy}: a C{CONNECT} tunnel for https, recording each C{CONNECT} and
      splicing bytes to the site (127.0.0.1 only), optionally asking for credentials;
    - L{TLSTestServer}: a L{TestServer} over TLS, with a certificate made for 127.0.0.1
      that L{TLSTestServer.trust} builds a client policy for.

Each C{stop()} aborts every connection, inbound and outbound, and fires once all are closed.
"""

import datetime
import ipaddress

from twisted.internet import defer, protocol
from twisted.web import http, proxy

from .servers import RecordedRequest, TestServer, _TrackingFactory


class _Tracked:
    """Listens on 127.0.0.1 port 0 and closes everything it opened on L{stop}."""

    def __init__(self, factory, reactor=None):
        if reactor is None:
            from twisted.internet import reactor
        self.reactor = reactor
        self.connections = 0
        self.requests = []
        self.outbound = []
        self._factory = _TrackingFactory(factory, self)
        self._factory.noisy = False
        self._port = reactor.listenTCP(0, self._factory, interface="127.0.0.1")

    @property
    def port(self):
        return self._port.getHost().port

    def url(self, credentials=None):
        """The proxy's URL, with C{user:password} credentials if given."""
        userinfo = credentials + "@" if credentials else ""
        return f"http://{userinfo}127.0.0.1:{self.port}"

    def track(self, peer):
        """Remember an outbound connection; it has a C{closed} Deferred."""
        self.outbound.append(peer)

    def stop(self):
        closing = [defer.maybeDeferred(self._port.stopListening)]
        for connection in list(self._factory.protocols):
            closing.append(connection.closed)
            connection.transport.abortConnection()
        for peer in self.outbound:
            if not peer.closed.called:
                closing.append(peer.closed)
                if peer.transport is not None:
                    peer.transport.abortConnection()
        return defer.gatherResults(closing)


# http: twisted.web.proxy

class _TrackedProxyClient(proxy.ProxyClient):
    def connectionMade(self):
        self.closed = defer.Deferred()
        self.father.channel.factory.owner.track(self)
        super().connectionMade()

    def connectionLost(self, reason):
        super().connectionLost(reason)
        self.closed.callback(None)


class _TrackedProxyClientFactory(proxy.ProxyClientFactory):
    protocol = _TrackedProxyClient
    noisy = False


class _RecordingProxyRequest(proxy.ProxyRequest):
    protocols = {b"http": _TrackedProxyClientFactory}

    def process(self):
        owner = self.channel.factory.owner
        headers = {name.decode("latin-1").lower(): b", ".join(values).decode("latin-1")
                   for name, values in self.requestHeaders.getAllRawHeaders()}
        owner.requests.append(RecordedRequest(
            owner.reactor.seconds(), self.method.decode("latin-1"),
            self.uri.decode("latin-1"), headers, b"", 0))
        self.requestHeaders.removeHeader(b"proxy-authorization")  # hop-by-hop
        super().process()


class _RecordingProxy(proxy.Proxy):
    requestFactory = _RecordingProxyRequest


class ForwardProxy(_Tracked):
    """
    An http forward proxy.

    @ivar requests: each L{RecordedRequest} it received; C{path} is the absolute URI.
    """

    def __init__(self, reactor=None):
        factory = http.HTTPFactory()
        factory.protocol = _RecordingProxy
        factory.owner = self
        super().__init__(factory, reactor)


# https: CONNECT

class _Splice(protocol.Protocol):
    """The proxy's connection to the site: bytes back to the client."""

    def __init__(self, client):
        self.client = client
        self.closed = defer.Deferred()

    def connectionMade(self):
        self.client.tunnel_open(self)

    def dataReceived(self, data):
        self.client.transport.write(data)

    def connectionLost(self, reason):
        self.client.transport.loseConnection()
        self.closed.callback(None)


class _ConnectChannel(protocol.Protocol):
    """One client of the CONNECT proxy."""

    def connectionMade(self):
        self.buffer = b""
        self.peer = None
        self.owner = self.factory.owner

    def dataReceived(self, data):
        if self.peer is not None:
            self.peer.transport.write(data)
            return
        self.buffer += data
        if b"\r\n\r\n" not in self.buffer:
            return
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _version = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        self.owner.requests.append(RecordedRequest(
            self.owner.reactor.seconds(), method, target, headers, b"", 0))
        host, _, port = target.rpartition(":")
        if self.owner.silent:
            return  # never answers (until stop)
        if method != "CONNECT" or host != "127.0.0.1":
            self._answer(b"403 Forbidden")
        elif self.owner.auth and headers.get("proxy-authorization") != self.owner.auth:
            self._answer(b"407 Proxy Authentication Required")
        else:
            self.transport.pauseProducing()
            connector = protocol.ClientCreator(self.owner.reactor, _Splice, self)
            d = connector.connectTCP(host, int(port))
            d.addErrback(self._eb_unreachable)

    def _answer(self, status):
        self.transport.write(b"HTTP/1.1 " + status + b"\r\nContent-Length: 0\r\n\r\n")
        self.transport.loseConnection()

    def _eb_unreachable(self, failure):
        self.transport.resumeProducing()
        self._answer(b"502 Bad Gateway")

    def tunnel_open(self, splice):
        self.owner.track(splice)
        self.peer = splice
        self.transport.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        self.transport.resumeProducing()
        if self.buffer:
            splice.transport.write(self.buffer)
            self.buffer = b""

    def connectionLost(self, reason):
        if self.peer is not None:
            self.peer.transport.loseConnection()


class ConnectProxy(_Tracked):
    """
    A CONNECT proxy for https.

    @ivar auth: the C{Proxy-Authorization} value it requires, or None.
    @ivar silent: read each C{CONNECT} and never answer it.
    @ivar requests: each L{RecordedRequest}; C{path} is the C{host:port} asked for.
    """

    def __init__(self, auth=None, silent=False, reactor=None):
        factory = protocol.Factory.forProtocol(_ConnectChannel)
        factory.owner = self
        self.auth = auth
        self.silent = silent
        super().__init__(factory, reactor)


# TLS

def _certificate(ip="127.0.0.1"):
    """A key and a self-signed certificate (PEM) for C{ip}, valid from yesterday to tomorrow."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ip)])
    now = datetime.datetime.now(datetime.timezone.utc)
    day = datetime.timedelta(days=1)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - day).not_valid_after(now + day)
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address(ip))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    return key_pem, cert.public_bytes(serialization.Encoding.PEM)


class TLSTestServer(TestServer):
    """A L{TestServer} speaking https, with its own certificate for 127.0.0.1."""

    def start(self):
        from twisted.internet import ssl
        key_pem, self.cert_pem = _certificate(self.interface)
        options = ssl.PrivateCertificate.loadPEM(key_pem + self.cert_pem).options()
        self._port = self.reactor.listenSSL(0, self._factory, options, interface=self.interface)
        return self

    def url(self, path="/"):
        return super().url(path).replace("http://", "https://", 1)

    def trust(self):
        """An C{IPolicyForHTTPS} that trusts this server's certificate (and only it)."""
        from twisted.internet import ssl
        from twisted.web.client import BrowserLikePolicyForHTTPS
        return BrowserLikePolicyForHTTPS(trustRoot=ssl.Certificate.loadPEM(self.cert_pem))

"""
The integration-test harness: a twisted.web site on a real 127.0.0.1 socket.

A test builds a tiny site, crawls it and asserts at the server::

    server = TestServer().start()
    self.addCleanup(server.stop)
    start = server.add_page("/", links=["/a", "/slow"])
    server.add_page("/a")
    server.add("/slow", Delay(0.5, b"late"))
    ...
    self.assertEqual(server.hits["/a"], 1)
    self.assertLessEqual(server.max_in_flight, 2)

Each behaviour is a small named resource (L{Delay}, L{Drop}, L{GzipBomb}...)
mounted at an exact path. Every call a resource schedules goes through
L{TestServer.callLater}, so L{TestServer.stop} cancels it, and through
L{_RecordingRequest.callLater}, so it is cancelled when the client goes away.
"""

import gzip
import itertools
import json
import zlib
from collections import Counter
from dataclasses import dataclass
from html import escape

from twisted.internet import defer
from twisted.internet.interfaces import IPushProducer
from twisted.internet.protocol import Factory, Protocol
from twisted.protocols.policies import ProtocolWrapper, WrappingFactory
from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request, Site
from zope.interface import implementer

HTML = "text/html; charset=utf-8"


@dataclass(frozen=True)
class RecordedRequest:
    """
    One request as the server saw it.

    @ivar time: arrival time, from the server's C{reactor.seconds()}.
    @ivar method: e.g. C{"GET"}.
    @ivar path: the request target, query string included.
    @ivar headers: lower-cased name to value (repeated headers joined by C{", "}).
    @ivar body: the request body.
    @ivar client_port: the client's TCP port (tells connections apart).
    """

    time: float
    method: str
    path: str
    headers: dict
    body: bytes
    client_port: int


class TestServer:
    """
    A twisted.web server on port 0 that records what it receives.

    @ivar hits: L{Counter} of request paths, query string included.
    @ivar requests: every L{RecordedRequest}, in arrival order.
    @ivar connections: how many TCP connections were accepted.
    @ivar in_flight: requests arrived and not yet finished or disconnected.
    @ivar max_in_flight: the peak of C{in_flight}.
    """

    def __init__(self, interface="127.0.0.1", reactor=None):
        if reactor is None:
            from twisted.internet import reactor
        self.reactor = reactor
        self.interface = interface
        self.hits = Counter()
        self.requests = []
        self.connections = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._routes = _Router()
        self._site = Site(self._routes, reactor=reactor)
        self._site.requestFactory = _RecordingRequest
        self._site.test_server = self
        self._factory = _TrackingFactory(self._site, self)
        self._factory.noisy = False
        self._port = None
        self._calls = []
        self._stopping = None  # the Deferred of the first stop()

    def start(self):
        """
        Listen on a free port, synchronously.

        @return: C{self}, so C{server = TestServer().start()} reads well.
        """
        self._port = self.reactor.listenTCP(0, self._factory, interface=self.interface)
        self._stopping = None
        return self

    @property
    def port(self):
        """The TCP port the server listens on."""
        return self._port.getHost().port

    def url(self, path="/"):
        """
        @return: the absolute URL of C{path} on this server, as C{str}.
        """
        host = f"[{self.interface}]" if ":" in self.interface else self.interface
        return f"http://{host}:{self.port}/{path.lstrip('/')}"

    def add(self, path, resource):
        """
        Answer requests for exactly C{path} (query string ignored) with C{resource}.

        @param resource: anything with a C{render(request)}; its render is called
            whatever the method.
        @return: the URL of C{path}.
        """
        self._routes.routes[path] = resource
        return self.url(path)

    def add_page(self, path, links=(), body=None, title=None, status=200, headers=None,
                 content_type=HTML):
        """
        Add an HTML page with one C{<a href>} per link (relative or absolute).

        @param body: extra HTML (C{str} or UTF-8 C{bytes}) placed before the links.
        @return: the URL of the page.
        """
        if isinstance(body, bytes):
            body = body.decode("utf-8")
        items = "".join(f'<li><a href="{escape(link)}">{escape(link)}</a></li>\n'
                        for link in links)
        html = (f"<!DOCTYPE html>\n<html><head><title>{escape(title or path)}</title></head>\n"
                f"<body>\n{body or ''}\n<ul>\n{items}</ul>\n</body></html>\n")
        return self.add(path, Page(html, status, headers, content_type))

    def callLater(self, seconds, f, *args):
        """
        C{reactor.callLater}, remembered so that L{stop} can cancel the call.
        """
        self._calls = [call for call in self._calls if call.active()]
        call = self.reactor.callLater(seconds, f, *args)
        self._calls.append(call)
        return call

    def stop(self):
        """
        Cancel pending calls, stop listening and abort every open connection.

        @return: a L{Deferred} that fires with L{None} once the port and every
            server-side connection are closed (a second call waits for the same).
        """
        for call in self._calls:
            if call.active():
                call.cancel()
        self._calls = []
        if self._port is None:
            return defer.succeed(None)
        if self._stopping is None:
            closing = [defer.maybeDeferred(self._port.stopListening)]
            for connection in list(self._factory.protocols):
                closing.append(connection.closed)
                connection.transport.abortConnection()
            self._stopping = defer.gatherResults(closing).addCallback(_none)
        waiting = defer.Deferred()
        self._stopping.addBoth(_relay, waiting)
        return waiting

    def _arrived(self, request):
        """Record C{request}, which has been fully received."""
        request.content.seek(0)
        body = request.content.read()
        request.content.seek(0)
        headers = {name.decode("latin-1").lower(): ", ".join(v.decode("latin-1") for v in values)
                   for name, values in request.requestHeaders.getAllRawHeaders()}
        path = request.uri.decode("latin-1")
        self.hits[path] += 1
        self.requests.append(RecordedRequest(
            self.reactor.seconds(), request.method.decode("latin-1"), path, headers, body,
            request.getClientAddress().port))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _departed(self, request):
        """C{request} was finished, or its connection lost."""
        self.in_flight -= 1


def _relay(result, waiting):
    """Pass the stop's outcome on to one more caller, and keep it for the next."""
    if isinstance(result, Failure):
        waiting.errback(result)
    else:
        waiting.callback(None)
    return result


def _none(ignored):
    return None


class _Connection(ProtocolWrapper):
    """A server-side connection whose C{closed} fires once it is fully lost."""

    def __init__(self, factory, wrappedProtocol):
        super().__init__(factory, wrappedProtocol)
        self.closed = defer.Deferred()

    def connectionLost(self, reason):
        # The HTTP channel (and its requests) must see the loss before stop() fires.
        super().connectionLost(reason)
        self.closed.callback(None)


class _TrackingFactory(WrappingFactory):
    """Wraps the L{Site}: counts accepted connections, keeps the open ones."""

    protocol = _Connection

    def __init__(self, site, server):
        super().__init__(site)
        self.server = server

    def buildProtocol(self, addr):
        self.server.connections += 1
        return super().buildProtocol(addr)


class _RecordingRequest(Request):
    """A request that reports its arrival and departure to its L{TestServer}."""

    def process(self):
        self.test_server = self.channel.site.test_server
        self._pending = []
        self.test_server._arrived(self)
        self.notifyFinish().addBoth(self._cb_departed)
        super().process()

    def callLater(self, seconds, f, *args):
        """Schedule a call cancelled by the server's stop or the client going away."""
        call = self.test_server.callLater(seconds, f, *args)
        self._pending.append(call)
        return call

    def _cb_departed(self, result_or_failure):
        for call in self._pending:
            if call.active():
                call.cancel()
        self.test_server._departed(self)


class _Router(Resource):
    """The root: dispatches on the exact path, 404 otherwise."""

    isLeaf = True

    def __init__(self):
        super().__init__()
        self.routes = {}

    def render(self, request):
        resource = self.routes.get(request.path.decode("latin-1"))
        if resource is None:
            resource = Status(404, b"not found")
        return resource.render(request)


class _Leaf(Resource):
    """A resource that answers every method the same way (no C{children})."""

    isLeaf = True


def _bytes(data):
    return data.encode("utf-8") if isinstance(data, str) else data


def _respond(request, body, status=200, content_type=HTML, headers=None):
    """Set the status and headers of C{request}; return C{body} as bytes."""
    request.setResponseCode(status)
    request.setHeader("content-type", content_type)
    for name, value in (headers or {}).items():
        request.setHeader(name, value)
    return _bytes(body)


@dataclass(eq=False)
class Page(_Leaf):
    """Static C{body} (C{str} is UTF-8 encoded) with a status and extra headers."""

    body: bytes
    status: int = 200
    headers: dict = None
    content_type: str = HTML

    def render(self, request):
        return _respond(request, self.body, self.status, self.content_type, self.headers)


@dataclass(eq=False)
class Status(_Leaf):
    """A plain-text answer with status C{code}."""

    code: int
    body: bytes = b""

    def render(self, request):
        return _respond(request, self.body, self.code, "text/plain")


@dataclass(eq=False)
class Robots(_Leaf):
    """A text/plain robots.txt."""

    text: str

    def render(self, request):
        return _respond(request, self.text, content_type="text/plain; charset=utf-8")


@dataclass(eq=False)
class Redirect(_Leaf):
    """An HTTP redirect with status C{code} to C{location}."""

    location: str
    code: int = 302

    def render(self, request):
        link = escape(self.location)
        return _respond(request, f'<a href="{link}">{link}</a>', self.code,
                        headers={"location": self.location})


@dataclass(eq=False)
class MetaRefresh(_Leaf):
    """An HTML page whose C{<meta http-equiv="refresh">} points to C{location}."""

    location: str
    delay: int = 0

    def render(self, request):
        return _respond(request, f'<html><head><meta http-equiv="refresh" content="{self.delay};'
                                 f' url={escape(self.location)}"></head><body></body></html>')


@dataclass(eq=False)
class SetCookie(_Leaf):
    """A plain-text page that sets one cookie."""

    name: str
    value: str
    path: str = "/"
    domain: str = None

    def render(self, request):
        request.addCookie(self.name, self.value, path=self.path, domain=self.domain)
        return _respond(request, b"cookie set", content_type="text/plain")


@dataclass(eq=False)
class Gzip(_Leaf):
    """C{body} gzip-encoded with C{Content-Encoding: gzip}, whatever the client accepts
    (the same bytes every time: no time in the gzip header)."""

    body: bytes

    def render(self, request):
        return _respond(request, gzip.compress(_bytes(self.body), mtime=0),
                        headers={"content-encoding": "gzip"})


class Echo(_Leaf):
    """Answers JSON: C{method}, C{path}, C{headers} (lower-case name to values), C{body}."""

    def render(self, request):
        headers = {name.decode("latin-1").lower(): [v.decode("latin-1") for v in values]
                   for name, values in request.requestHeaders.getAllRawHeaders()}
        echo = {"method": request.method.decode("latin-1"), "path": request.uri.decode("latin-1"),
                "headers": headers, "body": request.content.read().decode("latin-1")}
        return _respond(request, json.dumps(echo), content_type="application/json")


@dataclass(eq=False)
class Sequence(_Leaf):
    """The n-th request is answered by the n-th resource; the last one repeats."""

    resources: list
    count: int = 0

    def render(self, request):
        resource = self.resources[min(self.count, len(self.resources) - 1)]
        self.count += 1
        return resource.render(request)


@dataclass(eq=False)
class Delay(_Leaf):
    """Answers C{body} after C{seconds}, by C{callLater}; cancelled if the client goes away."""

    seconds: float
    body: bytes = b""

    def render(self, request):
        request.callLater(self.seconds, self._answer, request)
        return NOT_DONE_YET

    def _answer(self, request):
        request.write(_respond(request, self.body))
        request.finish()


class Drop(_Leaf):
    """Closes the connection without answering."""

    def render(self, request):
        request.transport.abortConnection()
        return NOT_DONE_YET


class NoAnswer(_Leaf):
    """Accepts the request and never answers (until the server stops)."""

    def render(self, request):
        return NOT_DONE_YET


@dataclass(eq=False)
class Partial(_Leaf):
    """Declares C{declared_length}, sends C{body}, then closes the connection."""

    body: bytes
    declared_length: int

    def render(self, request):
        request.setHeader("content-length", str(self.declared_length))
        request.write(_respond(request, self.body))
        # Not abortConnection, which would discard the part still in the write buffer.
        request.loseConnection()
        return NOT_DONE_YET


@dataclass(eq=False)
class StallAfterHeaders(_Leaf):
    """Sends status, headers and C{body} (chunked), then never finishes."""

    body: bytes = b"<html>"

    def render(self, request):
        request.write(_respond(request, self.body))
        return NOT_DONE_YET


@dataclass(eq=False)
class Trickle(_Leaf):
    """Declares C{total_bytes}; writes one byte at once, then one every C{interval} seconds."""

    total_bytes: int
    interval: float

    def render(self, request):
        request.setHeader("content-length", str(self.total_bytes))
        self._drip(request, self.total_bytes)
        return NOT_DONE_YET

    def _drip(self, request, remaining):
        if remaining == 0:
            request.finish()
            return
        request.write(b"x")
        request.callLater(self.interval, self._drip, request, remaining - 1)


@dataclass(eq=False)
class EndlessChunked(_Leaf):
    """Streams C{chunk_size}-byte chunks for ever (until the client or server stops)."""

    chunk_size: int = 16384

    def render(self, request):
        _respond(request, b"", content_type="application/octet-stream")
        _Stream(request, itertools.repeat(b"x" * self.chunk_size)).start()
        return NOT_DONE_YET


@dataclass(eq=False)
class GzipBomb(_Leaf):
    """
    Gzip of C{decompressed_size} zero bytes, with C{Content-Encoding: gzip}:
    compressed chunk by chunk as the client reads, never held in memory.
    """

    decompressed_size: int
    chunk_size: int = 65536

    def render(self, request):
        _respond(request, b"", headers={"content-encoding": "gzip"})
        _Stream(request, self._chunks()).start()
        return NOT_DONE_YET

    def _chunks(self):
        compressor = zlib.compressobj(wbits=31)
        zeros = bytes(self.chunk_size)
        for start in range(0, self.decompressed_size, self.chunk_size):
            data = compressor.compress(zeros[:self.decompressed_size - start])
            if data:  # never yield b"": an empty write would end a chunked body
                yield data
        yield compressor.flush()


@implementer(IPushProducer)
class _Stream:
    """
    Writes an iterator of non-empty chunks to a request while the transport
    wants more: the transport pauses us synchronously when its buffer is full.
    """

    def __init__(self, request, chunks):
        self.request, self.chunks = request, chunks
        self.paused = self.stopped = False

    def start(self):
        self.request.registerProducer(self, True)
        self.resumeProducing()

    def resumeProducing(self):
        self.paused = False
        while not (self.paused or self.stopped):
            chunk = next(self.chunks, None)
            if chunk is None:
                self.stopped = True
                self.request.unregisterProducer()
                self.request.finish()
                return
            self.request.write(chunk)

    def pauseProducing(self):
        self.paused = True

    def stopProducing(self):
        self.stopped = True


@dataclass(eq=False)
class DeclaredLength(_Leaf):
    """Declares C{declared_length}, sends C{body}, then neither finishes nor closes."""

    declared_length: int
    body: bytes = b"<html>"
    content_type: str = HTML

    def render(self, request):
        request.setHeader("content-length", str(self.declared_length))
        request.write(_respond(request, self.body, content_type=self.content_type))
        return NOT_DONE_YET


def make_certificate(hostname="127.0.0.1", days=1):
    """
    A fresh self-signed certificate for C{hostname} (an IP address or a DNS name),
    generated now: no private key lives in the repository.

    @return: C{(key PEM, certificate PEM)} as bytes.
    """
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    try:
        alt = x509.IPAddress(ipaddress.ip_address(hostname))
    except ValueError:
        alt = x509.DNSName(hostname)
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName([alt]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    return key_pem, certificate.public_bytes(serialization.Encoding.PEM)


class TlsTestServer(TestServer):
    """
    A L{TestServer} speaking HTTPS with a self-signed certificate made at start.

    @ivar certificate_pem: the server's certificate (PEM bytes), to trust it in a test.
    """

    def __init__(self, interface="127.0.0.1", reactor=None, hostname=None, max_version=None):
        super().__init__(interface, reactor)
        self.key_pem, self.certificate_pem = make_certificate(hostname or interface)
        self.max_version = max_version  # a twisted TLSVersion the server goes no higher than

    def start(self):
        from twisted.internet import ssl
        certificate = ssl.PrivateCertificate.loadPEM(self.key_pem + self.certificate_pem)
        if self.max_version is None:
            options = certificate.options()
        else:
            from tinyscrapy.utils.ssl import _get_cert_options_version_kwargs
            options = ssl.CertificateOptions(
                privateKey=certificate.privateKey.original,
                certificate=certificate.original,
                **_get_cert_options_version_kwargs(None, self.max_version))
        self._port = self.reactor.listenSSL(0, self._factory, options,
                                            interface=self.interface)
        return self

    def url(self, path="/"):
        return "https" + super().url(path)[len("http"):]


@dataclass(eq=False)
class CheapGzipBomb(_Leaf):
    """
    Gzip of C{decompressed_size} zero bytes (a multiple of 1 MiB) that costs the server
    almost no CPU: 1 MiB of zeros is compressed once, with a full flush, and that block
    (about 1 KiB) is sent again and again, since after a full flush the same input always
    compresses to the same bytes. L{GzipBomb} compresses every byte, which blocks a
    server that shares the test's reactor for seconds.
    """

    decompressed_size: int

    def render(self, request):
        _respond(request, b"", headers={"content-encoding": "gzip"})
        _Stream(request, self._chunks()).start()
        return NOT_DONE_YET

    def _chunks(self):
        import struct
        compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
        zeros = bytes(1 << 20)
        first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
        block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
        megabytes = self.decompressed_size >> 20
        yield first
        for _ in range(megabytes - 1):
            yield block
        crc = 0  # computed only for a client that read it all
        for _ in range(megabytes):
            crc = zlib.crc32(zeros, crc)
        # an empty final block, then the gzip trailer: CRC-32 and size mod 2**32
        yield b"\x03\x00" + struct.pack("<II", crc, self.decompressed_size & 0xFFFFFFFF)


class DropReused(_Leaf):
    """
    Answers C{body} on a connection's first request and drops the connection, unanswered,
    when another request comes on it: a server (or a load balancer before it) that closed
    an idle keep-alive connection without the client seeing it. C{dropped} counts the
    requests dropped.
    """

    def __init__(self, body=b"<html></html>"):
        super().__init__()
        self.body = body
        self.dropped = 0
        self._served = set()  # the channels that answered once

    def render(self, request):
        channel = request.channel
        if channel in self._served:
            self.dropped += 1
            request.transport.abortConnection()
            return NOT_DONE_YET
        self._served.add(channel)
        return _respond(request, self.body)


class RawServer:
    """
    A TCP server on 127.0.0.1, port 0, that answers each request head with the bytes
    C{answer(path)} makes: for what twisted.web never sends (HTTP/1.0, a malformed status
    line).

    @ivar close_after: None keeps a connection open for the next request; else, after its
        first answer the connection reads nothing more and closes that many seconds later,
        as an HTTP/1.0 server does (the client may meanwhile send on it).
    @ivar hits: L{Counter} of request paths.
    @ivar connections: how many connections were accepted.
    """

    def __init__(self, answer, close_after=None):
        from twisted.internet import reactor
        self.reactor = reactor
        self.answer = answer
        self.close_after = close_after
        self.hits = Counter()
        self.connections = 0
        self._open = set()
        self._calls = []
        self._port = None

    def start(self):
        factory = _RawFactory(self)
        self._port = self.reactor.listenTCP(0, factory, interface="127.0.0.1")
        return self

    def url(self, path="/"):
        return f"http://127.0.0.1:{self._port.getHost().port}/{path.lstrip('/')}"

    def later(self, seconds, f, *args):
        self._calls = [call for call in self._calls if call.active()]
        self._calls.append(self.reactor.callLater(seconds, f, *args))

    def stop(self):
        """@return: a Deferred fired once the port is closed and every connection lost."""
        for call in self._calls:
            if call.active():
                call.cancel()
        closing = [defer.maybeDeferred(self._port.stopListening)]
        for connection in list(self._open):
            closing.append(connection.closed)
            connection.transport.abortConnection()
        return defer.gatherResults(closing).addCallback(_none)


class _RawFactory(Factory):
    noisy = False

    def __init__(self, server):
        self.server = server

    def buildProtocol(self, addr):
        return _RawConnection(self.server)


class _RawConnection(Protocol):
    """One connection of a L{RawServer}: request heads in, its answers out."""

    def __init__(self, server):
        self.server = server
        self.buffer = b""
        self.done = False
        self.closed = defer.Deferred()

    def connectionMade(self):
        self.server.connections += 1
        self.server._open.add(self)

    def dataReceived(self, data):
        if self.done:
            return  # an HTTP/1.0 server reads one request per connection
        self.buffer += data
        while b"\r\n\r\n" in self.buffer and not self.done:
            head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
            path = head.split(b"\r\n", 1)[0].split(b" ")[1].decode("latin-1")
            self.server.hits[path] += 1
            self.transport.write(self.server.answer(path))
            if self.server.close_after is not None:
                self.done = True
                self.server.later(self.server.close_after, self.transport.loseConnection)

    def connectionLost(self, reason):
        self.server._open.discard(self)
        self.closed.callback(None)

"""
Connecting to the Redis of C{--scheduler redis://...} (or C{rediss://...}: TLS, the
server's certificate verified against the system's CAs or C{SCHEDULER_REDIS_TLS_CA}): the
URL, its redacted form for logs, and the first connection, whose failures become one
L{UsageError} line.

txredisapi imports the global reactor: it is imported here only when connecting.
"""

from urllib.parse import unquote, urlsplit

from twisted.internet.defer import CancelledError

from tinyscrapy.exceptions import UsageError


def parse_redis_url(url):
    """
    C{redis[s]://[[user]:password@]host[:port][/db]} as C{(host, port, db, user,
    password)}; L{is_tls} tells the schemes apart.

    @raise UsageError: it is not such a URL (the message shows it redacted).
    """
    try:
        parts = urlsplit(url)
        port = parts.port or 6379
        db = int(parts.path.strip("/") or 0)
    except ValueError as e:
        raise UsageError(f"--scheduler {redact(url)}: not a redis://host:port/db URL "
                         f"({e})") from None
    if parts.scheme.lower() not in ("redis", "rediss") or not parts.hostname or db < 0 \
            or parts.query or parts.fragment:
        raise UsageError(f"--scheduler {redact(url)}: not a redis://host:port/db URL")
    password = unquote(parts.password) if parts.password else None
    user = unquote(parts.username) if parts.username else None
    return parts.hostname, port, db, user, password


def is_tls(url):
    """@return: whether C{url} asks for TLS (C{rediss://})."""
    return url.partition("://")[0].lower() == "rediss"


def tls_options(url, ca=None):
    """
    The client TLS options for C{url}'s host: its certificate is verified, against the
    PEM file C{ca} (a private CA) or else the system's trust store.

    @raise UsageError: C{ca} cannot be read or holds no certificate.
    """
    from OpenSSL import crypto
    from twisted.internet.ssl import Certificate, optionsForClientTLS

    host = parse_redis_url(url)[0]
    trust = None
    if ca:
        try:
            with open(ca, "rb") as f:
                trust = Certificate.loadPEM(f.read())
        except (OSError, ValueError, crypto.Error) as e:
            raise UsageError(f"SCHEDULER_REDIS_TLS_CA={ca}: not a readable PEM "
                             f"certificate ({e})") from None
    return optionsForClientTLS(host, trustRoot=trust)


def redact(url):
    """C{url} with its password (if any) replaced by C{***}: what logs and errors show."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    netloc, slash, path = rest.partition("/")
    userinfo, at, hostport = netloc.rpartition("@")
    if not at:
        return url
    user, colon, _password = userinfo.partition(":")
    shown = f"{user}:***" if colon else "***"  # a lone userinfo is a password in Redis URLs
    return f"{scheme}://{shown}@{hostport}{slash}{path}"


def connect(url, reactor, timeout=10.0, ca=None, retries=0, on_retry=None):
    """
    Connect to the Redis of C{url}, with reconnection once connected.

    txredisapi retries a first connection for ever, so a plain TCP connection is tried
    first: it fails at once, with the reason, when nothing listens there. Then the
    txredisapi connection's own Deferred (AUTH and SELECT done) is waited for, so a
    wrong password or db index fails at once with Redis's answer, and is consumed here
    (no "Unhandled error in Deferred").

    With C{rediss://}, the probe does the TLS handshake too, so a certificate that does
    not verify fails at once with the reason.

    A server that takes the connection but does not answer within C{timeout} seconds (a
    stalled or overloaded Redis), or a connection that times out, is tried again, up to
    C{retries} more times: the first connection is given the same bound,
    C{timeout x (1 + retries)}, as an outage of a crawl under way.

    @param on_retry: called with C{(attempt, reason)} before each new attempt.
    @return: a Deferred firing with the txredisapi connection once Redis answered PING;
        it errbacks with L{UsageError} ("cannot connect to URL: reason", the URL
        redacted) otherwise.
    """
    return _Attempts(url, reactor, timeout, ca, retries, on_retry).next()


class _Attempts:
    """The attempts of L{connect}: one after the other while Redis does not answer."""

    def __init__(self, url, reactor, timeout, ca, retries, on_retry):
        self.url, self.reactor, self.timeout, self.ca = url, reactor, timeout, ca
        self.left = max(0, retries)
        self.on_retry = on_retry
        self.made = 0

    def next(self):
        self.made += 1
        d = _attempt(self.url, self.reactor, self.timeout, self.ca)
        d.addErrback(self._eb_attempt_failed)
        return d

    def _eb_attempt_failed(self, failure):
        from twisted.internet import error
        silent = failure.check(CancelledError, error.TimeoutError,
                               error.ConnectingCancelledError)
        if silent and self.left > 0:
            self.left -= 1
            reason = _no_answer(self.timeout, 1)
            if self.on_retry is not None:
                self.on_retry(self.made, reason)
            return self.next()
        if silent:
            raise UsageError(f"cannot connect to {redact(self.url)}: "
                             f"{_no_answer(self.timeout, self.made)}")
        return _eb_cannot_connect(failure, self.url)


def _no_answer(timeout, attempts):
    """Why a silent server was given up on (a stalled Redis, not "not a Redis")."""
    tries = f" ({attempts} attempts: SCHEDULER_REDIS_TIMEOUT x (1 + SCHEDULER_REDIS_RETRIES))" \
        if attempts > 1 else ""
    return (f"no answer within {timeout:g} s{tries}; the server took the connection and "
            f"said nothing: a stalled or overloaded Redis")


def require_txredisapi(url):
    """@raise UsageError: txredisapi, which C{--scheduler url} needs, is not installed."""
    try:
        import txredisapi  # noqa: F401
    except ImportError:
        raise UsageError(f"--scheduler {redact(url)} needs txredisapi: "
                         f"pip install 'tinyscrapy[redis]'") from None


def _attempt(url, reactor, timeout, ca):
    """One attempt of L{connect}: the probe, then txredisapi's connection and a PING.
    @return: a Deferred of the connection; it errbacks with the attempt's own failure
        (C{CancelledError} when nothing answered within C{timeout})."""
    from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol, wrapClientTLS

    host, port, _db, _user, _password = parse_redis_url(url)
    tls = tls_options(url, ca) if is_tls(url) else None
    require_txredisapi(url)  # checked before anything connects
    endpoint = TCP4ClientEndpoint(reactor, host, port, timeout=timeout)
    probe = _Probe(tls is not None)
    if tls is not None:
        endpoint = wrapClientTLS(tls, endpoint)
    d = connectProtocol(endpoint, probe)
    d.addCallback(_cb_probe_connected, probe)
    call = reactor.callLater(timeout, d.cancel)
    d.addBoth(_cb_probed, call, probe)
    d.addCallback(_cb_reachable, url, reactor, timeout, tls)
    return d


def _probe_class():
    from twisted.internet.defer import Deferred
    from twisted.internet.protocol import Protocol

    class Probe(Protocol):
        """Connected (and, with TLS, handshaken: a PING is answered) or not."""

        def __init__(self, tls):
            self.tls = tls
            self.done = Deferred()

        def connectionMade(self):
            if self.tls:
                self.transport.write(b"PING\r\n")  # the handshake happens on the way
            else:
                self.done.callback(self)

        def dataReceived(self, data):
            if not self.done.called:
                self.done.callback(self)

        def connectionLost(self, reason):
            if not self.done.called:
                self.done.errback(reason)
    return Probe


def _Probe(tls):
    return _probe_class()(tls)


def _cb_probe_connected(protocol, probe):
    return probe.done


def _cb_probed(result, call, probe):
    if call.active():
        call.cancel()
    if hasattr(result, "check") and probe.transport is not None:  # no answer: let it go
        probe.transport.abortConnection()
    return result


def make_client(url, timeout, tls=None, quiet=False):
    """
    A txredisapi lazy connection to C{url} that reconnects by itself (soon: at most
    about a second between attempts), with C{timeout} on connecting and on each reply.
    The db index is selected only when it is not 0 (one command less to time out on a
    reconnection). C{quiet}: nobody waits for this client's first connection (a
    replacement), so its failure (an AUTH that timed out) is consumed here.
    """
    import txredisapi

    host, port, db, user, password = parse_redis_url(url)
    credentials = {"password": password}
    if user:  # older txredisapi releases have no username
        credentials["username"] = user
    if tls is not None:
        credentials["ssl_context_factory"] = tls
    client = txredisapi.lazyConnection(
        host, port, db or None, reconnect=True, charset=None, convertNumbers=False,
        connectTimeout=timeout, replyTimeout=timeout, **credentials)
    factory = getattr(client, "_factory", None)
    if factory is not None:
        factory.initialDelay, factory.maxDelay = 0.1, max(0.1, min(1.0, timeout))
    ready = getattr(client, "_connected", None)
    if quiet and ready is not None:
        ready.addErrback(_ignore)
    return client


def _ignore(_failure):
    return None


def _cb_reachable(probe, url, reactor, timeout, tls):
    """Something listens: close the probe and open txredisapi's connection."""
    probe.transport.loseConnection()
    client = make_client(url, timeout, tls)
    ready = getattr(client, "_connected", None)  # fires once AUTH and SELECT are done
    if ready is None or ready.called:
        ready = client.ping()
    else:
        ready.addCallback(_cb_ping, client)
    call = reactor.callLater(timeout, ready.cancel)
    ready.addBoth(_cb_answered, client, call)
    return ready


def _cb_ping(_, client):
    """Connected, authenticated and on its db: one PING proves the server answers."""
    return client.ping()


def _cb_answered(result, client, call):
    if call.active():
        call.cancel()
    if hasattr(result, "check"):  # a Failure: refused or no answer
        d = client.disconnect()
        d.addBoth(_cb_reraise, result)
        return d
    return client


def _cb_reraise(_, failure):
    return failure


def _eb_cannot_connect(failure, url):
    from twisted.internet import error
    if failure.check(UsageError):
        return failure
    from twisted.internet.ssl import SSL
    if failure.check(SSL.Error):
        raise UsageError(f"cannot connect to {redact(url)}: TLS failed "
                         f"({_tls_reason(failure.value)})")
    reasons = {error.ConnectionRefusedError: "Connection refused",
               error.TimeoutError: "timed out", error.DNSLookupError: "unknown host",
               error.ConnectingCancelledError: "timed out"}
    reason = next((text for kind, text in reasons.items() if failure.check(kind)),
                  None)
    if reason is None:
        reason = failure.getErrorMessage() or failure.type.__name__
        reason = reason.removeprefix("Redis error: ")
    raise UsageError(f"cannot connect to {redact(url)}: {reason}")


def _tls_reason(error):
    """The OpenSSL reason of a failed handshake, e.g. C{certificate verify failed}."""
    for detail in getattr(error, "args", [[]])[0] or ():
        if isinstance(detail, tuple) and len(detail) == 3:
            return detail[2]
    return str(error) or type(error).__name__

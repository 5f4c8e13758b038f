"""
Connecting to the Redis of C{--scheduler redis://...}: the URL, its redacted form for
logs, and the first connection, whose failures become one L{UsageError} line.

txredisapi imports the global reactor: it is imported here only when connecting.
"""

from urllib.parse import unquote, urlsplit

from twisted.internet.defer import CancelledError

from tinyscrapy.errors import UsageError


def parse_redis_url(url):
    """
    C{redis://[[user]:password@]host[:port][/db]} as C{(host, port, db, user, password)}.

    @raise UsageError: it is not such a URL (the message shows it redacted).
    """
    try:
        parts = urlsplit(url)
        port = parts.port or 6379
        db = int(parts.path.strip("/") or 0)
    except ValueError as e:
        raise UsageError(f"--scheduler {redact(url)}: not a redis://host:port/db URL "
                         f"({e})") from None
    if parts.scheme.lower() != "redis" or not parts.hostname or db < 0 \
            or parts.query or parts.fragment:
        raise UsageError(f"--scheduler {redact(url)}: not a redis://host:port/db URL")
    password = unquote(parts.password) if parts.password else None
    user = unquote(parts.username) if parts.username else None
    return parts.hostname, port, db, user, password


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


def connect(url, reactor, timeout=10.0):
    """
    Connect to the Redis of C{url}, with reconnection once connected.

    txredisapi retries a first connection for ever, so a plain TCP connection is tried
    first: it fails at once, with the reason, when nothing listens there. Then the
    txredisapi connection's own Deferred (AUTH and SELECT done) is waited for, so a
    wrong password or db index fails at once with Redis's answer, and is consumed here
    (no "Unhandled error in Deferred").

    @return: a Deferred firing with the txredisapi connection once Redis answered PING;
        it errbacks with L{UsageError} ("cannot connect to URL: reason", the URL
        redacted) otherwise, after at most C{timeout} seconds.
    """
    from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
    from twisted.internet.protocol import Protocol

    host, port, db, user, password = parse_redis_url(url)
    try:
        import txredisapi  # noqa: F401 - checked before anything connects
    except ImportError:
        raise UsageError(f"--scheduler {redact(url)} needs txredisapi: "
                         f"pip install 'tinyscrapy[redis]'") from None
    endpoint = TCP4ClientEndpoint(reactor, host, port, timeout=timeout)
    d = connectProtocol(endpoint, Protocol())
    d.addCallback(_cb_reachable, host, port, db, user, password, reactor, timeout)
    d.addErrback(_eb_cannot_connect, url)
    return d


def _cb_reachable(protocol, host, port, db, user, password, reactor, timeout):
    """Something listens: close the probe and open txredisapi's connection."""
    import txredisapi

    protocol.transport.loseConnection()
    credentials = {"password": password}
    if user:  # older txredisapi releases have no username
        credentials["username"] = user
    client = txredisapi.lazyConnection(
        host, port, db, reconnect=True, charset=None, convertNumbers=False,
        connectTimeout=timeout, replyTimeout=timeout, **credentials)
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
    reasons = {error.ConnectionRefusedError: "Connection refused",
               error.TimeoutError: "timed out", error.DNSLookupError: "unknown host",
               error.ConnectingCancelledError: "timed out",
               CancelledError: "no answer from Redis (is it a Redis server?)"}
    reason = next((text for kind, text in reasons.items() if failure.check(kind)),
                  None)
    if reason is None:
        reason = failure.getErrorMessage() or failure.type.__name__
        reason = reason.removeprefix("Redis error: ")
    raise UsageError(f"cannot connect to {redact(url)}: {reason}")

"""
L{HttpFetcher}: one HTTP transfer through treq, on one persistent connection pool.

What it adds to treq, because a crawler meets servers that misbehave (see TRAPS.md):

    - the pool keeps as many idle connections per host as C{CONCURRENT_REQUESTS_PER_DOMAIN},
      closes idle ones after C{DOWNLOAD_IDLE_TIMEOUT}, and never replays a request on its
      own (C{retryAutomatically=False}): retrying is the retry middleware's job;
    - C{DOWNLOAD_TIMEOUT} covers the whole download, body included: treq's own timeout
      stops at the headers, so the timer here aborts the body's transport too;
    - C{DOWNLOAD_MAXSIZE} refuses a declared C{Content-Length} before reading the body and
      cuts any other body the moment it crosses the limit;
    - treq manages no cookies (the cookies middleware does);
    - a request with C{meta["proxy"]} goes through L{tinyscrapy.proxy.ProxyRouter}'s agent
      (a forward proxy for http, a CONNECT tunnel for https).
"""

import logging
from http.cookiejar import DefaultCookiePolicy

from twisted.internet.defer import CancelledError, Deferred, maybeDeferred
from twisted.internet.protocol import Protocol
from twisted.web.client import Agent, HTTPConnectionPool, ResponseDone
from twisted.web.http import PotentialDataLoss

from tinyscrapy.errors import DownloadTimeout, ResponseTooLarge
from tinyscrapy.http import Headers, HttpResponse
from tinyscrapy.proxy import ProxyRouter

logger = logging.getLogger(__name__)


class HttpFetcher:
    """
    Fetch requests with treq over a shared L{HTTPConnectionPool}.

    @ivar pool: the connection pool; L{close} empties it.
    """

    def __init__(self, reactor, settings):
        from treq.client import HTTPClient

        self.reactor = reactor
        self.timeout = settings.getfloat("DOWNLOAD_TIMEOUT")
        self.maxsize = settings.getint("DOWNLOAD_MAXSIZE")
        self.warnsize = settings.getint("DOWNLOAD_WARNSIZE")
        self.pool = HTTPConnectionPool(reactor, persistent=True)
        self.pool.maxPersistentPerHost = max(1, settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"))
        self.pool.retryAutomatically = False
        self.pool.cachedConnectionTimeout = settings.getfloat("DOWNLOAD_IDLE_TIMEOUT", 60.0)
        agent = Agent(reactor, pool=self.pool,
                      connectTimeout=settings.getfloat("DOWNLOAD_CONNECT_TIMEOUT"))
        self.client = HTTPClient(agent, cookiejar=_no_cookies())
        # proxies: tinyscrapy.proxy picks the agent for requests with meta["proxy"]
        self.proxies = ProxyRouter(reactor, self.pool,
                                   settings.getfloat("DOWNLOAD_CONNECT_TIMEOUT"))

    def fetch(self, request, spider=None):
        """
        Download C{request}.

        @return: a Deferred that fires with an L{HttpResponse} (any status); it errbacks
            with L{DownloadTimeout}, L{ResponseTooLarge}, or the connection's error.
            Cancelling it aborts the transfer.
        """
        maxsize = request.meta.get("download_maxsize", self.maxsize) if request._meta \
            else self.maxsize
        transfer = _Transfer(request, maxsize)
        headers = dict(request.header_items()) or None
        d = maybeDeferred(self._send, request, headers)
        d.addCallback(transfer.cb_headers)
        timeout = request.meta.get("download_timeout", self.timeout) if request._meta \
            else self.timeout
        if timeout:
            transfer.timer = self.reactor.callLater(timeout, transfer.time_out, d, timeout)
            d.addBoth(transfer.cb_stop_timer)
        return d

    def _send(self, request, headers):
        """The treq request: direct, or through the request's proxy (L{ProxyRouter})."""
        agent, headers = self.proxies.route(request, headers)
        client = self.client
        if agent is not None:
            from treq.client import HTTPClient
            client = HTTPClient(agent, cookiejar=self.client._cookiejar)
        return client.request(request.method, request.url, headers=headers,
                              data=request.body or None, allow_redirects=False,
                              unbuffered=True)

    def close(self):
        """Close every pooled connection. @return: a Deferred fired once they are closed."""
        return self.pool.closeCachedConnections()


def _no_cookies():
    """A cookie jar for treq that refuses to store anything."""
    from treq.cookies import IndexableCookieJar
    return IndexableCookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


class _Transfer:
    """The state of one download: its body reader and its timer."""

    def __init__(self, request, maxsize):
        self.request = request
        self.maxsize = maxsize
        self.reader = None
        self.timer = None
        self.timed_out = None

    def cb_headers(self, treq_response):
        """The status and headers arrived: refuse a too-large declared body, read the rest."""
        original = treq_response.original
        declared = original.length if isinstance(original.length, int) else None
        if self.maxsize and declared is not None and declared > self.maxsize:
            original.deliverBody(_Discard())
            raise ResponseTooLarge(
                f"Content-Length {declared} is larger than the limit {self.maxsize}")
        self.reader = _BodyReader(self.maxsize)
        d = self.reader.finished  # taken first: an empty body finishes inside deliverBody
        original.deliverBody(self.reader)
        d.addCallback(self.cb_body, original)
        return d

    def cb_body(self, body, original):
        headers = Headers()
        for name, values in original.headers.getAllRawHeaders():
            dict.__setitem__(headers, name.decode("latin-1").lower(),
                             [value.decode("latin-1") for value in values])
        return HttpResponse(self.request.url, original.code, headers, body, self.request)

    def time_out(self, d, timeout):
        """The whole-download timer fired: cancel the wait for headers, or abort the body."""
        self.timer = None
        self.timed_out = DownloadTimeout(f"took longer than {timeout} seconds")
        if self.reader is not None:
            self.reader.abort(self.timed_out)
        else:
            d.cancel()

    def cb_stop_timer(self, result):
        if self.timer is not None and self.timer.active():
            self.timer.cancel()
        self.timer = None
        if self.timed_out is not None and hasattr(result, "check") \
                and result.check(CancelledError):
            raise self.timed_out
        return result


class _BodyReader(Protocol):
    """
    Collect a response body, cutting it at C{maxsize}.

    @ivar finished: fires with the body (bytes) or errbacks with the reason it stopped.
    """

    def __init__(self, maxsize):
        self.maxsize = maxsize
        self.chunks = []
        self.size = 0
        self.finished = Deferred()

    def dataReceived(self, data):
        if self.finished is None:
            return
        self.size += len(data)
        if self.maxsize and self.size > self.maxsize:
            self.abort(ResponseTooLarge(
                f"body is larger than the limit {self.maxsize} (cut at {self.size} bytes)"))
            return
        self.chunks.append(data)

    def abort(self, reason):
        """Stop reading, close the connection, and errback C{finished} with C{reason}."""
        finished, self.finished = self.finished, None
        if self.transport is not None:
            self.transport.stopProducing()
        if finished is not None:
            finished.errback(reason)

    def connectionLost(self, reason):
        finished, self.finished = self.finished, None
        if finished is None:
            return
        if reason.check(ResponseDone, PotentialDataLoss):
            finished.callback(b"".join(self.chunks))
        else:
            finished.errback(reason)


class _Discard(Protocol):
    """Drop a body we refused, closing its connection at once."""

    def connectionMade(self):
        self.transport.stopProducing()

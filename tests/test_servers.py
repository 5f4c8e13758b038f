"""
Tests for L{tests.servers}, the harness every integration test stands on.
"""

import gzip
import json

import treq
from twisted.internet import defer, reactor, task
from twisted.trial import unittest
from twisted.web.client import (
    Agent,
    HTTPConnectionPool,
    ResponseFailed,
    ResponseNeverReceived,
)
from twisted.web.iweb import UNKNOWN_LENGTH

from tests.servers import (
    Delay,
    Drop,
    Echo,
    EndlessChunked,
    Gzip,
    GzipBomb,
    NoAnswer,
    Partial,
    Redirect,
    Sequence,
    SetCookie,
    StallAfterHeaders,
    Status,
    TestServer,
    Trickle,
)


class TestServerTests(unittest.TestCase):
    """Tests for L{TestServer} and its resources, through treq on a real socket."""

    def setUp(self):
        self.server = TestServer().start()
        self.addCleanup(self.server.stop)
        self.pool = HTTPConnectionPool(reactor, persistent=False)
        self.addCleanup(self.pool.closeCachedConnections)

    def get(self, url, **kwargs):
        """GET C{url} through the test's pool, redirects not followed."""
        return treq.get(url, pool=self.pool, allow_redirects=False, **kwargs)

    @defer.inlineCallbacks
    def test_add_page_lists_links(self):
        """add_page answers HTML with one <a href> per link, relative or absolute."""
        url = self.server.add_page("/", links=["/a", "b?x=1", "http://example.com/"])
        response = yield self.get(url)
        body = yield response.text()
        self.assertEqual(response.code, 200)
        self.assertIn('<a href="/a">', body)
        self.assertIn('<a href="b?x=1">', body)
        self.assertIn('<a href="http://example.com/">', body)
        self.assertEqual(url, f"http://127.0.0.1:{self.server.port}/")

    @defer.inlineCallbacks
    def test_hits_and_requests_recorded(self):
        """Each request is counted by path with its query, and recorded."""
        self.server.add_page("/a")
        yield (yield self.get(self.server.url("/a?q=1"))).content()
        yield (yield self.get(self.server.url("/a?q=1"))).content()
        yield (yield self.get(self.server.url("/missing"))).content()
        self.assertEqual(self.server.hits, {"/a?q=1": 2, "/missing": 1})
        first = self.server.requests[0]
        self.assertEqual((first.method, first.path, first.body), ("GET", "/a?q=1", b""))
        self.assertEqual(first.headers["host"], f"127.0.0.1:{self.server.port}")
        self.assertNotEqual(first.client_port, self.server.port)

    @defer.inlineCallbacks
    def test_unknown_path_is_404(self):
        """A path nobody added answers 404."""
        response = yield self.get(self.server.url("/nowhere"))
        yield response.content()
        self.assertEqual(response.code, 404)

    @defer.inlineCallbacks
    def test_delay_and_max_in_flight(self):
        """Delay answers after its delay; three concurrent requests peak at 3 in flight."""
        url = self.server.add("/slow", Delay(0.2, b"late"))
        started = reactor.seconds()
        responses = yield defer.gatherResults([self.get(url) for _ in range(3)])
        bodies = yield defer.gatherResults([r.content() for r in responses])
        self.assertGreaterEqual(reactor.seconds() - started, 0.2)
        self.assertEqual(bodies, [b"late"] * 3)
        self.assertEqual(self.server.max_in_flight, 3)
        self.assertEqual(self.server.in_flight, 0)
        self.assertEqual(self.server.connections, 3)

    @defer.inlineCallbacks
    def test_redirect_sends_location(self):
        """Redirect answers its code with a Location header."""
        url = self.server.add("/old", Redirect("/new", 301))
        response = yield self.get(url)
        yield response.content()
        self.assertEqual(response.code, 301)
        self.assertEqual(response.headers.getRawHeaders("location"), ["/new"])

    @defer.inlineCallbacks
    def test_sequence_answers_in_order(self):
        """Sequence answers 500, then 200, then repeats the last one."""
        url = self.server.add("/flaky", Sequence([Status(500), Status(200, b"ok")]))
        codes = []
        for _ in range(3):
            response = yield self.get(url)
            yield response.content()
            codes.append(response.code)
        self.assertEqual(codes, [500, 200, 200])

    @defer.inlineCallbacks
    def test_gzip_decompresses_to_body(self):
        """Gzip sends Content-Encoding: gzip and the body it was given, compressed."""
        url = self.server.add("/z", Gzip(b"hello " * 100))
        response = yield self.get(url)
        body = yield response.content()  # treq decodes gzip itself
        self.assertEqual(body, b"hello " * 100)
        self.assertEqual(self.server.requests[0].headers["accept-encoding"], "gzip")

    @defer.inlineCallbacks
    def test_gzip_bomb_streams(self):
        """GzipBomb sends gzip that inflates to exactly its declared size of zeros."""
        url = self.server.add("/bomb", GzipBomb(1_000_000, chunk_size=4096))
        # A bare Agent: treq would decode the body itself.
        response = yield Agent(reactor, pool=self.pool).request(b"GET", url.encode())
        self.assertEqual(response.headers.getRawHeaders("content-encoding"), ["gzip"])
        compressed = yield treq.content(response)
        self.assertLess(len(compressed), 10_000)
        self.assertEqual(gzip.decompress(compressed), bytes(1_000_000))

    @defer.inlineCallbacks
    def test_echo(self):
        """Echo answers the method, path, headers and body it received."""
        url = self.server.add("/echo", Echo())
        response = yield treq.post(url + "?a=b", data=b"payload", pool=self.pool,
                                   headers={"X-Test": ["1", "2"]})
        echo = json.loads((yield response.content()))
        self.assertEqual(echo["method"], "POST")
        self.assertEqual(echo["path"], "/echo?a=b")
        self.assertEqual(echo["headers"]["x-test"], ["1", "2"])
        self.assertEqual(echo["body"], "payload")

    @defer.inlineCallbacks
    def test_drop_fails_the_client(self):
        """Drop closes the connection unanswered; the request leaves the in-flight count."""
        url = self.server.add("/drop", Drop())
        yield self.assertFailure(self.get(url), ResponseNeverReceived)
        self.assertEqual(self.server.in_flight, 0)
        self.assertEqual(self.server.hits["/drop"], 1)

    @defer.inlineCallbacks
    def test_partial_body_then_close(self):
        """Partial sends part of the declared body, then the client sees the loss."""
        url = self.server.add("/partial", Partial(b"abc", 100))
        response = yield self.get(url)
        self.assertEqual(response.length, 100)
        yield self.assertFailure(response.content(), ResponseFailed)

    @defer.inlineCallbacks
    def test_trickle(self):
        """Trickle delivers its bytes one at a time, taking about total * interval."""
        url = self.server.add("/drip", Trickle(4, 0.05))
        started = reactor.seconds()
        response = yield self.get(url)
        body = yield response.content()
        self.assertEqual(body, b"xxxx")
        self.assertGreaterEqual(reactor.seconds() - started, 0.15)

    @defer.inlineCallbacks
    def test_set_cookie(self):
        """SetCookie sends one Set-Cookie header."""
        url = self.server.add("/c", SetCookie("session", "42", domain="127.0.0.1"))
        response = yield self.get(url)
        yield response.content()
        [cookie] = response.headers.getRawHeaders("set-cookie")
        self.assertTrue(cookie.startswith("session=42"), cookie)
        self.assertIn("Domain=127.0.0.1", cookie)

    @defer.inlineCallbacks
    def test_endless_chunked_until_client_leaves(self):
        """EndlessChunked streams until the client closes the connection."""
        url = self.server.add("/endless", EndlessChunked(1024))
        response = yield self.get(url, unbuffered=True)
        self.assertEqual(response.length, UNKNOWN_LENGTH)
        received = []

        def collect(data):
            received.append(data)
            if sum(map(len, received)) > 1_000_000:
                raise ValueError("enough")

        yield self.assertFailure(treq.collect(response, collect), ValueError)
        while self.server.in_flight:
            yield deferLater(0.01)


class PersistentConnectionTests(unittest.TestCase):
    """Tests for L{TestServer.connections} with a persistent pool."""

    @defer.inlineCallbacks
    def test_reused_connection_counted_once(self):
        """Two sequential requests on a persistent pool use one connection."""
        server = TestServer().start()
        self.addCleanup(server.stop)
        pool = HTTPConnectionPool(reactor, persistent=True)
        self.addCleanup(pool.closeCachedConnections)
        url = server.add_page("/")
        for _ in range(2):
            response = yield treq.get(url, pool=pool)
            yield response.content()
        self.assertEqual(server.connections, 1)
        self.assertEqual(len({r.client_port for r in server.requests}), 1)


class StopTests(unittest.TestCase):
    """Tests for L{TestServer.stop}: the reactor is left clean."""

    def setUp(self):
        self.server = TestServer().start()
        self.pool = HTTPConnectionPool(reactor, persistent=False)

    @defer.inlineCallbacks
    def test_stop_with_stalled_body(self):
        """stop() closes a response stalled after its headers; the client gets an error."""
        url = self.server.add("/stall", StallAfterHeaders())
        response = yield treq.get(url, pool=self.pool)
        body = response.content()
        self.assertEqual(self.server.in_flight, 1)
        yield self.server.stop()
        self.assertEqual(self.server.in_flight, 0)
        yield self.assertFailure(body, ResponseFailed)

    @defer.inlineCallbacks
    def test_stop_while_streaming(self):
        """stop() ends an EndlessChunked stream that the client is still reading."""
        url = self.server.add("/endless", EndlessChunked(4096))
        response = yield treq.get(url, pool=self.pool, unbuffered=True)
        enough = defer.Deferred()
        received = []

        def collect(data):
            received.append(data)
            if sum(map(len, received)) > 100_000 and not enough.called:
                enough.callback(None)

        body = treq.collect(response, collect)
        yield enough
        yield self.server.stop()
        yield self.assertFailure(body, ResponseFailed)

    @defer.inlineCallbacks
    def test_stop_with_pending_delay_and_no_answer(self):
        """stop() cancels a pending Delay and closes a request never answered."""
        delayed = treq.get(self.server.add("/slow", Delay(60)), pool=self.pool)
        silent = treq.get(self.server.add("/silent", NoAnswer()), pool=self.pool)
        while self.server.in_flight < 2:
            yield deferLater(0.01)
        yield self.server.stop()
        self.assertEqual(self.server.in_flight, 0)
        yield self.assertFailure(delayed, ResponseNeverReceived)
        yield self.assertFailure(silent, ResponseNeverReceived)

    @defer.inlineCallbacks
    def test_client_going_away_cancels_delay(self):
        """A client that gives up cancels the pending Delay at once."""
        self.addCleanup(self.server.stop)
        request = treq.get(self.server.add("/slow", Delay(60)), pool=self.pool)
        while self.server.in_flight < 1:
            yield deferLater(0.01)
        request.cancel()
        yield self.assertFailure(request, ResponseNeverReceived)
        while self.server.in_flight:
            yield deferLater(0.01)
        answers = [c for c in reactor.getDelayedCalls() if c.func == Delay._answer]
        self.assertEqual(answers, [])


def deferLater(seconds):
    """A Deferred that fires with L{None} after C{seconds}."""
    return task.deferLater(reactor, seconds)

"""
The fetch path against servers that misbehave on purpose: connection reuse and closing,
whole-download timeouts, size limits, the send hook, and bad URLs.
"""

import socket

from twisted.internet import defer, error, reactor
from twisted.trial import unittest
from twisted.web.client import HTTPConnectionPool, ResponseNeverReceived

from tinyscrapy.core.downloader.handlers.pool import CrawlAgent
from tinyscrapy.exceptions import DownloadTimeout, InvalidUrl, ResponseTooLarge
from tinyscrapy.http import Request

from .fetchutil import (
    CapturedLogs,
    connections_closed,
    failure_of,
    get,
    make_fetcher,
    open_connections,
    wait_until,
)
from .helpers import serve
from .servers import (
    DeclaredLength,
    Delay,
    Drop,
    Echo,
    EndlessChunked,
    NoAnswer,
    Page,
    Partial,
    StallAfterHeaders,
    Trickle,
)


class FetchTestCase(unittest.TestCase):
    """A server per test."""

    def setUp(self):
        self.server = serve(self)


class ConnectionTests(FetchTestCase):
    """The pool: reuse, per-host size, no replays, idle closing, clean close."""

    @defer.inlineCallbacks
    def test_sequential_requests_share_one_connection(self):
        """Five requests one after the other: the server accepts one TCP connection."""
        fetcher = make_fetcher(self)
        for i in range(5):
            response = yield get(fetcher, self.server.add_page(f"/{i}"))
            self.assertEqual(response.status, 200)
        self.assertEqual(self.server.connections, 1)
        self.assertEqual(len({r.client_port for r in self.server.requests}), 1)

    @defer.inlineCallbacks
    def test_pool_keeps_as_many_as_per_domain(self):
        """Two waves of six parallel requests with CONCURRENT_REQUESTS_PER_DOMAIN=6:
        six connections in all (twisted's default pool keeps 2 and would open 10)."""
        fetcher = make_fetcher(self, {"CONCURRENT_REQUESTS_PER_DOMAIN": 6})
        for wave in range(2):
            urls = [self.server.add(f"/{wave}/{i}", Delay(0.05, b"<html></html>"))
                    for i in range(6)]
            yield defer.gatherResults([get(fetcher, url) for url in urls])
        self.assertEqual(self.server.connections, 6)
        self.assertEqual(self.server.max_in_flight, 6)

    @defer.inlineCallbacks
    def test_replayed_once_on_a_new_connection(self):
        """A GET that dies unanswered on a reused connection is sent once more, on a new
        connection; when that one dies too, it fails once (the server saw it twice)."""
        fetcher = make_fetcher(self)
        yield get(fetcher, self.server.add_page("/"))
        drop = self.server.add("/drop", Drop())
        failure, _ = yield failure_of(get(fetcher, drop))
        self.assertIsInstance(failure, ResponseNeverReceived)
        self.assertEqual(self.server.hits["/drop"], 2)
        self.assertEqual(self.server.connections, 2)
        self.assertEqual(fetcher.stats.get_value("downloader/replayed_count"), 1)

    @defer.inlineCallbacks
    def test_no_replay_of_a_post_or_on_a_new_connection(self):
        """A POST is never sent twice, nor is a request that died on a connection made for
        it: each fails at once."""
        fetcher = make_fetcher(self)
        drop = self.server.add("/drop", Drop())
        failure, _ = yield failure_of(get(fetcher, drop))  # the connection's first request
        self.assertIsInstance(failure, ResponseNeverReceived)
        yield get(fetcher, self.server.add_page("/"))
        failure, _ = yield failure_of(get(fetcher, drop, method="POST", body=b"a=1"))
        self.assertIsInstance(failure, ResponseNeverReceived)
        self.assertEqual(self.server.hits["/drop"], 2)
        self.assertIsNone(fetcher.stats.get_value("downloader/replayed_count"))

    @defer.inlineCallbacks
    def test_idle_connections_are_closed(self):
        """After DOWNLOAD_IDLE_TIMEOUT the pooled connection is closed; the next request
        opens a new one."""
        fetcher = make_fetcher(self, {"DOWNLOAD_IDLE_TIMEOUT": 0.2})
        url = self.server.add_page("/")
        yield get(fetcher, url)
        self.assertEqual(open_connections(self.server), 1)
        closed = yield connections_closed(self.server)
        self.assertTrue(closed, "the server still has the connection open")
        yield get(fetcher, url)
        self.assertEqual(self.server.connections, 2)

    @defer.inlineCallbacks
    def test_close_closes_pooled_connections(self):
        """close() fires once the pooled connections are closed."""
        fetcher = make_fetcher(self)
        yield defer.gatherResults([get(fetcher, self.server.add_page(f"/{i}"))
                                   for i in range(3)])
        yield fetcher.close()
        closed = yield connections_closed(self.server)
        self.assertTrue(closed, "the server still has the connection open")

    @defer.inlineCallbacks
    def test_close_aborts_running_transfers(self):
        """A transfer still waiting when the fetcher closes errbacks; nothing stays open."""
        fetcher = make_fetcher(self)
        d = get(fetcher, self.server.add("/never", NoAnswer()))
        yield wait_until(lambda: self.server.hits["/never"] == 1)
        yield fetcher.close()
        failure, _ = yield failure_of(d)
        self.assertIsInstance(failure, Exception)
        self.assertEqual(fetcher.statistics().transfers, 0)

    @defer.inlineCallbacks
    def test_cancel_aborts_the_transfer(self):
        """Cancelling the fetch while the body trickles in closes the connection; no late
        result or error follows."""
        fetcher = make_fetcher(self)
        d = get(fetcher, self.server.add("/stall", StallAfterHeaders()))
        yield wait_until(lambda: self.server.hits["/stall"] == 1)
        # the headers and the first body bytes are in: the transfer is in the body stage
        yield wait_until(lambda: any(t.wire for t in fetcher._transfers))
        d.cancel()
        failure, _ = yield failure_of(d)
        self.assertIsInstance(failure, defer.CancelledError)
        closed = yield connections_closed(self.server)
        self.assertTrue(closed, "the server still has the connection open")
        self.assertEqual(fetcher.statistics().transfers, 0)

    @defer.inlineCallbacks
    def test_cancel_while_connecting_or_waiting(self):
        """Cancelling before the answer (no headers yet) stops the request too."""
        fetcher = make_fetcher(self)
        d = get(fetcher, self.server.add("/never", NoAnswer()))
        d.cancel()
        failure, _ = yield failure_of(d)
        self.assertIsInstance(failure, defer.CancelledError)
        d = get(fetcher, self.server.url("/never"))
        yield wait_until(lambda: self.server.hits["/never"] == 1)
        d.cancel()
        failure, _ = yield failure_of(d)
        self.assertIsInstance(failure, defer.CancelledError)
        closed = yield connections_closed(self.server)
        self.assertTrue(closed, "the server still has the connection open")

    @defer.inlineCallbacks
    def test_request_body_and_method_sent(self):
        """A POST body arrives whole, with its Content-Length; headers are passed on."""
        fetcher = make_fetcher(self)
        url = self.server.add("/echo", Echo())
        response = yield get(fetcher, url, method="POST", body=b"a=1&b=2",
                             headers={"X-Test": "yes"})
        echo = response.json()
        self.assertEqual(echo["method"], "POST")
        self.assertEqual(echo["body"], "a=1&b=2")
        self.assertEqual(echo["headers"]["content-length"], ["7"])
        self.assertEqual(echo["headers"]["x-test"], ["yes"])
        self.assertEqual(echo["headers"]["host"], [f"127.0.0.1:{self.server.port}"])

    @defer.inlineCallbacks
    def test_treq_runs_on_the_crawl_agent(self):
        """CrawlAgent is an IAgent: treq's HTTPClient works on it (the same pool)."""
        from treq.client import HTTPClient
        fetcher = make_fetcher(self)
        url = self.server.add_page("/", body="hello")
        yield get(fetcher, url)
        response = yield HTTPClient(fetcher.agent).get(url)
        text = yield response.text()
        self.assertIn("hello", text)
        self.assertEqual(self.server.connections, 1)


class SendHookTests(FetchTestCase):
    """C{on_sent} is called when a request goes out, not when it is queued."""

    @defer.inlineCallbacks
    def test_on_sent_once_per_request_before_arrival(self):
        """Each request is reported once, stamped no later than the server saw it."""
        sent = []

        def on_sent(request):
            sent.append((request.url, reactor.seconds()))

        fetcher = make_fetcher(self, on_sent=on_sent)
        urls = [self.server.add(f"/{i}", Delay(0.05, b"<html></html>")) for i in range(3)]
        yield defer.gatherResults([get(fetcher, url) for url in urls])
        self.assertEqual(sorted(url for url, _ in sent), sorted(urls))
        arrivals = {self.server.url(r.path): r.time for r in self.server.requests}
        for url, stamp in sent:
            self.assertLessEqual(stamp, arrivals[url])

    @defer.inlineCallbacks
    def test_on_sent_not_called_when_never_connected(self):
        """A refused connection never sends the request: no report."""
        sent = []
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        closed.close()
        fetcher = make_fetcher(self, on_sent=sent.append)
        failure, _ = yield failure_of(get(fetcher, f"http://127.0.0.1:{port}/"))
        self.assertIsInstance(failure, error.ConnectionRefusedError)
        self.assertEqual(sent, [])

    @defer.inlineCallbacks
    def test_on_sent_when_the_pool_hands_out_a_connection(self):
        """A new connection: reported once connected, not when fetch() is called. A pooled
        connection: reported at once, inside fetch()."""
        sent = []
        fetcher = make_fetcher(self, on_sent=sent.append)
        url = self.server.add_page("/")
        d = get(fetcher, url)
        self.assertEqual(sent, [])  # still connecting
        yield d
        self.assertEqual(len(sent), 1)
        d = get(fetcher, url)
        self.assertEqual(len(sent), 2)  # the idle connection was handed out at once
        yield d
        self.assertEqual(self.server.connections, 1)


class ProxyPathTests(FetchTestCase):
    """Through a forward proxy: the same send hook (timeouts through proxies are tested
    in test_proxy)."""

    def setUp(self):
        super().setUp()
        from .proxies import ForwardProxy
        self.proxy = ForwardProxy()
        self.addCleanup(self.proxy.stop)

    @defer.inlineCallbacks
    def test_on_sent_through_a_proxy(self):
        """A proxied request is reported once, when the pool hands out its connection."""
        sent = []
        fetcher = make_fetcher(self, on_sent=sent.append)
        url = self.server.add_page("/", body="via proxy")
        response = yield get(fetcher, url, meta={"proxy": self.proxy.url()})
        self.assertIn(b"via proxy", response.body)
        self.assertEqual([request.url for request in sent], [url])


class TimeoutTests(FetchTestCase):
    """C{DOWNLOAD_TIMEOUT} covers the whole download; each stall costs one timeout."""

    @defer.inlineCallbacks
    def assert_times_out(self, resource, timeout=0.5, **settings):
        fetcher = make_fetcher(self, {"DOWNLOAD_TIMEOUT": timeout, **settings})
        url = self.server.add("/stall", resource)
        failure, elapsed = yield failure_of(get(fetcher, url))
        self.assertIsInstance(failure, DownloadTimeout)
        self.assertGreaterEqual(elapsed, timeout * 0.9)
        self.assertLess(elapsed, timeout + 5.0)  # a loose bound: a timer that never fired hangs
        # the connection is closed, seen from the server, within the timeout plus a second
        closed = yield connections_closed(self.server)
        self.assertTrue(closed, "the server still has the connection open")
        self.assertEqual(self.server.hits["/stall"], 1)
        return fetcher

    def test_stall_after_headers(self):
        """Headers and a little body, then nothing: one timeout."""
        return self.assert_times_out(StallAfterHeaders())

    def test_trickle(self):
        """A byte every 50 ms, 200 bytes declared: the timer is for the whole body."""
        return self.assert_times_out(Trickle(200, 0.05))

    def test_accept_and_never_answer(self):
        """The request is accepted and never answered: one timeout."""
        return self.assert_times_out(NoAnswer())

    def test_declared_length_never_delivered(self):
        """A Content-Length that never arrives (within the limit): one timeout."""
        return self.assert_times_out(DeclaredLength(10_000))

    def test_cut_declared_length_is_a_timeout_with_dataloss_allowed(self):
        """With DOWNLOAD_FAIL_ON_DATALOSS off, a declared body the timer cut is still a
        timeout, not a partial response flagged dataloss."""
        return self.assert_times_out(DeclaredLength(10_000), DOWNLOAD_FAIL_ON_DATALOSS=False)

    def test_cut_chunked_body_is_a_timeout_with_dataloss_allowed(self):
        """The same for a chunked body the timer cut."""
        return self.assert_times_out(StallAfterHeaders(), DOWNLOAD_FAIL_ON_DATALOSS=False)

    @defer.inlineCallbacks
    def test_timeout_per_request(self):
        """meta['download_timeout'] overrides the setting for one request."""
        fetcher = make_fetcher(self, {"DOWNLOAD_TIMEOUT": 30})
        url = self.server.add("/stall", NoAnswer())
        failure, elapsed = yield failure_of(get(fetcher, url,
                                                meta={"download_timeout": 0.3}))
        self.assertIsInstance(failure, DownloadTimeout)
        self.assertLess(elapsed, 10)  # not the setting's 30 s

    @defer.inlineCallbacks
    def test_connect_timeout(self):
        """A host that never completes the TCP handshake fails after the connect timeout.

        Linux drops the SYNs sent to a socket whose accept queue is full."""
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        self.addCleanup(listener.close)
        port = listener.getsockname()[1]
        fillers = []
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            self.addCleanup(filler.close)
            try:
                filler.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            fillers.append(filler)
        fetcher = make_fetcher(self, {"DOWNLOAD_CONNECT_TIMEOUT": 0.3,
                                      "DOWNLOAD_TIMEOUT": 5})
        failure, elapsed = yield failure_of(get(fetcher, f"http://127.0.0.1:{port}/"))
        self.assertIsInstance(failure, error.TimeoutError)
        self.assertLess(elapsed, 4.0)  # not DOWNLOAD_TIMEOUT's 5 s

    @defer.inlineCallbacks
    def test_stall_does_not_stall_the_others(self):
        """While one request stalls, the others on the same host complete."""
        fetcher = make_fetcher(self, {"DOWNLOAD_TIMEOUT": 1.0})
        stalled = failure_of(get(fetcher, self.server.add("/stall", StallAfterHeaders())))
        pages = [get(fetcher, self.server.add_page(f"/{i}")) for i in range(5)]
        responses = yield defer.gatherResults(pages)
        self.assertEqual([r.status for r in responses], [200] * 5)
        self.assertFalse(stalled.called)
        failure, _ = yield stalled
        self.assertIsInstance(failure, DownloadTimeout)

    @defer.inlineCallbacks
    def test_dropped_mid_body_is_an_error(self):
        """A body shorter than its Content-Length fails with Scrapy's ResponseDataLossError
        (the retry middleware decides)."""
        from tinyscrapy.exceptions import ResponseDataLossError
        fetcher = make_fetcher(self)
        url = self.server.add("/partial", Partial(b"x" * 100, 1000))
        failure, _ = yield failure_of(get(fetcher, url))
        self.assertIsInstance(failure, ResponseDataLossError)
        self.assertEqual(self.server.hits["/partial"], 1)


class SizeLimitTests(FetchTestCase):
    """C{DOWNLOAD_MAXSIZE} and C{DOWNLOAD_WARNSIZE} on the body as received."""

    @defer.inlineCallbacks
    def test_declared_length_over_limit_refused_before_body(self):
        """A too-large Content-Length fails at the headers (the body never comes here, so
        waiting for it would have timed out instead)."""
        fetcher = make_fetcher(self, {"DOWNLOAD_MAXSIZE": 1000, "DOWNLOAD_TIMEOUT": 10})
        url = self.server.add("/big", DeclaredLength(10 ** 9))
        failure, _ = yield failure_of(get(fetcher, url))
        self.assertIsInstance(failure, ResponseTooLarge)
        self.assertIn("Content-Length", str(failure))
        closed = yield connections_closed(self.server)
        self.assertTrue(closed, "the server still has the connection open")

    @defer.inlineCallbacks
    def test_endless_chunked_body_cut_at_limit(self):
        """An endless chunked body is cut as soon as it crosses the limit."""
        fetcher = make_fetcher(self, {"DOWNLOAD_MAXSIZE": 100_000})
        url = self.server.add("/endless", EndlessChunked())
        failure, _ = yield failure_of(get(fetcher, url))
        self.assertIsInstance(failure, ResponseTooLarge)
        # the bytes received are counted, though the download failed
        self.assertGreater(fetcher.stats.get_value("downloader/response_bytes"), 100_000)
        closed = yield connections_closed(self.server)
        self.assertTrue(closed, "the server still has the connection open")

    @defer.inlineCallbacks
    def test_maxsize_per_request(self):
        """meta['download_maxsize'] overrides the setting; 0 means no limit."""
        fetcher = make_fetcher(self, {"DOWNLOAD_MAXSIZE": 10})
        url = self.server.add_page("/", body="x" * 500)
        response = yield get(fetcher, url, meta={"download_maxsize": 0})
        self.assertGreater(len(response.body), 500)
        failure, _ = yield failure_of(get(fetcher, url))
        self.assertIsInstance(failure, ResponseTooLarge)

    @defer.inlineCallbacks
    def test_limit_is_inclusive(self):
        """A body of exactly DOWNLOAD_MAXSIZE bytes is accepted."""
        fetcher = make_fetcher(self, {"DOWNLOAD_MAXSIZE": 1000})
        url = self.server.add("/exact", Page(b"x" * 1000, content_type="text/plain"))
        response = yield get(fetcher, url)
        self.assertEqual(len(response.body), 1000)

    @defer.inlineCallbacks
    def test_warnsize_logs_once_and_counts(self):
        """A body over DOWNLOAD_WARNSIZE is kept, logged once with its URL, counted."""
        logs = CapturedLogs(self)
        fetcher = make_fetcher(self, {"DOWNLOAD_WARNSIZE": 100})
        url = self.server.add("/big", Page(b"x" * 5000, content_type="text/plain"))
        response = yield get(fetcher, url)
        self.assertEqual(len(response.body), 5000)
        warnings = [m for level, m in logs.messages if level == "WARNING"]
        self.assertEqual(len(warnings), 1)
        self.assertIn(url, warnings[0])
        self.assertEqual(fetcher.stats.get_value("downloader/response_warnsize_count"), 1)


class BadInputTests(FetchTestCase):
    """URLs are sent safely encoded; a bad URL or host is an errback, not an exception."""

    @defer.inlineCallbacks
    def test_spaces_and_non_ascii_are_percent_encoded(self):
        """The server receives the path percent-encoded (UTF-8)."""
        fetcher = make_fetcher(self)
        self.server.add("/a%20b/%C3%A9", Page(b"ok", content_type="text/plain"))
        url = self.server.url("/a b/é") + "?q=ü v"
        response = yield get(fetcher, url)
        self.assertEqual(response.status, 200)
        self.assertEqual(self.server.requests[0].path, "/a%20b/%C3%A9?q=%C3%BC%20v")

    @defer.inlineCallbacks
    def test_no_header_injection_through_the_url(self):
        """CR/LF in a URL set behind Request's back is refused, nothing is sent."""
        fetcher = make_fetcher(self)
        request = Request(self.server.add_page("/"))
        request._url = request.url + "\r\nX-Injected: yes"  # behind its back
        failure, _ = yield failure_of(fetcher.fetch(request))
        self.assertIsInstance(failure, InvalidUrl)
        self.assertEqual(self.server.requests, [])

    @defer.inlineCallbacks
    def test_no_header_injection_through_a_header(self):
        """CR/LF in a header value cannot start a new header."""
        fetcher = make_fetcher(self)
        url = self.server.add("/echo", Echo())
        response = yield get(fetcher, url, headers={"X-Test": "a\r\nX-Injected: yes"})
        self.assertNotIn("x-injected", response.json()["headers"])

    @defer.inlineCallbacks
    def test_invalid_urls_errback(self):
        """Each bad URL is an errback with InvalidUrl; fetch itself never raises."""
        fetcher = make_fetcher(self)
        bad = ["http://exa mple.com/", "http://a..b/", "http://xn--/", "http://-x-.com/",
               "http://[::1/", "http://127.0.0.1:99999/", "http:///path", "ftp://x/",
               "http://127.0.0.1:0/", "notaurl", "http://ex_ample.com:8o/"]
        for url in bad:
            request = Request("http://127.0.0.1/")
            request._url = url  # behind its back: Request itself refuses some
            failure, _ = yield failure_of(fetcher.fetch(request))
            self.assertIsInstance(failure, InvalidUrl, url)
            self.assertIn("URL" if " " in url else "", str(failure))
        self.assertEqual(self.server.requests, [])

    @defer.inlineCallbacks
    def test_bad_method_errbacks(self):
        """A method that is not an HTTP token is refused before anything is sent."""
        fetcher = make_fetcher(self)
        failure, _ = yield failure_of(get(fetcher, self.server.add_page("/"),
                                          method="GET /x HTTP/1.1\r\nX:"))
        self.assertIsInstance(failure, ValueError)
        self.assertEqual(self.server.requests, [])

    @defer.inlineCallbacks
    def test_broken_on_sent_hook_does_not_break_the_download(self):
        """A hook that raises is logged; the download goes on."""
        logs = CapturedLogs(self)

        def broken(request):
            raise RuntimeError("boom")

        fetcher = make_fetcher(self, on_sent=broken)
        response = yield get(fetcher, self.server.add_page("/"))
        self.assertEqual(response.status, 200)
        self.assertTrue(any("on_sent" in message for _, message in logs.messages))

    @defer.inlineCallbacks
    def test_idn_host_is_punycoded(self):
        """A non-ASCII host name is sent in its IDNA form (a Host header, checked here
        through the agent's target, since no such host answers on 127.0.0.1)."""
        fetcher = make_fetcher(self)
        request = Request("http://bücher.example:8080/x")
        target = fetcher.agent.target(request.url)
        self.assertEqual(target.host_header, b"xn--bcher-kva.example:8080")
        yield defer.succeed(None)

    @defer.inlineCallbacks
    def test_agent_request_with_a_bad_url(self):
        """CrawlAgent.request (the IAgent method) errbacks too."""
        agent = CrawlAgent(reactor, HTTPConnectionPool(reactor), None, "verified")
        failure, _ = yield failure_of(agent.request(b"GET", b"http://a b/"))
        self.assertIsInstance(failure, InvalidUrl)

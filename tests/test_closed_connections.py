"""
No page lost to a connection the server closed, and treq's client doing only what the crawl
asks of it: an HTTP/1.0 server that closes after each answer, a server that drops reused
keep-alive connections without a word, statuses twisted's parser takes but HTTP does not,
and the headers treq would add (C{Accept-Encoding}, C{Cookie}).
"""

import ast
import os
import re
import selectors
import subprocess
import sys
import time

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy.core.downloader.handlers.http11 import BadStatusCode
from tinyscrapy.http import Request

from .fetchutil import failure_of, get, make_fetcher
from .helpers import ROOT, crawl, needs_processes, serve, stop_process
from .recording import Recorder
from .servers import DropReused, Echo, Gzip, RawServer, SetCookie


def http10_answer(links=0, pages=100):
    """An answer maker for L{RawServer}: page C{/N} links to the next C{links} pages."""
    def answer(path):
        n = int(path.strip("/") or 0)
        hrefs = "".join(f'<a href="/{m}">{m}</a>' for m in range(n + 1, min(pages, n + 1 + links)))
        body = f"<html><body><p>page {n}</p>{hrefs}</body></html>".encode()
        return (b"HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6 Python/3\r\n"
                b"Content-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    return answer


class Http10Tests(unittest.TestCase):
    """A server answering HTTP/1.0 and closing the connection after each answer (as
    C{python3 -m http.server} does), a little after it: a client that puts the connection
    back in its pool sends the next request on a connection about to close."""

    def setUp(self):
        self.server = RawServer(http10_answer(links=3), close_after=0.05).start()
        self.addCleanup(self.server.stop)

    @defer.inlineCallbacks
    def test_no_request_sent_on_a_closing_connection(self):
        """Forty requests one after the other: each on a new connection, each answered,
        none sent twice."""
        fetcher = make_fetcher(self)
        for n in range(40):
            response = yield get(fetcher, self.server.url(f"/{n}"))
            self.assertEqual(response.status, 200)
            self.assertIn(f"page {n}".encode(), response.body)
        self.assertEqual(self.server.connections, 40)
        self.assertEqual(set(self.server.hits.values()), {1})
        self.assertIsNone(fetcher.stats.get_value("downloader/replayed_count"))

    @defer.inlineCallbacks
    def test_crawl_gets_every_page(self):
        """A crawl of 100 linked pages with retries off, one request at a time and four:
        every page, once, and nothing failed."""
        for concurrency in (1, 4):
            self.server.hits.clear()
            crawler = yield crawl(Recorder, {"RETRY_ENABLED": False,
                                             "CONCURRENT_REQUESTS": concurrency},
                                  start_urls=[self.server.url("/0")], follow=True)
            spider = crawler.spider
            self.assertEqual(spider.failures, [])
            self.assertEqual(len(spider.responses), 100)
            self.assertEqual(len(self.server.hits), 100)
            self.assertEqual(set(self.server.hits.values()), {1})


def half_answer(path):
    """An HTTP/1.0 answer without a length (its body runs to the close), half sent: the
    connection then stays open (close_after=None)."""
    return b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html><title>half a page"


class CloseDelimitedStallTests(unittest.TestCase):
    """A body that runs to the close, and the server stalls in the middle of it."""

    def setUp(self):
        self.server = RawServer(half_answer, close_after=None).start()
        self.addCleanup(self.server.stop)

    @defer.inlineCallbacks
    def test_is_a_timeout_not_a_page(self):
        """DOWNLOAD_TIMEOUT aborts it, and the download fails with DownloadTimeout: the
        half page is not delivered as a whole one (the abort ends such a body as twisted
        ends it at a close)."""
        from tinyscrapy.exceptions import DownloadTimeout
        fetcher = make_fetcher(self, {"DOWNLOAD_TIMEOUT": 0.5})
        error, elapsed = yield failure_of(get(fetcher, self.server.url("/")))
        self.assertIsInstance(error, DownloadTimeout)
        self.assertGreaterEqual(elapsed, 0.45)


class StaleKeepAliveTests(unittest.TestCase):
    """A server that drops every reused keep-alive connection, unanswered."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_crawl_gets_every_page_with_retries_off(self):
        """200 pages, retries off: each request that died on a reused connection was sent
        again on a new one; every page arrived, no retry was spent."""
        resource = DropReused()
        urls = [self.server.add(f"/{n}", resource) for n in range(200)]
        crawler = yield crawl(Recorder, {"RETRY_ENABLED": False, "CONCURRENT_REQUESTS": 4},
                              start_urls=urls)
        stats = crawler.stats
        self.assertEqual(crawler.spider.failures, [])
        self.assertEqual(len(crawler.spider.responses), 200)
        self.assertGreater(resource.dropped, 100)
        self.assertEqual(stats.get_value("downloader/replayed_count"), resource.dropped)
        self.assertIsNone(stats.get_value("retry/count"))

    @defer.inlineCallbacks
    def test_replayed_within_the_download_timeout(self):
        """The replay is part of the download: its timeout covers both sends."""
        resource = DropReused()
        fetcher = make_fetcher(self, {"DOWNLOAD_TIMEOUT": 5})
        first = yield get(fetcher, self.server.add("/a", resource))
        second = yield get(fetcher, self.server.add("/b", resource))
        self.assertEqual((first.status, second.status), (200, 200))
        self.assertEqual(resource.dropped, 1)
        self.assertEqual(self.server.connections, 2)


def status_answer(status_line):
    def answer(path):
        return (status_line + b"\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nok")
    return answer


class StatusTests(unittest.TestCase):
    """Statuses twisted's parser turns into integers that are not HTTP statuses."""

    @defer.inlineCallbacks
    def test_not_three_digits_refused(self):
        """-200, 99999999999999999999, 2000 and 20 fail as BadStatusCode, once (not
        retried); 200 and 599 pass."""
        for line in (b"HTTP/1.1 -200 OK", b"HTTP/1.1 99999999999999999999 OK",
                     b"HTTP/1.1 2000 OK", b"HTTP/1.1 20 OK"):
            server = RawServer(status_answer(line)).start()
            self.addCleanup(server.stop)
            crawler = yield crawl(Recorder, start_urls=[server.url("/")])
            failure, = crawler.spider.failures
            self.assertTrue(failure.check(BadStatusCode), line)
            self.assertIn("not three digits", failure.getErrorMessage())
            self.assertEqual(server.hits["/"], 1, line)
        for line, status in ((b"HTTP/1.1 200 OK", 200), (b"HTTP/1.1 599 Odd", 599)):
            server = RawServer(status_answer(line)).start()
            self.addCleanup(server.stop)
            response = yield get(make_fetcher(self), server.url("/"))
            self.assertEqual(response.status, status)


def short_answer(path):
    """Content-Length 1000, 13 bytes of body: the server then closes (close_after=0)."""
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000\r\n\r\n"
            b"<html>cut</ht")


class DataLossTests(unittest.TestCase):
    """A body cut short: DOWNLOAD_FAIL_ON_DATALOSS, as in Scrapy."""

    def setUp(self):
        self.server = RawServer(short_answer, close_after=0).start()
        self.addCleanup(self.server.stop)

    @defer.inlineCallbacks
    def test_fails_by_default_said_once(self):
        """By default the request fails with ResponseDataLossError, whose message says how
        to take broken responses instead; nothing else is logged about it here (the
        crawl's one line for a failure names the URL)."""
        from tinyscrapy.exceptions import ResponseDataLossError

        from .logs import capture_logs
        logs = capture_logs(self, "tinyscrapy")
        fetcher = make_fetcher(self)
        for path in ("/a", "/b"):
            error, _ = yield failure_of(get(fetcher, self.server.url(path)))
            self.assertIsInstance(error, ResponseDataLossError)
            self.assertIn("data loss", str(error))
            self.assertIn("DOWNLOAD_FAIL_ON_DATALOSS = False", str(error))
        self.assertEqual([m for m in logs.messages() if "data loss" in m], [])

    @defer.inlineCallbacks
    def test_partial_response_when_allowed(self):
        """DOWNLOAD_FAIL_ON_DATALOSS=False, or meta download_fail_on_dataloss=False: the
        response as received, flagged dataloss."""
        fetcher = make_fetcher(self, {"DOWNLOAD_FAIL_ON_DATALOSS": False})
        response = yield get(fetcher, self.server.url("/"))
        self.assertEqual((response.body, response.flags), (b"<html>cut</ht", ["dataloss"]))
        response = yield get(make_fetcher(self), self.server.url("/"),
                             meta={"download_fail_on_dataloss": False})
        self.assertEqual(response.flags, ["dataloss"])

    @defer.inlineCallbacks
    def test_retried_in_a_crawl(self):
        """In a crawl the data loss is retried (RETRY_EXCEPTIONS), then the request
        fails with it."""
        from tinyscrapy.exceptions import ResponseDataLossError
        crawler = yield crawl(Recorder, start_urls=[self.server.url("/")])
        failure, = crawler.spider.failures
        self.assertTrue(failure.check(ResponseDataLossError))
        self.assertEqual(self.server.hits["/"], 3)


class TreqClientTests(unittest.TestCase):
    """treq's HTTPClient carries the download, adding nothing of its own."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_one_accept_encoding_the_middlewares(self):
        """The server sees the compression middleware's Accept-Encoding, once, never treq's
        gzip beside it; without that middleware, none at all."""
        url = self.server.add("/echo", Echo())
        crawler = yield crawl(Recorder, start_urls=[url])
        sent = crawler.spider.responses[0].json()["headers"]["accept-encoding"]
        from tinyscrapy.downloadermiddlewares.httpcompression import accept_encoding
        self.assertEqual(sent, [accept_encoding()])
        off = {"DOWNLOADER_MIDDLEWARES": {
            "tinyscrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware": None}}
        crawler = yield crawl(Recorder, off, start_urls=[url])
        self.assertNotIn("accept-encoding", crawler.spider.responses[0].json()["headers"])

    @defer.inlineCallbacks
    def test_no_cookie_the_middleware_did_not_set(self):
        """A cookie the server set is sent back only by the cookies middleware: with it off,
        never (treq's own jar keeps nothing); with it on, once."""
        set_url = self.server.add("/set", SetCookie("session", "s1"))
        echo = self.server.add("/echo", Echo())

        def make(spider):
            return [Request(set_url, callback=then_echo, dont_filter=True)]

        def then_echo(response):
            yield Request(echo, callback=spider_parse, dont_filter=True)

        seen = []

        def spider_parse(response):
            seen.append(response.json()["headers"].get("cookie"))

        for enabled in (False, True):
            yield crawl(Recorder, {"COOKIES_ENABLED": enabled}, make=make)
        self.assertEqual(seen, [None, ["session=s1"]])

    @defer.inlineCallbacks
    def test_content_encoding_as_the_server_sent_it(self):
        """A response without Content-Encoding has none (treq's decoder agent would leave
        an empty one); a gzip body not decoded (COMPRESSION_ENABLED off) keeps the
        server's header and its compressed bytes; decoded, the header is gone."""
        plain = yield get(make_fetcher(self), self.server.add_page("/plain"))
        self.assertNotIn(b"Content-Encoding", plain.headers)
        url = self.server.add("/gz", Gzip(b"<html>zipped</html>"))
        kept = yield get(make_fetcher(self, {"COMPRESSION_ENABLED": False}), url)
        self.assertEqual(kept.headers.getlist("Content-Encoding"), [b"gzip"])
        self.assertEqual(kept.body[:2], b"\x1f\x8b")
        decoded = yield get(make_fetcher(self), url)
        self.assertNotIn(b"Content-Encoding", decoded.headers)
        self.assertEqual(decoded.body, b"<html>zipped</html>")

    @defer.inlineCallbacks
    def test_every_download_goes_through_treq(self):
        """The fetcher's client is treq's HTTPClient, over the crawl's own agent."""
        from treq.client import HTTPClient
        fetcher = make_fetcher(self)
        self.assertIsInstance(fetcher.client, HTTPClient)
        self.assertIs(fetcher.client._agent, fetcher.agent)
        response = yield get(fetcher, self.server.add_page("/"))
        self.assertEqual(response.status, 200)


class NoPatchTests(unittest.TestCase):
    """The package assigns no attribute of a Twisted class or module."""

    def test_no_assignment_to_twisted_names(self):
        """No module of tinyscrapy assigns an attribute of a name it imported from twisted
        (HTTPClientParser.lineLengthExceeded = ..., say), by assignment or setattr()."""
        found = []
        for folder, _, files in os.walk(os.path.join(ROOT, "tinyscrapy")):
            for name in files:
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                tree = ast.parse(open(path, encoding="utf-8").read())
                twisted = set()
                for node in ast.walk(tree):
                    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                            "twisted"):
                        twisted |= {alias.asname or alias.name for alias in node.names}
                    elif isinstance(node, ast.Import):
                        twisted |= {(alias.asname or alias.name).split(".")[0]
                                    for alias in node.names if alias.name.startswith("twisted")}
                for node in ast.walk(tree):
                    targets = node.targets if isinstance(node, ast.Assign) else \
                        [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                    for target in targets:
                        if isinstance(target, ast.Attribute) and _root(target) in twisted:
                            found.append(f"{path}:{node.lineno}")
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                            and node.func.id == "setattr" and node.args \
                            and _root(node.args[0]) in twisted:  # setattr(twisted's, ...)
                        found.append(f"{path}:{node.lineno}")
        self.assertEqual(found, [])


def _root(node):
    """The name an attribute chain starts from (C{a} of C{a.b.c}), or None."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _listening_port(process, deadline):
    """The port C{python -u -m http.server 0} says it serves on (its first line), read
    without waiting past C{deadline} (C{time.monotonic()})."""
    line = b""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                raise RuntimeError("python -m http.server did not say its port in time")
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError(f"python -m http.server ended: {line!r}")
            line += chunk
    found = re.search(rb" port (\d+)", line)
    if found is None:
        raise RuntimeError(f"python -m http.server said {line!r}")
    return int(found.group(1))


class PythonHttpServerTests(unittest.TestCase):
    """A crawl of C{python3 -m http.server}, the most ordinary server there is."""

    timeout = 120

    def setUp(self):
        needs_processes("python -m http.server")
        self.root = os.path.abspath(self.mktemp())
        os.makedirs(self.root)
        self.pages = 300
        for n in range(self.pages):
            links = "".join(f'<a href="p{m}.html">{m}</a> ' for m in
                            range(n + 1, min(self.pages, n + 8)))
            with open(os.path.join(self.root, f"p{n}.html"), "w") as f:
                f.write(f"<html><body><h1>{n}</h1>{links}{'x' * (n * 37 % 5000)}</body></html>")
        # port 0: the server takes a free port itself, and says which once it listens
        self.process = subprocess.Popen(
            [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
             "--directory", self.root], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(self.process.stdout.close)
        self.addCleanup(stop_process, self.process)
        self.port = _listening_port(self.process, time.monotonic() + 20)

    @defer.inlineCallbacks
    def test_every_page_three_times(self):
        """Three crawls of 300 linked pages, 16 in flight, retries on as by default:
        every page every time, nothing failed, nothing replayed or retried."""
        for _ in range(3):
            crawler = yield crawl(Recorder, {"CONCURRENT_REQUESTS": 16},
                                  start_urls=[f"http://127.0.0.1:{self.port}/p0.html"],
                                  follow=True)
            spider = crawler.spider
            self.assertEqual(spider.failures, [])
            self.assertEqual(len({r.url for r in spider.responses}), self.pages)
            self.assertIsNone(crawler.stats.get_value("retry/count"))

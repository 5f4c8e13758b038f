"""
C{fetch}, C{view} and C{shell}: one page through the crawl's downloader, against a local
server; C{shell} driven through its standard input.
"""

import os
import sys

from twisted.internet import defer, protocol, reactor
from twisted.trial import unittest

from .helpers import ROOT, needs_processes, serve, subprocess_env
from .servers import Redirect, Robots


class _Collect(protocol.ProcessProtocol):
    def __init__(self, stdin):
        self.stdin, self.out, self.err = stdin, [], []
        self.done = defer.Deferred()

    def connectionMade(self):
        if self.stdin is not None:
            self.transport.write(self.stdin)
        self.transport.closeStdin()

    def outReceived(self, data):
        self.out.append(data)

    def errReceived(self, data):
        self.err.append(data)

    def processEnded(self, reason):
        self.done.callback((reason.value.exitCode, b"".join(self.out), b"".join(self.err)))


def tinyscrapy(args, stdin=None, env=None):
    """Run C{python -m tinyscrapy ARGS} (spawnProcess: the server runs in this reactor).
    @return: a Deferred firing with C{(status, stdout bytes, stderr bytes)}."""
    needs_processes("the command line")
    collect = _Collect(stdin)
    environment = subprocess_env()
    environment.update(env or {})
    transport = reactor.spawnProcess(collect, sys.executable,
                                     [sys.executable, "-m", "tinyscrapy", *args],
                                     env=environment, path=ROOT)
    timer = reactor.callLater(60, transport.signalProcess, "KILL")
    return collect.done.addBoth(_cb_stop_timer, timer)


def _cb_stop_timer(result, timer):
    if timer.active():
        timer.cancel()
    return result


class PageCommandTests(unittest.TestCase):
    """The page commands against a small site."""

    def setUp(self):
        self.server = serve(self)
        self.page = self.server.add_page("/page", links=["/other"], title="The page",
                                         headers={"X-Demo": "yes"})
        self.server.add_page("/other", title="Other")
        self.server.add_page("/missing", status=404, title="Not here")
        self.moved = self.server.add("/moved", Redirect("/page"))

    @defer.inlineCallbacks
    def test_fetch_prints_the_body(self):
        """fetch prints the page's body on stdout, the log on stderr."""
        status, out, err = yield tinyscrapy(["fetch", self.page])
        self.assertEqual(status, 0, err)
        self.assertIn(b"<title>The page</title>", out)
        self.assertNotIn(b"INFO", out)

    @defer.inlineCallbacks
    def test_fetch_and_shell_obey_robots_txt(self):
        """With ROBOTSTXT_OBEY (a project's default) the page commands fetch robots.txt
        first through the same downloader: an allowed page prints, a disallowed one is
        refused with one line."""
        self.server.add("/robots.txt", Robots("User-agent: *\nDisallow: /other\n"))
        status, out, err = yield tinyscrapy(["fetch", "-s", "ROBOTSTXT_OBEY=True", self.page])
        self.assertEqual(status, 0, err)
        self.assertIn(b"<title>The page</title>", out)
        status, out, err = yield tinyscrapy(["fetch", "-s", "ROBOTSTXT_OBEY=True",
                                             self.server.url("/other")])
        self.assertNotEqual(status, 0)
        self.assertIn(b"robots.txt", err)
        status, out, err = yield tinyscrapy(
            ["shell", "-s", "ROBOTSTXT_OBEY=True", self.page],
            stdin=b"print(response.status)\n")
        self.assertEqual(status, 0, err)
        self.assertIn(b"200", out)

    @defer.inlineCallbacks
    def test_fetch_headers(self):
        """--headers prints the request's headers (>) and the response's (<)."""
        status, out, err = yield tinyscrapy(["fetch", "--headers", self.page])
        self.assertEqual(status, 0, err)
        lines = out.decode().splitlines()
        self.assertIn(">", lines)
        self.assertTrue(any(line.lower().startswith("> user-agent: tinyscrapy")
                            for line in lines), lines)
        self.assertIn("< x-demo: yes", [line.lower() for line in lines])
        self.assertNotIn(b"<title>", out)

    @defer.inlineCallbacks
    def test_fetch_follows_redirects_unless_told(self):
        """A redirect is followed by default; --no-redirect prints the 3xx itself."""
        status, out, err = yield tinyscrapy(["fetch", self.moved])
        self.assertEqual(status, 0, err)
        self.assertIn(b"<title>The page</title>", out)
        status, out, err = yield tinyscrapy(["fetch", "--headers", "--no-redirect",
                                             "-s", "LOG_LEVEL=WARNING", self.moved])
        self.assertEqual(status, 0, err)
        self.assertIn(b"< location: /page", out.lower())
        self.assertEqual(self.server.hits["/page"], 1)

    @defer.inlineCallbacks
    def test_fetch_prints_an_error_page(self):
        """A 404 page is printed like any other (exit 0), as scrapy fetch does."""
        status, out, err = yield tinyscrapy(["fetch", self.server.url("/missing")])
        self.assertEqual(status, 0, err)
        self.assertIn(b"Not here", out)

    @defer.inlineCallbacks
    def test_fetch_failure_and_bad_url(self):
        """A download that fails exits 1 with one error line; a bad URL is a usage error."""
        self.server.stop()
        status, out, err = yield tinyscrapy(["fetch", self.page])
        self.assertEqual((status, out), (1, b""))
        self.assertIn(b"Error downloading " + self.page.encode(), err)
        status, out, err = yield tinyscrapy(["fetch", "example.com/page"])
        self.assertEqual(status, 2)
        self.assertEqual(err, b"tinyscrapy: error: not an http(s) URL: 'example.com/page'\n")

    @defer.inlineCallbacks
    def test_view_without_a_browser_prints_the_path(self):
        """With no browser to open, view prints the saved file, with a <base href>."""
        status, out, err = yield tinyscrapy(["view", "-L", "WARNING", self.page],
                                            env={"BROWSER": "false"})
        self.assertEqual(status, 0, err)
        path = out.decode().strip()
        self.addCleanup(os.remove, path)
        with open(path, "rb") as f:
            saved = f.read()
        self.assertIn(b'<base href="' + self.page.encode() + b'">', saved)
        self.assertIn(b"<title>The page</title>", saved)

    @defer.inlineCallbacks
    def test_shell_through_stdin(self):
        """The shell's prompt has response and request, and fetch() replaces them."""
        script = (f"print('status', response.status, response.css('title::text').get())\n"
                  f"print('links', response.css('a::attr(href)').getall())\n"
                  f"r = fetch({self.server.url('/other')!r})\n"
                  f"print('now', request.url, response.xpath('//title/text()').get())\n"
                  f"print('same', r is response)\n")
        status, out, err = yield tinyscrapy(["shell", "-L", "WARNING", self.page],
                                            stdin=script.encode())
        self.assertEqual(status, 0, err)
        text = out.decode()
        self.assertIn("status 200 The page", text)
        self.assertIn("links ['/other']", text)
        self.assertIn(f"now {self.server.url('/other')} Other", text)
        self.assertIn("same True", text)

    @defer.inlineCallbacks
    def test_shell_failed_fetch_clears_response(self):
        """After a failed fetch() the prompt's response is None and request the failed one."""
        script = ("r = fetch('http://127.0.0.1:1/gone')\n"
                  "print('after', r is None, response is None, request.url)\n")
        status, out, err = yield tinyscrapy(["shell", "-L", "WARNING", self.page],
                                            stdin=script.encode())
        self.assertEqual(status, 0, err)
        self.assertIn(b"after True True http://127.0.0.1:1/gone", out)
        self.assertIn(b"Error downloading http://127.0.0.1:1/gone", err)

    @defer.inlineCallbacks
    def test_shell_has_scrapy_and_item(self):
        """The prompt has Scrapy's scrapy (the package) and item (an empty item)."""
        status, out, err = yield tinyscrapy(
            ["shell", "-L", "WARNING", self.page, "-c",
             "(scrapy.Request.__module__, scrapy.__name__, item, type(item).__name__)"])
        self.assertEqual(status, 0, err)
        self.assertEqual(out, b"('tinyscrapy.http.request', 'tinyscrapy', {}, 'Item')\n")
        status, out, err = yield tinyscrapy(
            ["shell", "-L", "WARNING", "-s", "DEFAULT_ITEM_CLASS=collections.OrderedDict",
             self.page, "-c", "type(item).__name__"])
        self.assertEqual((status, out), (0, b"OrderedDict\n"), err)

    @defer.inlineCallbacks
    def test_shell_without_url_and_with_code(self):
        """shell with no URL starts empty; -c evaluates an expression on the page."""
        status, out, err = yield tinyscrapy(["shell", "-L", "WARNING"],
                                            stdin=b"print('empty', response is None)\n")
        self.assertEqual(status, 0, err)
        self.assertIn(b"empty True", out)
        status, out, err = yield tinyscrapy(
            ["shell", "-L", "WARNING", self.page, "-c", "response.css('title::text').get()"])
        self.assertEqual((status, out), (0, b"The page\n"), err)

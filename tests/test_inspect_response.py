"""
C{inspect_response(response, spider)} from a callback, driven through a pseudo-terminal:
the prompt opens inside the callback with the page, the crawl waits for it, C{fetch()} is
not offered, Ctrl-C does not stop the crawl, and leaving the prompt lets the crawl finish.
"""

import json
import os
import sys
import textwrap

from twisted.internet import defer, protocol, reactor
from twisted.trial import unittest

from tinyscrapy.shell import Shell, inspect_response
from tinyscrapy.utils.test import get_crawler

from .helpers import ROOT, needs_processes, serve, subprocess_env

SPIDER = '''
from tinyscrapy import Spider
from tinyscrapy.shell import inspect_response


class Inspected(Spider):
    name = "inspected"
    start_urls = [{url!r}]

    def parse(self, response):
        inspect_response(response, self)
        yield {{"after": response.url}}
'''


class Terminal(protocol.ProcessProtocol):
    """A child on a pseudo-terminal: what it writes, and Deferreds that fire when a text
    has appeared in it."""

    def __init__(self):
        self.output = b""
        self.waiting = []
        self.ended = defer.Deferred()

    def childDataReceived(self, fd, data):
        self.output += data
        for text, since, d in list(self.waiting):
            end = self._find(text, since)
            if end is not None:
                self.waiting.remove((text, since, d))
                d.callback(end)

    def _find(self, text, since):
        at = self.output.find(text, since)
        return None if at < 0 else at + len(text)

    def expect(self, text, since=0):
        """
        @param since: where in the output to look from.
        @return: a Deferred firing, once C{text} (bytes) has been written after C{since},
            with where it ends in the output.
        """
        d = defer.Deferred()
        end = self._find(text, since)
        if end is not None:
            d.callback(end)
        else:
            self.waiting.append((text, since, d))
        return d

    def processEnded(self, reason):
        for _, _, d in self.waiting:  # the child left without writing it: fail the test
            d.errback(AssertionError(f"never written; output: {self.output!r}"))
        self.waiting = []
        self.ended.callback(reason.value.exitCode)


class InspectResponseTests(unittest.TestCase):
    """The prompt of inspect_response, in a child on a pseudo-terminal."""

    @defer.inlineCallbacks
    def test_prompt_inside_the_callback(self):
        """The banner, the page's response, no fetch(); Ctrl-C is ignored; Ctrl-D ends
        the prompt and the callback goes on to its item and a finished crawl."""
        needs_processes("a crawl on a pseudo-terminal")
        server = serve(self)
        url = server.add_page("/", title="inspected page")
        tmp = os.path.abspath(self.mktemp())
        os.makedirs(tmp)
        spider = os.path.join(tmp, "inspected.py")
        with open(spider, "w") as f:
            f.write(textwrap.dedent(SPIDER.format(url=url)))
        items = os.path.join(tmp, "items.jsonl")
        env = dict(subprocess_env(), SCRAPY_PYTHON_SHELL="python", TERM="dumb")
        terminal = Terminal()
        transport = reactor.spawnProcess(
            terminal, sys.executable,
            [sys.executable, "-m", "tinyscrapy", "runspider", spider, "-O", items],
            env=env, path=ROOT, usePTY=True)
        timer = reactor.callLater(60, transport.signalProcess, "KILL")
        self.addCleanup(_stop, timer, transport, terminal)
        yield terminal.expect(b"View response in a browser")
        self.assertIn(b"no fetch(): the crawl's reactor waits for this prompt", terminal.output)
        transport.write(b"\x03")  # Ctrl-C: ignored while the prompt is open
        transport.write(b"print('PAGE', response.status, response.css('title::text').get(),"
                        b" 'fetch' in globals(), spider.name)\n")
        page = yield terminal.expect(b"PAGE 200 inspected page False inspected")
        yield terminal.expect(b">>> ", since=page)  # the prompt reads again
        transport.write(b"\x04")  # Ctrl-D: the prompt ends, the callback goes on
        code = yield terminal.ended
        self.assertEqual(code, 0, terminal.output)
        self.assertIn(b"Spider closed (finished)", terminal.output)
        with open(items) as f:
            self.assertEqual(json.loads(f.read()), {"after": url})


class ShellInTheReactorThreadTests(unittest.TestCase):
    """Shell in the reactor's own thread (as inspect_response makes it)."""

    def test_no_fetch(self):
        """fetch is not in the namespace, the help says why, and calling it raises."""
        shell = Shell(get_crawler())
        self.assertFalse(shell.fetch_available)
        shell.populate_vars()
        self.assertNotIn("fetch", shell.vars)
        self.assertIn("no fetch()", shell.get_help())
        self.assertIn("shelp()", shell.get_help())
        self.assertRaises(RuntimeError, shell.fetch, "http://127.0.0.1:1/")

    def test_inspect_response_restores_sigint(self):
        """inspect_response opens the prompt on the response and puts Ctrl-C's handler
        back."""
        import signal

        from tinyscrapy.http.request import Request
        from tinyscrapy.http.response.html import HtmlResponse
        opened = []
        self.patch(sys.modules["tinyscrapy.shell"], "start_python_console",
                   lambda namespace, **kwargs: opened.append(namespace))
        crawler = get_crawler()
        spider = crawler._create_spider()
        request = Request("http://127.0.0.1/")
        response = HtmlResponse("http://127.0.0.1/", body=b"<title>t</title>", request=request)
        handler = signal.getsignal(signal.SIGINT)
        inspect_response(response, spider)
        self.assertIs(signal.getsignal(signal.SIGINT), handler)
        self.assertIs(opened[0]["response"], response)
        self.assertIs(opened[0]["request"], request)
        self.assertIs(opened[0]["spider"], spider)


def _stop(timer, transport, terminal):
    """End the child (if a failed test left it running) and wait for it."""
    if timer.active():
        timer.cancel()
    if not terminal.ended.called:
        transport.signalProcess("KILL")
    return terminal.ended

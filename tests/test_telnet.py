"""
The telnet console: off by default; when enabled, a real telnet session on 127.0.0.1
logs in and runs code inside the running crawl; wrong credentials and a taken port.
"""

import io
import logging
import socket
import sys

from twisted.conch.telnet import ECHO, LINEMODE, NAWS, SGA, TelnetProtocol, TelnetTransport
from twisted.internet import defer, protocol, reactor
from twisted.trial import unittest

from tinyscrapy import Spider
from tinyscrapy.extensions.telnet import TelnetConsole, update_telnet_vars
from tinyscrapy.signals import Signal
from tinyscrapy.utils.test import get_crawler

from .helpers import crawl, serve
from .logs import capture_logs

WAIT = 10.0  # seconds a session step may take before the test fails


class Session(TelnetProtocol):
    """
    The client side of a telnet session: everything received, and a Deferred for the
    moment a given text has arrived.
    """

    def __init__(self, connected):
        self.received = b""
        self._expected = None
        self._connected = connected

    def connectionMade(self):
        self._connected.callback(self)

    def enableRemote(self, option):
        return option in (ECHO, SGA)  # the server echoes (and hides the password)

    def enableLocal(self, option):
        return option in (LINEMODE, NAWS, SGA)  # what a telnet client agrees to do

    def dataReceived(self, data):
        self.received += data
        self._check()

    def expect(self, text):
        """@return: a Deferred firing once C{text} (bytes) has arrived since the last
        expectation was met; it fails after L{WAIT} seconds."""
        d = defer.Deferred()
        self._expected = (text, d, reactor.callLater(WAIT, self._timeout, text, d))
        self._check()
        return d

    def _check(self):
        if self._expected is None:
            return
        text, d, timer = self._expected
        index = self.received.find(text)
        if index >= 0:
            self._expected = None
            self.received = self.received[index + len(text):]
            timer.cancel()
            d.callback(None)

    def _timeout(self, text, d):
        self._expected = None
        d.errback(AssertionError(f"waited for {text!r}; got {self.received[-300:]!r}"))

    def send(self, line):
        self.transport.write(line.encode() + b"\n")  # Enter: the transport sends CR LF


class _SessionFactory(protocol.ClientFactory):
    def __init__(self):
        self.connected = defer.Deferred()

    def buildProtocol(self, addr):
        return TelnetTransport(Session, self.connected)


async def in_session(console, username, password, talk):
    """
    Open a telnet session to C{console}, answer its prompts with C{username} and
    C{password}, then run C{talk(session)}; the session ends with it.
    """
    factory = _SessionFactory()
    connector = reactor.connectTCP("127.0.0.1", console.port.getHost().port, factory)
    try:
        session = await factory.connected
        await session.expect(b"Username: ")
        session.send(username)
        await session.expect(b"Password: ")
        session.send(password)
        await talk(session)
    finally:
        connector.disconnect()


class ConsoleSpider(Spider):
    """Holds the crawl open on its page until the test's telnet session is done."""

    name = "console"

    def parse(self, response):
        d = defer.Deferred()
        self.crawler.signals.send(_page_reached, console=self._console(), hold=d)
        return d

    def _console(self):
        return next(ext for ext in self.crawler.extensions.middlewares
                    if isinstance(ext, TelnetConsole))


_page_reached = Signal("page_reached")  # the test's own: the crawl holds on its page


class TelnetConsoleTests(unittest.TestCase):
    """A real session against the console of a running crawl."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")
        self.logs = capture_logs(self)

    def settings(self, **more):
        values = {"TELNETCONSOLE_ENABLED": True, "TELNETCONSOLE_PORT": [0],
                  "LOG_LEVEL": "INFO"}
        values.update(more)
        return values

    def run_with_session(self, session_steps, **settings):
        """Crawl with the console on; on the page, run C{session_steps(console)}, then let
        the crawl end. @return: a Deferred firing with the crawler."""
        from tinyscrapy.crawler import Crawler
        from tinyscrapy.settings import Settings
        base = {"FEEDS": {}}
        base.update(self.settings(**settings))
        crawler = Crawler(ConsoleSpider, Settings(base))
        outcome = {}

        def page_reached(console, hold):
            d = defer.ensureDeferred(session_steps(console))
            d.addBoth(_keep, outcome)
            d.addBoth(_release, hold)

        crawler.signals.connect(page_reached, _page_reached)
        d = crawler.crawl(start_urls=[self.start])
        d.addCallback(_check_outcome, outcome, crawler)
        return d

    @defer.inlineCallbacks
    def test_session_runs_code_in_the_crawl(self):
        """Log in with the user and the generated password; the console's names are the
        running crawl's."""
        async def talk(session):
            await session.expect(b">>> ")
            session.send("print('spider=' + spider.name)")
            await session.expect(b"spider=console")
            session.send("print('pages=%d' % stats.get_value('response_received_count'))")
            await session.expect(b"pages=1")
            session.send("est()")
            await session.expect(b"Execution engine status")
            session.send("prefs()")
            await session.expect(b"Live References")

        async def steps(console):
            await in_session(console, "scrapy", console.password, talk)

        stderr = io.StringIO()
        self.patch(sys, "stderr", stderr)
        crawler = yield self.run_with_session(steps)
        self.assertEqual(stderr.getvalue(),
                         f"Telnet Password: {self._console_password(crawler)}\n")
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        listening = [m for m in self.logs.messages() if m.startswith("Telnet console listening")]
        self.assertEqual(len(listening), 1)
        self.assertRegex(listening[0], r"^Telnet console listening on 127\.0\.0\.1:\d+$")
        self.assertNotIn(self._console_password(crawler), self.logs.text())

    def _console_password(self, crawler):
        return next(ext for ext in crawler.extensions.middlewares
                    if isinstance(ext, TelnetConsole)).password

    @defer.inlineCallbacks
    def test_wrong_password_is_refused(self):
        """A wrong password: "Authentication failed" and no prompt; a warning, once."""
        async def talk(session):
            await session.expect(b"Authentication failed")
            await session.expect(b"Username: ")
            self.assertNotIn(b">>> ", session.received)

        async def steps(console):
            await in_session(console, "scrapy", "not-the-password", talk)

        yield self.run_with_session(steps, TELNETCONSOLE_PASSWORD="right")
        self.assertEqual(self.logs.messages().count("Telnet console: a login failed"), 1)

    @defer.inlineCallbacks
    def test_custom_credentials_and_extra_names(self):
        """TELNETCONSOLE_USERNAME/PASSWORD log in; an update_telnet_vars receiver adds a
        name to the console."""
        async def talk(session):
            await session.expect(b">>> ")
            session.send("print(answer * 2)")
            await session.expect(b"84")

        async def steps(console):
            console.crawler.signals.connect(_add_answer, update_telnet_vars)
            await in_session(console, "me", "secret", talk)

        yield self.run_with_session(steps, TELNETCONSOLE_USERNAME="me",
                                    TELNETCONSOLE_PASSWORD="secret")

    @defer.inlineCallbacks
    def test_taken_port_is_one_error_and_the_crawl_goes_on(self):
        """Every port of the range taken: one ERROR line naming CannotListenError; the
        crawl finishes."""
        with socket.create_server(("127.0.0.1", 0)) as taken:
            port = taken.getsockname()[1]
            crawler = yield crawl(_OnePage, self.settings(TELNETCONSOLE_PORT=[port],
                                                          TELNETCONSOLE_PASSWORD="p"),
                                  start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        errors = [m for m in self.logs.messages() if m.startswith("Telnet console: cannot")]
        self.assertEqual(len(errors), 1)
        self.assertIn("CannotListenError", errors[0])

    @defer.inlineCallbacks
    def test_off_by_default_and_off_by_scrapy_path(self):
        """No console unless enabled; EXTENSIONS {Scrapy's path: None} switches it off."""
        crawler = yield crawl(_OnePage, {"LOG_LEVEL": "INFO"}, start_urls=[self.start])
        self.assertFalse([ext for ext in crawler.extensions.middlewares
                          if isinstance(ext, TelnetConsole)])
        crawler = yield crawl(_OnePage, self.settings(EXTENSIONS={
            "scrapy.extensions.telnet.TelnetConsole": None}), start_urls=[self.start])
        self.assertFalse([ext for ext in crawler.extensions.middlewares
                          if isinstance(ext, TelnetConsole)])
        self.assertFalse([m for m in self.logs.messages(logging.INFO)
                          if m.startswith("Telnet")])


class TelnetConsoleUnitTests(unittest.TestCase):
    """The console's settings."""

    def test_reversed_range_is_a_value_error(self):
        """[2, 1] is refused when it starts listening, as Scrapy does."""
        console = TelnetConsole.from_crawler(get_crawler(settings_dict={
            "TELNETCONSOLE_ENABLED": True, "TELNETCONSOLE_PORT": [2, 1],
            "TELNETCONSOLE_PASSWORD": "p"}))
        error = self.assertRaises(ValueError, console.start_listening)
        self.assertEqual(str(error), "invalid portrange: [2, 1]")

    def test_port_forms(self):
        """A port, a text of one or two, or a list; anything else is a usage error."""
        from tinyscrapy.exceptions import UsageError
        from tinyscrapy.extensions.telnet import port_range
        self.assertEqual(port_range(6023), [6023])
        self.assertEqual(port_range("6023,6073"), [6023, 6073])
        self.assertEqual(port_range([6023, "6073"]), [6023, 6073])
        self.assertRaises(UsageError, port_range, "many")

    def test_generated_password(self):
        """No password set: 16 hex digits, made for this crawl, written to stderr."""
        stderr = io.StringIO()
        self.patch(sys, "stderr", stderr)
        console = TelnetConsole.from_crawler(get_crawler(settings_dict={
            "TELNETCONSOLE_ENABLED": True}))
        self.assertRegex(console.password, r"^[0-9a-f]{16}$")
        self.assertEqual(stderr.getvalue(), f"Telnet Password: {console.password}\n")


class _OnePage(Spider):
    name = "one"

    def parse(self, response):
        return None


def _add_answer(telnet_vars):
    telnet_vars["answer"] = 42


def _keep(result, outcome):
    outcome["result"] = result
    return None


def _release(_, hold):
    hold.callback(None)


def _check_outcome(_, outcome, crawler):
    result = outcome.get("result")
    if hasattr(result, "raiseException"):
        result.raiseException()
    if "result" not in outcome:
        raise AssertionError("the session never ran")
    return crawler

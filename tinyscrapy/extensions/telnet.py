"""
L{TelnetConsole}: a Python console inside the running crawl, over telnet, as Scrapy's
extension (Twisted's C{twisted.conch}: a telnet server in front of C{manhole}).

Off unless C{TELNETCONSOLE_ENABLED} (Scrapy has it on: a console that runs code on a port
is off here unless asked for). From C{engine_started} to C{engine_stopped} it listens on
C{TELNETCONSOLE_HOST} (C{127.0.0.1}) at the first free port of C{TELNETCONSOLE_PORT} (a
port, or a C{[first, last]} range; C{[6023, 6073]}), and logs where::

    Telnet console listening on 127.0.0.1:6023

Log in with C{TELNETCONSOLE_USERNAME} (C{scrapy}) and C{TELNETCONSOLE_PASSWORD}; when no
password is set, one is made for the crawl and written to stderr as
C{Telnet Password: <16 hex digits>} -- on the terminal, never into the log. The console's
names: C{engine}, C{spider}, C{crawler}, C{extensions}, C{stats}, C{settings}, C{est()}
(the engine's status), C{p()} (C{pprint}), C{prefs()} (the live references; tracking is
on while a console is enabled) and C{help}; a receiver of L{update_telnet_vars} may add
its own. Code typed there runs in the reactor's thread: what blocks, blocks the crawl.

A port that cannot be listened on, or a bad range, is one ERROR line; the crawl goes on
without the console.
"""

import hmac
import logging
import pprint
import sys
from functools import partial
from secrets import token_hex
from weakref import WeakSet

from twisted.internet import protocol
from twisted.internet.defer import fail, succeed
from twisted.internet.error import CannotListenError

from tinyscrapy import signals
from tinyscrapy.exceptions import NotConfigured, UsageError
from tinyscrapy.signals import Signal
from tinyscrapy.utils.reactor import listen_tcp
from tinyscrapy.utils.trackref import print_live_refs, start_tracking

logger = logging.getLogger(__name__)

# sent with telnet_vars (the console's names, a dict a receiver may change) at each login
update_telnet_vars = Signal("update_telnet_vars")

HELP = ("This is the tinyscrapy telnet console, Scrapy's. For more info see: "
        "https://docs.scrapy.org/en/latest/topics/telnetconsole.html")
_LOOPBACK = ("127.", "::1", "localhost")


def port_range(value):
    """
    C{TELNETCONSOLE_PORT} as a list of one or two port numbers.

    @param value: a port, a text of one or two (C{"6023"}, C{"6023,6073"}), or a list.
    @raise UsageError: it is none of these.
    """
    parts = value.split(",") if isinstance(value, str) else value
    if isinstance(parts, int) and not isinstance(parts, bool):
        parts = [parts]
    try:
        ports = [int(part) for part in parts]
    except (TypeError, ValueError):
        raise UsageError(f"setting TELNETCONSOLE_PORT={value!r}: expected a port or a "
                         f"[first, last] range") from None
    return ports


class TelnetConsole(protocol.ServerFactory):
    """
    The console's server (see the module docstring).

    @ivar portrange: the ports to try, as C{TELNETCONSOLE_PORT} gives them.
    @ivar host: the interface it listens on.
    @ivar username: the user name to log in with.
    @ivar password: the password (made for the crawl when none is set).
    @ivar port: the listening port while it listens, else None.
    """

    noisy = False

    def __init__(self, crawler):
        """
        @raise NotConfigured: C{TELNETCONSOLE_ENABLED} is off.
        @raise UsageError: C{TELNETCONSOLE_PORT} is not a port or a range.
        """
        settings = crawler.settings
        if not settings.getbool("TELNETCONSOLE_ENABLED"):
            raise NotConfigured
        self.crawler = crawler
        self.port = None
        self._sessions = WeakSet()
        self.portrange = port_range(settings.get("TELNETCONSOLE_PORT"))
        self.host = settings["TELNETCONSOLE_HOST"]
        self.username = settings["TELNETCONSOLE_USERNAME"]
        self.password = settings["TELNETCONSOLE_PASSWORD"]
        if not self.password:
            self.password = token_hex(8)
            sys.stderr.write(f"Telnet Password: {self.password}\n")  # not into the log
            sys.stderr.flush()
        start_tracking(crawler.spider)  # for prefs()
        crawler.signals.connect(self.engine_started, signal=signals.engine_started)
        crawler.signals.connect(self.stop_listening, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def engine_started(self):
        """Listen; a port that cannot be had is one ERROR line, and the crawl goes on."""
        try:
            self.start_listening()
        except (CannotListenError, ValueError) as e:
            logger.error("Telnet console: cannot listen on %s port %s (%s: %s)", self.host,
                         self.portrange, type(e).__name__, e)

    def start_listening(self):
        """
        Listen on the first free port of the range.

        @raise ValueError: the range is not one or two ports, first to last.
        @raise CannotListenError: no port of it is free.
        """
        self.port = self._listen()
        address = self.port.getHost()
        if not self.host.startswith(_LOOPBACK):
            logger.warning("Telnet console on %s: whoever reaches that address and knows "
                           "the password can run code in this crawl", self.host)
        logger.info("Telnet console listening on %(host)s:%(port)d",
                    {"host": address.host, "port": address.port},
                    extra={"crawler": self.crawler})

    def _listen(self):
        return listen_tcp(self.portrange, self.host, self, reactor=self.crawler.reactor)

    def buildProtocol(self, addr):
        """A connection's protocol, remembered so that L{stop_listening} ends it."""
        connection = super().buildProtocol(addr)
        self._sessions.add(connection)
        return connection

    def stop_listening(self):
        """
        Stop listening, and end the sessions still open (the crawl they show is over).

        @return: None, or a Deferred that fires once the port is closed.
        """
        for connection in list(self._sessions):
            if connection.transport is not None:
                connection.transport.loseConnection()
        self._sessions.clear()
        port, self.port = self.port, None
        if port is not None:
            return port.stopListening()
        return None

    def protocol(self):
        """A telnet connection: log in, then a C{manhole} with L{_get_telnet_vars}."""
        from twisted.conch import telnet  # only with the console on (some 10 ms to import)
        return telnet.TelnetTransport(telnet.AuthenticatingTelnetProtocol, _Portal(self))

    def _get_telnet_vars(self):
        """The console's names, as a receiver of L{update_telnet_vars} leaves them."""
        from tinyscrapy.extensions.debug import print_engine_status
        crawler = self.crawler
        engine = crawler.engine
        telnet_vars = {
            "engine": engine,
            "spider": getattr(engine, "spider", None),
            "crawler": crawler,
            "extensions": crawler.extensions,
            "stats": crawler.stats,
            "settings": crawler.settings,
            "est": partial(print_engine_status, engine),
            "p": pprint.pprint,
            "prefs": print_live_refs,
            "help": HELP,
        }
        crawler.signals.send(update_telnet_vars, telnet_vars=telnet_vars)
        return telnet_vars


class _Portal:
    """Twisted's C{IPortal}, for one user name and password."""

    def __init__(self, console):
        self.console = console

    def login(self, credentials, mind, *interfaces):
        """
        @return: a Deferred firing with C{(interface, the manhole's protocol, logout)}, or
            failing with C{ValueError("Invalid credentials")}.
        """
        console = self.console
        username = console.username.encode("utf8")
        password = console.password.encode("utf8")
        given = getattr(credentials, "password", None)
        if not (hmac.compare_digest(credentials.username, username)
                and isinstance(given, bytes) and hmac.compare_digest(given, password)):
            logger.warning("Telnet console: a login failed")
            return fail(ValueError("Invalid credentials"))
        from twisted.conch import manhole, telnet
        from twisted.conch.insults import insults
        shell = telnet.TelnetBootstrapProtocol(insults.ServerProtocol, manhole.Manhole,
                                               console._get_telnet_vars())
        return succeed((interfaces[0], shell, _logout))


def _logout():
    return None

"""
Helpers shared by the fetch-path tests: a fetcher with its cleanup, stats, waiting for
a server-side condition, and catching a Deferred's failure with its time.
"""

import logging
import time

from twisted.internet import defer, reactor, task

from tinyscrapy.core.downloader.handlers.http11 import HttpFetcher
from tinyscrapy.http import Request
from tinyscrapy.settings import Settings
from tinyscrapy.statscollectors import StatsCollector


def make_fetcher(testcase, settings=None, on_sent=None):
    """An L{HttpFetcher} with real stats, closed in the test's cleanup."""
    fetcher = HttpFetcher(reactor, Settings(settings or {}), stats=StatsCollector(),
                          on_sent=on_sent)
    testcase.addCleanup(fetcher.close)
    return fetcher


def get(fetcher, url, **kwargs):
    """Fetch C{url} (a L{Request} built from C{kwargs})."""
    return fetcher.fetch(Request(url, **kwargs))


def open_connections(server):
    """How many server-side connections of C{server} are still open."""
    return len(server._factory.protocols)


@defer.inlineCallbacks
def wait_until(predicate, timeout=3.0, step=0.02):
    """
    Poll C{predicate()} every C{step} seconds, at most C{timeout} seconds.

    @return: a Deferred firing with the time waited, or with None if it never held.
    """
    start = time.monotonic()
    for _ in range(int(timeout / step) + 1):
        if predicate():
            return time.monotonic() - start
        yield task.deferLater(reactor, step, _nothing)
    return None


def _nothing():
    return None


def connections_closed(server, timeout=10.0):
    """
    Wait for the event "every connection C{server} has open now is closed, seen from the
    server" (each connection's C{closed} Deferred), at most C{timeout} seconds: a bound
    for a test that fails, not a guess of how long closing takes.

    @return: a Deferred firing with True once they are closed, or False at the bound.
    """
    waits = [connection.closed for connection in list(server._factory.protocols)]
    if not waits:
        return defer.succeed(True)
    result = defer.Deferred()
    timer = reactor.callLater(timeout, _fire_once, result, False)
    all_closed = defer.DeferredList(waits)
    all_closed.addCallback(_cb_all_closed, result, timer)
    return result


def _cb_all_closed(_, result, timer):
    if timer.active():
        timer.cancel()
    _fire_once(result, True)


def _fire_once(result, value):
    if not result.called:
        result.callback(value)


@defer.inlineCallbacks
def failure_of(d):
    """
    @return: a Deferred firing with C{(exception, seconds)} once C{d} errbacks, or
        C{(result, seconds)} when it unexpectedly succeeds.
    """
    start = time.monotonic()
    try:
        result = yield d
    except Exception as e:
        return e, time.monotonic() - start
    return result, time.monotonic() - start


class CapturedLogs(logging.Handler):
    """Records the messages of one logger for the length of a test."""

    def __init__(self, testcase, name="tinyscrapy"):
        super().__init__(logging.DEBUG)
        self.messages = []
        logger = logging.getLogger(name)
        logger.addHandler(self)
        testcase.addCleanup(logger.removeHandler, self)

    def emit(self, record):
        self.messages.append((record.levelname, record.getMessage()))

"""
Helpers shared by the fetch-path tests: a fetcher with its cleanup, stats, waiting for
a server-side condition, and catching a Deferred's failure with its time.
"""

import logging
import time

from twisted.internet import defer, reactor, task

from tinyscrapy.download.fetcher import HttpFetcher
from tinyscrapy.http import Request
from tinyscrapy.observe.stats import StatsCollector
from tinyscrapy.settings import Settings


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

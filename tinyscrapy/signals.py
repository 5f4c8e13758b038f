"""
Signals: named moments of a crawl that user code can listen to.

    crawler.signals.connect(my_function, signals.item_scraped)

A receiver is called with keyword arguments (which ones each signal sends is listed below;
a receiver takes the ones it wants and C{**kwargs}). Sending to a signal nobody listens to
costs one dictionary lookup. A receiver that raises is logged and does not stop the crawl.
L{SignalBus.send_deferred} waits for receivers that return Deferreds (used at close).
"""

import logging

from twisted.internet.defer import DeferredList, maybeDeferred

logger = logging.getLogger(__name__)


class Signal:
    """A signal's identity; compared by identity, printed by name."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<signal {self.name}>"


engine_started = Signal("engine_started")          # (spider)
request_scheduled = Signal("request_scheduled")    # (request, spider)
request_dropped = Signal("request_dropped")        # (request, reason, spider)
request_reached_downloader = Signal("request_reached_downloader")  # (request, spider)
request_left_downloader = Signal("request_left_downloader")  # (request, result, spider)
request_done = Signal("request_done")              # (request, spider): out of flight
engine_turn = Signal("engine_turn")                # (spider): one turn of the loop ended
response_received = Signal("response_received")    # (response, request, spider)
item_scraped = Signal("item_scraped")              # (item, response, spider)
item_dropped = Signal("item_dropped")              # (item, response, exception, spider)
spider_error = Signal("spider_error")              # (failure, response, spider): a callback raised
download_error = Signal("download_error")          # (failure, request, spider): failed for good
spider_idle = Signal("spider_idle")                # (spider); raise DontCloseSpider to stay
spider_closed = Signal("spider_closed")            # (spider, reason)


class SignalBus:
    """The receivers of one crawler's signals."""

    def __init__(self):
        self._receivers = {}

    def connect(self, receiver, signal):
        """Call C{receiver(**kwargs)} each time C{signal} is sent."""
        self._receivers.setdefault(signal, []).append(receiver)

    def disconnect(self, receiver, signal):
        receivers = self._receivers.get(signal, [])
        if receiver in receivers:
            receivers.remove(receiver)

    def listened(self, signal):
        """True if anyone listens to C{signal}."""
        return bool(self._receivers.get(signal))

    def send(self, signal, **kwargs):
        """
        Call every receiver of C{signal} now, in the order they connected.

        @return: a list of C{(receiver, result)}; a receiver that raised has its exception
            as result (L{DontCloseSpider} included, so the engine can see it).
        """
        receivers = self._receivers.get(signal)
        if not receivers:
            return []
        results = []
        for receiver in list(receivers):
            try:
                results.append((receiver, receiver(**kwargs)))
            except Exception as e:
                if type(e).__name__ != "DontCloseSpider":
                    logger.exception("signal %s: receiver %r raised", signal.name, receiver)
                results.append((receiver, e))
        return results

    def send_deferred(self, signal, **kwargs):
        """
        Like L{send}, but wait for receivers that return Deferreds.

        @return: a Deferred that fires (with None) once every receiver has finished;
            receiver failures are logged, never propagated.
        """
        receivers = self._receivers.get(signal) or []
        waits = [maybeDeferred(receiver, **kwargs) for receiver in list(receivers)]
        for wait in waits:
            wait.addErrback(_log_receiver_failure, signal)
        return DeferredList(waits).addCallback(_discard)


def _log_receiver_failure(failure, signal):
    logger.error("signal %s: a receiver failed", signal.name,
                 exc_info=(failure.type, failure.value, failure.getTracebackObject()))


def _discard(_result):
    return None

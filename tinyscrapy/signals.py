"""
Signals: named moments of a crawl that user code can listen to.

    crawler.signals.connect(my_function, signal=signals.item_scraped)

A receiver gets, as keyword arguments, only the ones it accepts, as Scrapy's dispatcher
does: C{def spider_closed(self, spider)} works although C{reason} is sent too, and a
receiver with C{**kwargs} gets them all. (It may also name C{signal} and C{sender}: the
signal, and the crawler.) Which arguments a receiver accepts is read from its signature
once, when it connects. Sending to a signal nobody listens to costs one dictionary lookup.
A receiver that raises is logged and does not stop the crawl. L{SignalBus.send_deferred}
waits for receivers that return Deferreds or are C{async def} (used for C{spider_opened},
C{spider_closed} and C{engine_stopped}, as in Scrapy); L{SignalBus.send_waiting} does for
C{item_scraped}, and makes nothing when no receiver answers with one.

docs/items.md lists the signals, what each sends and when.
"""

import inspect
import logging

from twisted.internet.defer import Deferred, DeferredList, ensureDeferred, maybeDeferred

logger = logging.getLogger(__name__)


class Signal:
    """A signal's identity; compared by identity, printed by name."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<signal {self.name}>"


# the arguments each signal sends; a receiver takes the ones it names
engine_started = Signal("engine_started")          # (spider)
engine_stopped = Signal("engine_stopped")          # (): the crawl is over, stats closed
spider_opened = Signal("spider_opened")            # (spider): before the first request
scheduler_empty = Signal("scheduler_empty")        # (): nothing ready in the frontier
request_scheduled = Signal("request_scheduled")    # (request, spider)
request_dropped = Signal("request_dropped")        # (request, reason, spider)
request_reached_downloader = Signal("request_reached_downloader")  # (request, spider)
request_left_downloader = Signal("request_left_downloader")  # (request, result, spider)
request_done = Signal("request_done")              # (request, spider): out of flight
engine_turn = Signal("engine_turn")                # (spider): one turn of the loop ended
headers_received = Signal("headers_received")      # (headers, body_length, request, spider)
bytes_received = Signal("bytes_received")          # (data, request, spider): each body read
#   (a receiver of these two may raise StopDownload to stop the download)
response_downloaded = Signal("response_downloaded")  # (response, request, spider): off
#                                                    the wire, before the middlewares
response_received = Signal("response_received")    # (response, request, spider)
item_scraped = Signal("item_scraped")              # (item, response, spider)
item_dropped = Signal("item_dropped")              # (item, response, exception, spider)
item_error = Signal("item_error")                  # (item, response, spider, failure)
spider_error = Signal("spider_error")              # (failure, response, spider): a callback raised
download_error = Signal("download_error")          # (failure, request, spider): failed for good
spider_idle = Signal("spider_idle")                # (spider); raise DontCloseSpider to stay
spider_closed = Signal("spider_closed")            # (spider, reason)


# what a receiver of these signals raises to decide something, not because it broke: such
# an exception is handed back in the results, not logged
_DECISIONS = {"spider_idle": ("DontCloseSpider", "CloseSpider"),
              "headers_received": ("StopDownload",), "bytes_received": ("StopDownload",)}


class SignalBus:
    """
    The receivers of one crawler's signals.

    @ivar sender: what a receiver that names C{sender} gets (the crawler).
    """

    def __init__(self, sender=None):
        self.sender = sender
        self._receivers = {}  # signal -> [(receiver, names it accepts or None for all)]

    def connect(self, receiver, signal, **_kwargs):
        """Call C{receiver} with the keywords it accepts each time C{signal} is sent."""
        self._receivers.setdefault(signal, []).append((receiver, _accepted_names(receiver)))

    def disconnect(self, receiver, signal, **_kwargs):
        entries = self._receivers.get(signal, [])
        for entry in entries:
            if entry[0] == receiver:
                entries.remove(entry)
                break

    def disconnect_all(self, signal, **_kwargs):
        """Forget every receiver of C{signal}."""
        self._receivers.pop(signal, None)

    def listened(self, signal):
        """True if anyone listens to C{signal}."""
        return bool(self._receivers.get(signal))

    def send(self, signal, **kwargs):
        """
        Call every receiver of C{signal} now, in the order they connected.

        @return: a list of C{(receiver, result)}; a receiver that raised has its exception
            as result (L{DontCloseSpider} included, so the engine can see it).
        """
        entries = self._receivers.get(signal)
        if not entries:
            return []
        results = []
        for receiver, names in list(entries):
            try:
                if names is None:
                    result = receiver(**kwargs)
                else:
                    result = receiver(**self._arguments(names, signal, kwargs))
                results.append((receiver, result))
            except Exception as e:
                if type(e).__name__ not in _DECISIONS.get(signal.name, ()):
                    logger.exception("signal %s: receiver %r raised", signal.name, receiver)
                results.append((receiver, e))
        return results

    send_catch_log = send  # Scrapy's name

    def send_waiting(self, signal, **kwargs):
        """
        Like L{send}, for a signal whose receivers may answer later (C{item_scraped}).

        @return: None when no receiver returned a Deferred or a coroutine (the common
            case: nothing is made), else a Deferred that fires with None once they all
            have; their failures are logged, never propagated.
        """
        waits = [_as_deferred(result) for _, result in self.send(signal, **kwargs)
                 if isinstance(result, Deferred) or inspect.isawaitable(result)]
        if not waits:
            return None
        for wait in waits:
            wait.addErrback(_log_receiver_failure, signal)
        return DeferredList(waits, consumeErrors=True).addCallback(_discard)

    def send_deferred(self, signal, **kwargs):
        """
        Like L{send}, but wait for receivers that return Deferreds or coroutines.

        @return: a Deferred that fires with the list of C{(receiver, result)} once every
            receiver has finished; a receiver's failure is logged and its result is the
            failure's exception (it never errbacks).
        """
        entries = list(self._receivers.get(signal) or [])
        waits = [maybeDeferred(_call_awaiting, receiver,
                               self._arguments(names, signal, kwargs))
                 for receiver, names in entries]
        for wait in waits:
            wait.addErrback(_log_receiver_failure, signal)
        d = DeferredList(waits, consumeErrors=True)
        d.addCallback(_pair_results, [receiver for receiver, _ in entries])
        return d

    send_catch_log_deferred = send_deferred  # Scrapy's name

    def _arguments(self, names, signal, kwargs):
        """The keywords for a receiver that accepts C{names} (None: all of them)."""
        if names is None:
            return kwargs
        chosen = {key: value for key, value in kwargs.items() if key in names}
        if "signal" in names:
            chosen["signal"] = signal
        if "sender" in names and "sender" not in kwargs:
            chosen["sender"] = self.sender
        return chosen


def _accepted_names(receiver):
    """
    The keyword names C{receiver} accepts, or None when it takes C{**kwargs} (or its
    signature cannot be read: then it gets every argument, as before).
    """
    try:
        parameters = inspect.signature(receiver).parameters.values()
    except (TypeError, ValueError):
        return None
    names = set()
    for parameter in parameters:
        if parameter.kind is parameter.VAR_KEYWORD:
            return None
        if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            names.add(parameter.name)
    return frozenset(names)


def _call_awaiting(receiver, kwargs):
    """Call a receiver; a coroutine it returns becomes a Deferred to wait for."""
    result = receiver(**kwargs)
    if inspect.isawaitable(result) and not isinstance(result, Deferred):
        return ensureDeferred(result)
    return result


def _as_deferred(result):
    return result if isinstance(result, Deferred) else ensureDeferred(_awaited(result))


async def _awaited(awaitable):
    return await awaitable


def _discard(_result):
    return None


def _pair_results(results, receivers):
    return [(receiver, value if ok else value.value)
            for receiver, (ok, value) in zip(receivers, results, strict=True)]


def _log_receiver_failure(failure, signal):
    """Log a receiver's failure; it stays the result, for L{SignalBus.send_deferred}."""
    logger.error("signal %s: a receiver failed", signal.name,
                 exc_info=(failure.type, failure.value, failure.getTracebackObject()))
    return failure

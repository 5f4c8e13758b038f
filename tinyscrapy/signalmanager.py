"""
L{SignalBus}: the crawl's signals, sent to their receivers, as Scrapy's
C{scrapy.signalmanager.SignalManager} (L{SignalManager} is the same class); and
L{dispatcher}, for the receivers a script connects to every crawl of the process.

    crawler.signals.connect(my_function, signal=signals.item_scraped)

A receiver gets, as keyword arguments, only the ones it accepts, as Scrapy's dispatcher
does. L{SignalBus.send} calls the receivers in the order they connected and returns
C{(receiver, result)} pairs, an exception a receiver raised among them (logged, unless it
is the decision the signal is for: C{DontCloseSpider} and C{CloseSpider} from
C{spider_idle}, C{StopDownload} from the download signals). A receiver of a signal sent
this way that returns a Deferred or a coroutine is not waited for, but is not lost either:
a coroutine runs, and a failure either of them ends with is logged.
L{SignalBus.send_deferred} waits for the Deferreds (or coroutines) receivers return, and
fires once they all have; a failure among them is logged and swallowed. A receiver's
other results are its own business: they are returned, never an error. The signals
themselves are the objects of L{tinyscrapy.signals}.
"""

import inspect
import logging

from twisted.internet.defer import CancelledError, Deferred, DeferredList, maybeDeferred
from twisted.python.failure import Failure

from tinyscrapy.signals import _DECISIONS
from tinyscrapy.utils.defer import Unwaited, deferred_from_coro

logger = logging.getLogger(__name__)


class SignalBus:
    """
    The receivers of one crawler's signals.

    @ivar sender: what a receiver that names C{sender} gets (the crawler).
    @ivar unwaited: the L{Unwaited} that keeps the Deferreds of receivers of signals sent
        without waiting (the crawl's close waits for them).
    """

    def __init__(self, sender=None, unwaited=None):
        self.sender = sender
        self.unwaited = unwaited if unwaited is not None else Unwaited()
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

    def connections(self):
        """
        The receivers connected here (not L{dispatcher}'s), as now.

        @return: a new dict of each signal to a list of its receivers, in the order they
            connected.
        """
        return {signal: [receiver for receiver, _names in entries]
                for signal, entries in self._receivers.items()}

    def listened(self, signal):
        """True if anyone listens to C{signal} (here, or through L{dispatcher})."""
        return bool(self._receivers.get(signal)) or (bool(_GLOBAL) and signal in _GLOBAL)

    def send(self, signal, **kwargs):
        """
        Call every receiver of C{signal} now, in the order they connected.

        @return: a list of C{(receiver, result)}; a receiver that raised has its exception
            as result (L{DontCloseSpider} included, so the engine can see it); one that
            returned a coroutine has its Deferred (it runs), and a failure of that Deferred,
            or of one a receiver returned, is logged and ends there.
        """
        entries = self._receivers.get(signal)
        if _GLOBAL and signal in _GLOBAL:  # a script's dispatcher.connect(): every crawl
            entries = [*(entries or ()), *_GLOBAL[signal]]
        if not entries:
            return []
        results = []
        for receiver, names in list(entries):
            try:
                if names is None:
                    result = receiver(**kwargs)
                else:
                    result = receiver(**self._arguments(names, signal, kwargs))
                if result is not None and inspect.isawaitable(result):
                    result = _running(result)
                    self.unwaited.add(result, f"signal {signal.name}: receiver {receiver!r}"
                                              f"{_about(kwargs)}")
                results.append((receiver, result))
            except Exception as e:
                if type(e).__name__ not in _DECISIONS.get(signal.name, ()):
                    logger.exception("signal %s: receiver %r raised%s", signal.name,
                                     receiver, _about(kwargs))
                results.append((receiver, e))
        return results

    def send_catch_log(self, signal, **kwargs):
        """Scrapy's L{send}: a receiver that raised has a C{Failure} as its result.
        C{dont_log} (Scrapy's) is accepted and ignored: the decisions a signal is for
        are never logged anyway."""
        kwargs.pop("dont_log", None)
        return [(receiver, Failure(result) if isinstance(result, Exception) else result)
                for receiver, result in self.send(signal, **kwargs)]

    def send_waiting(self, signal, **kwargs):
        """
        Like L{send}, for a signal whose receivers may answer later (C{item_scraped}).

        @return: None when no receiver returned a Deferred or a coroutine (the common
            case: nothing is made), else a Deferred that fires with None once they all
            have; their failures are logged, never propagated.
        """
        waits = [result for _, result in self.send(signal, **kwargs)
                 if isinstance(result, Deferred)]
        if not waits:
            return None
        return DeferredList(waits, consumeErrors=True).addCallback(_discard)

    def send_deferred(self, signal, **kwargs):
        """
        Like L{send}, but wait for receivers that return Deferreds or coroutines.

        @return: a Deferred that fires with the list of C{(receiver, result)} once every
            receiver has finished; a receiver's failure is logged and its result is the
            failure's exception (it never errbacks).
        """
        entries = [*(self._receivers.get(signal) or ()), *_GLOBAL.get(signal, ())]
        waits = [maybeDeferred(_call_awaiting, receiver,
                               self._arguments(names, signal, kwargs))
                 for receiver, names in entries]
        for wait, (receiver, _) in zip(waits, entries, strict=True):
            wait.addErrback(_log_receiver_failure, signal, receiver)
        d = DeferredList(waits, consumeErrors=True)
        d.addCallback(_pair_results, [receiver for receiver, _ in entries])
        return d

    send_catch_log_deferred = send_deferred  # Scrapy's name

    async def send_catch_log_async(self, signal, **kwargs):
        """L{send_deferred} as a coroutine (Scrapy 2.14). @return: the pairs."""
        kwargs.pop("dont_log", None)
        return await self.send_deferred(signal, **kwargs)

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
    signature cannot be read: then it gets every argument, as with C{**kwargs}).
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
    if inspect.isawaitable(result):
        return _running(result)
    return result


def _running(awaitable):
    """A Deferred for what a receiver returned: itself, or its coroutine running (as an
    asyncio Task under the asyncio reactor)."""
    if isinstance(awaitable, Deferred):
        return awaitable
    if not inspect.iscoroutine(awaitable):
        awaitable = _awaited(awaitable)
    return deferred_from_coro(awaitable)


async def _awaited(awaitable):
    return await awaitable


def _discard(_result):
    return None


def _pair_results(results, receivers):
    return [(receiver, value if ok else value.value)
            for receiver, (ok, value) in zip(receivers, results, strict=True)]


def _log_receiver_failure(failure, signal, receiver):
    """Log a receiver's failure (its cancel at close only at INFO level: the crawl gave up
    waiting for it); it stays the result, for L{SignalBus.send_deferred}."""
    if failure.check(CancelledError):
        logger.info("signal %s: receiver %r cancelled (the crawl closed)", signal.name,
                    receiver)
    else:
        logger.error("signal %s: a receiver failed (%r)", signal.name, receiver,
                     exc_info=(failure.type, failure.value, failure.getTracebackObject()))
    return failure


def _about(kwargs):
    """The URL a signal is about (its response's or request's), for a log line."""
    target = kwargs.get("response") or kwargs.get("request")
    url = getattr(target, "url", None)
    return f" (for {url})" if url else ""


SignalManager = SignalBus  # Scrapy's name


# the receivers a script connected through the module-level dispatcher: signal -> entries
_GLOBAL = {}


class _Dispatcher:
    """
    Scrapy's C{scrapy.signalmanager.dispatcher} (pydispatcher's module there), for the
    scripts that connect a receiver to a signal of every crawl of the process::

        from tinyscrapy.signalmanager import dispatcher
        dispatcher.connect(count_item, signal=signals.item_scraped)
    """

    def connect(self, receiver, signal, sender=None, weak=True):
        _GLOBAL.setdefault(signal, []).append((receiver, _accepted_names(receiver)))

    def disconnect(self, receiver, signal, sender=None, weak=True):
        entries = _GLOBAL.get(signal, [])
        for entry in entries:
            if entry[0] == receiver:
                entries.remove(entry)
                break
        if not entries:
            _GLOBAL.pop(signal, None)


dispatcher = _Dispatcher()

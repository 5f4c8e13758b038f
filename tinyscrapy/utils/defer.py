"""
Scrapy's C{scrapy.utils.defer}: the boundary between the user's coroutines and the engine's
Deferreds. L{deferred_from_coro} runs a coroutine as a Deferred (as an asyncio Task under
the asyncio reactor, so that it may await asyncio code; under another reactor, awaiting an
asyncio future is an error that names C{TWISTED_REACTOR}); L{deferred_to_future} and
L{maybe_deferred_to_future} go the other way, for C{async def} code that awaits a
Deferred, and L{ensure_awaitable} makes anything awaitable.

Also Scrapy's helpers for code written with Deferreds: L{parallel} and L{parallel_async}
(a callable over an iterable, at most C{count} calls at a time), L{iter_errback} and
L{aiter_errback} (an iterable whose errors go to an errback), L{deferred_f_from_coro_f},
and the deprecated L{defer_fail}, L{defer_succeed}, L{defer_result},
L{mustbe_deferred}, L{process_chain}, L{process_parallel}, L{maybeDeferred_coro}, which
warn as Scrapy's do.

tinyscrapy's own, for the waits that must end: L{Waiting}, a wait one may give up (the
close of a crawl is bounded); L{ignore_result}, for a Deferred or a coroutine nobody will
wait for (its failure is still logged); and L{Unwaited}, the Deferreds of one crawl that
nobody waits for, which its close waits for (bounded) so that no failure of theirs is lost
when the reactor stops.
"""

import asyncio
import inspect
import logging
import os
import warnings
from collections import deque
from functools import wraps

from twisted.internet.defer import (
    CancelledError,
    Deferred,
    DeferredList,
    ensureDeferred,
    fail,
    succeed,
)
from twisted.python.failure import Failure

from tinyscrapy.exceptions import ScrapyDeprecationWarning
from tinyscrapy.utils.reactor import (
    _NO_ASYNCIO_LOOP,
    ASYNCIO_REACTOR,
    AsyncioReactorNeeded,
    _installed,
    is_asyncio_reactor_installed,
)


async def _process_pending_io():
    """
    Wait until the reactor has served the readers and writers it found ready (Scrapy's
    private helper): two turns of C{callLater(0)}, since the first may come back before
    the I/O of the same iteration and only the second surely after it.
    """
    from twisted.internet import reactor
    from twisted.internet.task import deferLater
    for _ in range(2):
        await deferLater(reactor, 0)


def deferred_from_coro(coro):
    """
    Run a coroutine (a callback's, a hook's, a pull of C{start()}) and wrap it as a
    Deferred: as an asyncio Task under the asyncio reactor, with C{ensureDeferred}
    otherwise. A Deferred, or anything that is not awaitable, is returned as it is.

    @return: a Deferred that fires with the coroutine's result, or errbacks with what it
        raised (L{AsyncioReactorNeeded} when it awaited asyncio code without the asyncio
        reactor). Cancelling it cancels the coroutine.
    """
    if isinstance(coro, Deferred) or not inspect.isawaitable(coro):
        return coro
    reactor = _installed()
    if type(reactor).__module__ == "twisted.internet.asyncioreactor":
        import asyncio
        return Deferred.fromFuture(asyncio.ensure_future(coro, loop=reactor._asyncioEventloop))
    d = ensureDeferred(coro)
    d.addErrback(_eb_explain_asyncio)
    return d


def _eb_explain_asyncio(failure):
    """asyncio's own error says nothing of the reactor: say which setting is missing."""
    if _raised_by_asyncio(failure):
        raise AsyncioReactorNeeded(
            f"a coroutine awaited asyncio code ({failure.value}), which needs the asyncio "
            f"reactor: set TWISTED_REACTOR = {ASYNCIO_REACTOR!r}") from failure.value
    return failure


_ASYNCIO_DIR = os.path.dirname(asyncio.__file__) + os.sep


def _raised_by_asyncio(failure):
    """Whether C{failure} is asyncio's, with no asyncio loop running the coroutine:
    asyncio's own messages for it, or an error raised inside asyncio (C{asyncio.Event},
    C{asyncio.Queue} and their kin fail with an C{AttributeError} there)."""
    if failure.check(AsyncioReactorNeeded, CancelledError, asyncio.CancelledError):
        return False
    if failure.check(RuntimeError) and str(failure.value) in _NO_ASYNCIO_LOOP:
        return True
    tb = failure.getTracebackObject()
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename.startswith(_ASYNCIO_DIR)


def deferred_to_future(d):
    """
    An asyncio Future for Deferred C{d}, to await it inside a coroutine under the asyncio
    reactor (Scrapy's C{scrapy.utils.defer.deferred_to_future}).

    @raise AsyncioReactorNeeded: the installed reactor is not asyncio's.
    """
    if not is_asyncio_reactor_installed():
        raise AsyncioReactorNeeded(
            f"deferred_to_future needs the asyncio reactor: set TWISTED_REACTOR = "
            f"{ASYNCIO_REACTOR!r}")
    return d.asFuture(_installed()._asyncioEventloop)


def maybe_deferred_to_future(d):
    """C{d} as something a coroutine can await under the installed reactor: an asyncio
    Future under the asyncio reactor, C{d} itself otherwise."""
    if not is_asyncio_reactor_installed():
        return d
    return d.asFuture(_installed()._asyncioEventloop)


def ensure_awaitable(o, _warn=None):
    """
    C{o} as something a coroutine can await: a Deferred through
    L{maybe_deferred_to_future}, another awaitable as it is, any other value as a
    coroutine that returns it.

    @param _warn: the name of what returned C{o}, to warn that returning a Deferred is
        deprecated (Scrapy's private argument).
    """
    if isinstance(o, Deferred):
        if _warn:
            warnings.warn(f"{_warn} returned a Deferred, this is deprecated. Please "
                          f"refactor this function to return a coroutine.",
                          ScrapyDeprecationWarning, stacklevel=2)
        return maybe_deferred_to_future(o)
    if inspect.isawaitable(o):
        return o
    return _value(o)


async def _value(o):
    return o


def deferred_f_from_coro_f(coro_f):
    """A function calling the coroutine function C{coro_f} and returning its Deferred
    (L{deferred_from_coro}): a coroutine function as a callback of a chain."""

    @wraps(coro_f)
    def as_deferred(*args, **kwargs):
        return deferred_from_coro(coro_f(*args, **kwargs))

    return as_deferred


def iter_errback(iterable, errback, *args, **kwargs):
    """
    The values of C{iterable}; an exception raised while it is read goes to
    C{errback(failure, *args, **kwargs)}, and the reading goes on.
    """
    values = iter(iterable)
    while True:
        try:
            yield next(values)
        except StopIteration:
            return
        except Exception:
            errback(Failure(), *args, **kwargs)


async def aiter_errback(aiterable, errback, *args, **kwargs):
    """L{iter_errback} for an asynchronous iterable."""
    values = aiter(aiterable)
    while True:
        try:
            yield await anext(values)
        except StopAsyncIteration:
            return
        except Exception:
            errback(Failure(), *args, **kwargs)


def parallel(iterable, count, callable, *args, **kwargs):  # noqa: A002 (Scrapy's name)
    """
    Call C{callable(value, *args, **kwargs)} for each value of C{iterable}, at most
    C{count} at a time (a call that returns a Deferred runs until it fires).

    @return: a C{DeferredList} of the C{count} workers, which fires once every value has
        been handled.
    """
    from twisted.internet.task import Cooperator
    cooperator = Cooperator()
    work = (callable(value, *args, **kwargs) for value in iterable)
    return DeferredList([cooperator.coiterate(work) for _ in range(count)])


class _AsyncWork:
    """
    The calls of L{parallel_async} as the iterator of Deferreds a C{Cooperator} reads:
    each C{next()} gives a Deferred that fires once the callable has handled the next
    value of the asynchronous iterator. An asynchronous iterator cannot be awaited twice
    at once, so the workers' Deferreds wait in line, and one C{anext()} runs at a time.
    """

    def __init__(self, aiterable, callable_, args, kwargs):
        self._values = aiter(aiterable)
        self._callable = callable_
        self._args = args
        self._kwargs = kwargs
        self._waiting = deque()  # the workers' Deferreds, oldest first
        self._reading = None  # the Deferred of the anext() under way
        self._finished = False

    def __iter__(self):
        return self

    def __next__(self):
        if self._finished:
            raise StopIteration
        d = Deferred()
        self._waiting.append(d)
        if self._reading is None:
            self._read_next()
        return d

    def _read_next(self):
        self._reading = deferred_from_coro(anext(self._values))
        self._reading.addCallbacks(self._cb_value, self._eb_read)

    def _cb_value(self, value):
        self._reading = None
        result = self._callable(value, *self._args, **self._kwargs)
        d = self._waiting.popleft()
        if isinstance(result, Deferred):
            result.chainDeferred(d)
        else:
            d.callback(None)
        if self._waiting:
            self._read_next()

    def _eb_read(self, failure):
        self._reading = None
        failure.trap(StopAsyncIteration)
        self._finished = True
        while self._waiting:
            self._waiting.popleft().callback(None)


def parallel_async(async_iterable, count, callable, *args, **kwargs):  # noqa: A002
    """L{parallel} for an asynchronous iterable. @return: as L{parallel}."""
    from twisted.internet.task import Cooperator
    cooperator = Cooperator()
    work = _AsyncWork(async_iterable, callable, args, kwargs)
    return DeferredList([cooperator.coiterate(work) for _ in range(count)])


# the deprecated ones: they warn, as Scrapy's do

_DEFER_DELAY = 0.1  # Scrapy's: the reactor goes through its readers and writers first


def _deprecated(message):
    warnings.warn(message, ScrapyDeprecationWarning, stacklevel=3)


def _later(d, fire, value):
    from twisted.internet import reactor
    reactor.callLater(_DEFER_DELAY, fire, value)
    return d


def defer_fail(_failure):
    """A Deferred that errbacks with C{_failure} a moment from now (deprecated)."""
    _deprecated("scrapy.utils.defer.defer_fail() is deprecated, use "
                "twisted.internet.defer.fail(), plus an explicit sleep if needed.")
    d = Deferred()
    return _later(d, d.errback, _failure)


def defer_succeed(result):
    """A Deferred that fires with C{result} a moment from now (deprecated)."""
    _deprecated("scrapy.utils.defer.defer_succeed() is deprecated, use "
                "twisted.internet.defer.succeed(), plus an explicit sleep if needed.")
    d = Deferred()
    return _later(d, d.callback, result)


def defer_result(result):
    """C{result} as a Deferred a moment from now: a Deferred as it is, a C{Failure} as
    an errback, another value as a callback (deprecated)."""
    _deprecated("scrapy.utils.defer.defer_result() is deprecated, use "
                "twisted.internet.defer.succeed() and twisted.internet.defer.fail(), plus "
                "an explicit sleep if needed, or explicit reactor.callLater().")
    return _result_later(result)


def _result_later(result):
    if isinstance(result, Deferred):
        return result
    d = Deferred()
    return _later(d, d.errback if isinstance(result, Failure) else d.callback, result)


def mustbe_deferred(f, *args, **kwargs):
    """C{maybeDeferred}, firing a moment from now (deprecated)."""
    _deprecated("scrapy.utils.defer.mustbe_deferred() is deprecated, use "
                "twisted.internet.defer.maybeDeferred(), with an explicit sleep if needed.")
    try:
        result = f(*args, **kwargs)
    except Exception:
        result = Failure()
    return _result_later(result)


def process_chain(callbacks, input, *args, **kwargs):  # noqa: A002 (Scrapy's name)
    """A Deferred of C{input} through each of C{callbacks} in turn (deprecated)."""
    _deprecated("process_chain() is deprecated.")
    d = Deferred()
    for callback in callbacks:
        d.addCallback(callback, *args, **kwargs)
    d.callback(input)
    return d


def process_parallel(callbacks, input, *args, **kwargs):  # noqa: A002 (Scrapy's name)
    """
    A Deferred of the list of each callback's result for C{input} (deprecated).

    @return: a Deferred that errbacks with the first failure among them.
    """
    _deprecated("process_parallel() is deprecated.")
    calls = [succeed(input).addCallback(callback, *args, **kwargs) for callback in callbacks]
    d = DeferredList(calls, fireOnOneErrback=True, consumeErrors=True)
    d.addCallbacks(_results_only, _first_failure)
    return d


def _results_only(pairs):
    return [result for _, result in pairs]


def _first_failure(failure):
    return failure.value.subFailure


def maybeDeferred_coro(f, *args, **kwargs):  # noqa: N802 (Scrapy's name)
    """C{maybeDeferred} that also runs a coroutine C{f} returns (deprecated)."""
    _deprecated("maybeDeferred_coro() is deprecated and will be removed in a future Scrapy "
                "version.")
    try:
        result = f(*args, **kwargs)
    except Exception:
        return fail(Failure())
    if isinstance(result, Deferred):
        return result
    if inspect.isawaitable(result):
        return deferred_from_coro(result)
    if isinstance(result, Failure):
        return fail(result)
    return succeed(result)


logger = logging.getLogger(__name__)


def ignore_result(value, what, unwaited=None):
    """
    C{value} is not waited for (a hook's wrong result, an output that is no request nor
    item): if it is a Deferred, a failure it fires with later is logged, naming C{what}
    (never "Unhandled error in Deferred"), and it is kept in C{unwaited} (an L{Unwaited})
    until it fires; if it is a coroutine, it is closed (never "coroutine was never
    awaited"). Anything else is left alone.
    """
    if isinstance(value, Deferred):
        if unwaited is not None:
            unwaited.add(value, what)
        else:
            value.addErrback(_eb_log_ignored, what)
    elif inspect.iscoroutine(value):
        value.close()


def _eb_log_ignored(failure, what):
    """Log the failure of a Deferred nobody waits for (not its cancel at close)."""
    if failure.check(CancelledError):
        return
    logger.error("%s failed", what, exc_info=(failure.type, failure.value,
                                             failure.getTracebackObject()))


class Unwaited:
    """
    The Deferreds of one crawl that nobody waits for: what a receiver of a signal sent
    without waiting returned, a hook's wrong result. A failure of one is logged as it
    comes (naming what it is); the close waits for those still pending (L{settled}).
    """

    def __init__(self):
        self._pending = set()

    def add(self, d, what):
        """Keep C{d} until it fires; log its failure then."""
        d.addErrback(_eb_log_ignored, what)
        if not d.called:
            self._pending.add(d)
            d.addBoth(self._cb_fired, d)

    def _cb_fired(self, result, d):
        self._pending.discard(d)
        return result

    def settled(self):
        """
        @return: a Deferred firing with None once every Deferred still pending has fired
            (at once if none is). Cancelling it cancels them (quietly: the close gave
            up on them).
        """
        if not self._pending:
            return None
        return DeferredList(list(self._pending), consumeErrors=True).addCallback(_nothing)


def _nothing(_):
    return None


class Waiting:
    """
    A wait for a Deferred that the waiter may give up (the close of a crawl is bounded).

    @ivar done: fires as the watched Deferred does (with its result or its failure), or
        with None when L{give_up} comes first. After that the watched Deferred's result
        is dropped, but a failure other than its cancellation is logged: no error is lost.
    """

    def __init__(self, d, what):
        """@param what: names what is waited for, in a log line (C{"pipeline X"})."""
        self.what = what
        self.done = Deferred()
        self._watched = d
        d.addBoth(self._cb_settled)

    def _cb_settled(self, result):
        if not self.done.called:
            if isinstance(result, Failure):
                self.done.errback(result)
            else:
                self.done.callback(result)
        elif isinstance(result, Failure) and not result.check(CancelledError,
                                                             asyncio.CancelledError):
            _eb_log_ignored(result, f"{self.what} (given up on)")
        return None

    def give_up(self):
        """
        Stop waiting: L{done} fires with None now, then the watched Deferred is cancelled
        (its canceller runs; a Deferred without one errbacks with C{CancelledError}).

        @return: True, or False when it had fired already (nothing done).
        """
        if self.done.called:
            return False
        self.done.callback(None)
        self._watched.cancel()
        return True

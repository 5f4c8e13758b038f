"""
Scrapy's C{scrapy.utils.defer}: the boundary between the user's coroutines and the engine's
Deferreds. L{deferred_from_coro} runs a coroutine as a Deferred (as an asyncio Task under
the asyncio reactor, so that it may await asyncio code; under another reactor, awaiting an
asyncio future is an error that names C{TWISTED_REACTOR}); L{deferred_to_future} and
L{maybe_deferred_to_future} go the other way, for C{async def} code that awaits a
Deferred.

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

from twisted.internet.defer import CancelledError, Deferred, DeferredList, ensureDeferred
from twisted.python.failure import Failure

from tinyscrapy.utils.reactor import (
    _NO_ASYNCIO_LOOP,
    ASYNCIO_REACTOR,
    AsyncioReactorNeeded,
    _installed,
    is_asyncio_reactor_installed,
)


def deferred_from_coro(coro):
    """
    Run a coroutine (a callback's, a hook's, a pull of C{start()}) and wrap it as a
    Deferred: as an asyncio Task under the asyncio reactor, with C{ensureDeferred}
    otherwise.

    @return: a Deferred that fires with the coroutine's result, or errbacks with what it
        raised (L{AsyncioReactorNeeded} when it awaited asyncio code without the asyncio
        reactor). Cancelling it cancels the coroutine.
    """
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

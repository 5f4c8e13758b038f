"""
Scrapy's C{scrapy.utils.defer}: the boundary between the user's coroutines and the engine's
Deferreds. L{deferred_from_coro} runs a coroutine as a Deferred (as an asyncio Task under
the asyncio reactor, so that it may await asyncio code; under another reactor, awaiting an
asyncio future is an error that names C{TWISTED_REACTOR}); L{deferred_to_future} and
L{maybe_deferred_to_future} go the other way, for C{async def} code that awaits a
Deferred.
"""

from twisted.internet.defer import Deferred, ensureDeferred

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
    if failure.check(RuntimeError) and str(failure.value) in _NO_ASYNCIO_LOOP:
        raise AsyncioReactorNeeded(
            f"a coroutine awaited asyncio code ({failure.value}), which needs the asyncio "
            f"reactor: set TWISTED_REACTOR = {ASYNCIO_REACTOR!r}") from failure.value
    return failure


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

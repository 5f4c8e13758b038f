"""
Scrapy's C{scrapy.utils.asyncio}: timing and threads that work under either kind of
reactor. Under the asyncio reactor (or inside a running asyncio loop) each helper uses
asyncio; under another reactor, Twisted's equivalent.

    - L{is_asyncio_available}: whether asyncio code can run here;
    - L{sleep}, L{call_later} (with L{CallLaterResult}), L{create_looping_call} (with
      L{AsyncioLoopingCall}, C{LoopingCall}'s asyncio twin), L{run_in_thread}.
"""

import asyncio
import logging
import time
from collections.abc import Coroutine

from twisted.internet.defer import Deferred

from tinyscrapy.utils.reactor import is_asyncio_reactor_installed, is_reactor_installed

logger = logging.getLogger(__name__)


def is_asyncio_available():
    """
    Whether asyncio code (C{asyncio.sleep}, awaiting an asyncio future) can run here: an
    asyncio loop runs this code, or the installed reactor is the asyncio one.

    @raise RuntimeError: no reactor is installed and no asyncio loop runs.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        return True
    if not is_reactor_installed():
        raise RuntimeError("is_asyncio_available() called without an installed reactor or "
                           "running asyncio loop.")
    return is_asyncio_reactor_installed()


class AsyncioLoopingCall:
    """
    Call C{func(*args, **kwargs)} every C{interval} seconds on the asyncio loop, as
    Twisted's C{LoopingCall} does on the reactor: on a fixed schedule from L{start}, a
    call that would fall while the function still runs being skipped. The function must
    return neither a coroutine nor a Deferred; one that raises stops the loop (logged).

    @ivar interval: the seconds between calls while running, else None.
    """

    def __init__(self, func, *args, **kwargs):
        self._func = func
        self._args = args
        self._kwargs = kwargs
        self._task = None
        self._started = None
        self.interval = None

    @property
    def running(self):
        return self._started is not None

    def start(self, interval, now=True):
        """
        Start calling, every C{interval} seconds, and at once when C{now}.

        @raise RuntimeError: it runs already.
        @raise ValueError: C{interval} is not above 0.
        """
        if self.running:
            raise RuntimeError("AsyncioLoopingCall already running")
        if interval <= 0:
            raise ValueError("Interval must be greater than 0")
        self.interval = interval
        self._started = time.monotonic()
        if now:
            self._call()
        self._task = asyncio.get_event_loop().create_task(self._loop())

    def stop(self):
        """Stop calling (the coming call is cancelled)."""
        self.interval = self._started = None
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _loop(self):
        while self.running:
            await asyncio.sleep(self._until_next())
            self._call()

    def _until_next(self):
        elapsed = time.monotonic() - self._started
        return self.interval - elapsed % self.interval

    def _call(self):
        try:
            result = self._func(*self._args, **self._kwargs)
        except Exception:
            logger.exception("Error calling the AsyncioLoopingCall function")
            self.stop()
            return
        if isinstance(result, (Coroutine, Deferred)):
            self.stop()
            raise TypeError("The AsyncioLoopingCall function must not return a coroutine or "
                            "a Deferred")


def create_looping_call(func, *args, **kwargs):
    """An L{AsyncioLoopingCall} where asyncio is available, else Twisted's
    C{LoopingCall}, of C{func(*args, **kwargs)}; not started."""
    if is_asyncio_available():
        return AsyncioLoopingCall(func, *args, **kwargs)
    from twisted.internet.task import LoopingCall
    return LoopingCall(func, *args, **kwargs)


class CallLaterResult:
    """What L{call_later} returns: C{cancel()} on an asyncio timer or a Twisted delayed
    call, which does nothing once it has been called or cancelled."""

    _timer_handle = None
    _delayed_call = None

    @classmethod
    def from_asyncio(cls, timer_handle):
        result = cls()
        result._timer_handle = timer_handle
        return result

    @classmethod
    def from_twisted(cls, delayed_call):
        result = cls()
        result._delayed_call = delayed_call
        return result

    def cancel(self):
        """Cancel the call, if it is still to come."""
        if self._timer_handle is not None:
            self._timer_handle.cancel()
            self._timer_handle = None
        elif self._delayed_call is not None and self._delayed_call.active():
            self._delayed_call.cancel()
            self._delayed_call = None


def call_later(delay, func, *args):
    """Call C{func(*args)} in C{delay} seconds (asyncio's C{call_later} or the reactor's
    C{callLater}). @return: a L{CallLaterResult}."""
    if is_asyncio_available():
        handle = asyncio.get_event_loop().call_later(delay, func, *args)
        return CallLaterResult.from_asyncio(handle)
    from twisted.internet import reactor
    return CallLaterResult.from_twisted(reactor.callLater(delay, func, *args))


async def sleep(seconds):
    """Wait C{seconds} (C{asyncio.sleep}, or C{deferLater} on the reactor)."""
    if is_asyncio_available():
        await asyncio.sleep(seconds)
        return
    from twisted.internet import reactor
    from twisted.internet.task import deferLater
    await deferLater(reactor, seconds)


async def run_in_thread(func, *args, **kwargs):
    """C{func(*args, **kwargs)} run in a thread (C{asyncio.to_thread}, or the reactor's
    thread pool). @return: (a coroutine of) what it returns, or raises."""
    if is_asyncio_available():
        return await asyncio.to_thread(func, *args, **kwargs)
    from twisted.internet.threads import deferToThread
    return await deferToThread(func, *args, **kwargs)

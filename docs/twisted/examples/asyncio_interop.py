"""The asyncio reactor: Deferred.fromFuture, Deferred.asFuture, ensureDeferred."""
import asyncio

from twisted.internet import asyncioreactor

loop = asyncio.new_event_loop()
asyncioreactor.install(loop)            # before anything imports the reactor
from twisted.internet import reactor  # noqa: E402
from twisted.internet.defer import Deferred, ensureDeferred  # noqa: E402
from twisted.internet.task import deferLater  # noqa: E402


async def twisted_driven():             # driven by ensureDeferred: awaits Deferreds
    print(await deferLater(reactor, 0.01, str, "ensureDeferred: a Deferred awaited"))
    future = loop.create_future()
    loop.call_later(0.01, future.set_result, "ensureDeferred: a Future, via fromFuture")
    print(await Deferred.fromFuture(future))


async def asyncio_driven():             # an asyncio Task: awaits Futures only
    print(await asyncio.sleep(0.01, "asyncio task: asyncio.sleep"))
    d = deferLater(reactor, 0.01, str, "asyncio task: a Deferred, via asFuture")
    print(await d.asFuture(loop))


async def main():
    await twisted_driven()
    await Deferred.fromFuture(asyncio.ensure_future(asyncio_driven()))


def stop(_):
    reactor.stop()


def start():
    ensureDeferred(main()).addBoth(stop)


reactor.callWhenRunning(start)
reactor.run()

"""DeferredList: wait for several Deferreds; how two crawls stop one reactor."""
from twisted.internet import task
from twisted.internet.defer import DeferredList, fail

clock = task.Clock()
crawl_a = task.deferLater(clock, 1, str, "finished")
crawl_b = task.deferLater(clock, 3, str, "closespider_timeout")


def stop_reactor(results):
    print(f"t={clock.seconds():g} every crawl is over: stop the reactor")
    for ok, value in results:
        print("  ", ok, value)


both = DeferredList([crawl_a, crawl_b], consumeErrors=True)
both.addBoth(stop_reactor)
clock.advance(1)
print(f"t={clock.seconds():g} crawl A is done, B still runs")
clock.advance(2)


def first_error(failure):
    print("fireOnOneErrback:", failure.value.subFailure.getErrorMessage())


pending = task.deferLater(clock, 9, str, "never waited for")
early = DeferredList([pending, fail(IOError("disk full"))],
                     fireOnOneErrback=True, consumeErrors=True)
early.addErrback(first_error)
pending.cancel()

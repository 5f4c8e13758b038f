"""One crawl written three ways: inlineCallbacks, plain callbacks, async def."""
from twisted.internet import defer, task

clock = task.Clock()


def open_spider():                        # each returns a Deferred that fires later
    return task.deferLater(clock, 1, str, "opened")


def run_engine():
    return task.deferLater(clock, 2, str, "finished")


@defer.inlineCallbacks
def crawl_inline():
    print("  runs at once, up to the first unfired Deferred")
    yield open_spider()                   # suspended here until it fires
    reason = yield run_engine()           # a failure would be raised right here
    return reason                         # fires the Deferred crawl_inline() returned


def crawl_plain():
    print("  runs at once, and returns the first Deferred")
    d = open_spider()
    d.addCallback(_cb_opened)             # the rest of the function, as a callback
    return d


def _cb_opened(_):
    return run_engine()                   # a Deferred: the chain waits for it


async def crawl_async():
    print("  runs only once ensureDeferred (or await) drives it")
    await open_spider()
    return await run_engine()


def crawl_coroutine():
    return defer.ensureDeferred(crawl_async())


for crawl in (crawl_inline, crawl_plain, crawl_coroutine):
    print(crawl.__name__)
    results = []
    crawl().addCallback(results.append)
    clock.advance(1)
    print(f"  1 s later: {results}")
    clock.advance(2)
    print(f"  3 s later: {results}")

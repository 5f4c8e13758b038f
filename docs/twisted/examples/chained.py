"""A callback that returns a Deferred pauses the outer chain until it fires."""
from twisted.internet import task
from twisted.internet.defer import Deferred

clock = task.Clock()


def scrape(response):
    print(f"t={clock.seconds():g} scraping {response}; the pipeline is slow")
    pipeline = Deferred()
    clock.callLater(2, pipeline.callback, "item stored")
    return pipeline                    # the outer chain waits for this one


def done(result):
    print(f"t={clock.seconds():g} request done with {result!r}")


download = Deferred()
download.addCallback(scrape)
download.addCallback(done)
clock.callLater(1, download.callback, "<html>")
for _ in range(3):
    clock.advance(1)
    print(f"t={clock.seconds():g} outer chain paused: {download.paused == 1}")

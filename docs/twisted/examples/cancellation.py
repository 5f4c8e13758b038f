"""A canceller versus DelayedCall.cancel; CancelledError; a timeout as callLater(t, cancel)."""
from twisted.internet import task
from twisted.internet.defer import CancelledError, Deferred

clock = task.Clock()


def abort(d):                            # the canceller: stop the work behind d
    print(f"t={clock.seconds():g} canceller: abort the connection")


def report(failure):
    failure.trap(CancelledError)
    print(f"t={clock.seconds():g} errback: CancelledError")


transfer = Deferred(abort)              # a download that never answers
transfer.addErrback(report)
timer = clock.callLater(5, transfer.cancel)   # DOWNLOAD_TIMEOUT=5
clock.advance(5)
print("timer active after it fired:", timer.active())
fast = Deferred(abort)                  # one that answers in time
fast.addCallback(print)
timer = clock.callLater(5, fast.cancel)
clock.advance(1)
fast.callback("response")
timer.cancel()                          # DelayedCall.cancel: the timeout will not run
clock.advance(10)
print("cancelling a fired Deferred does nothing:", fast.cancel())

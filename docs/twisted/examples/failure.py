"""A Failure: an exception with its traceback, that can travel down an errback chain."""
from twisted.internet.defer import Deferred, fail
from twisted.python.failure import Failure

try:
    pages = 10 // 0
except ZeroDivisionError:
    f = Failure()                      # captures the exception being handled
print(f.type.__name__, "|", f.getErrorMessage())
print("check:", f.check(KeyError, ArithmeticError).__name__)
print("check other:", f.check(KeyError))


def only_key_errors(failure):
    failure.trap(KeyError)             # re-raises anything else: the chain goes on failing
    return "handled"


def last(failure):
    print("last errback:", failure.type.__name__)
    return None                         # handled: no "Unhandled error in Deferred"


d = fail(f)                            # a Deferred that has already failed
d.addErrback(only_key_errors)
d.addErrback(last)
print("final result:", d.result)
d2 = Deferred()
d2.addErrback(last)
d2.errback(ValueError("bad page"))    # errback() wraps a plain exception in a Failure

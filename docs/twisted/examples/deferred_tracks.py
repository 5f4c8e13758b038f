"""A Deferred's two tracks; addCallbacks versus addCallback().addErrback()."""
from twisted.internet.defer import Deferred


def parse(result):
    raise ValueError(f"the callback raised on {result!r}")


def errback(label):
    def caught(failure):
        print(f"  {label} errback got: {failure.value}")
        return "recovered"
    return caught


print("d.addCallbacks(parse, eb1); d.addErrback(eb2)")
d = Deferred()
d.addCallbacks(parse, errback("eb1 (same step: not called)"))
d.addErrback(errback("eb2 (next step)"))
d.callback("page")
print("d.addCallback(parse).addErrback(eb1)")
d = Deferred()
d.addCallback(parse).addErrback(errback("eb1 (next step)"))
d.callback("page")
print("a Deferred that has already fired runs a new callback at once:")
d = Deferred()
d.callback("early")
d.addCallback(print)
print("and its result is now:", d.result)

"""succeed, fail, maybeDeferred and deferLater."""
from twisted.internet import task
from twisted.internet.defer import fail, maybeDeferred, succeed


def report(result, label):
    print(f"{label}: {result!r}")


def report_failure(failure, label):
    print(f"{label}: failed with {failure.type.__name__}")


def open_sync(spider):
    return None                         # a plain function...


def open_broken(spider):
    raise RuntimeError("cannot open")   # ...or one that raises


succeed("page").addCallback(report, "succeed")
fail(ValueError()).addErrback(report_failure, "fail")
maybeDeferred(open_sync, "s").addCallback(report, "maybeDeferred(plain)")
maybeDeferred(open_broken, "s").addErrback(report_failure, "maybeDeferred(raises)")
maybeDeferred(succeed, 42).addCallback(report, "maybeDeferred(Deferred)")
clock = task.Clock()
d = task.deferLater(clock, 1.5, clock.seconds)
d.addCallback(report, "deferLater ran at")
print("deferLater fired yet?", d.called)
clock.advance(1.5)

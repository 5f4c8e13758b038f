"""What runs first: callLater(0), callFromThread, a fired Deferred and ready I/O, on the
real reactor and on task.Clock."""
import os

from twisted.internet import reactor, task
from twisted.internet.defer import Deferred


class Pipe:
    """The read end of a pipe, with bytes already waiting in it: I/O ready before anything."""

    def __init__(self, log):
        self.read_fd, write_fd = os.pipe()
        os.write(write_fd, b"x")
        os.close(write_fd)
        self.log = log

    def fileno(self):
        return self.read_fd

    def doRead(self):
        os.read(self.read_fd, 1)
        self.log.append("I/O: the socket's bytes are read")
        reactor.removeReader(self)
        os.close(self.read_fd)

    def connectionLost(self, reason):
        pass

    def logPrefix(self):
        return "pipe"


def schedule(clock, log, from_thread=None, io=None):
    """The same calls made at the same moment, on C{clock}."""
    if io is not None:
        reactor.addReader(io)

    def second():
        log.append("callLater(0), chained: the second")

    def first():
        log.append("callLater(0): the first, which schedules the second")
        clock.callLater(0, second)

    clock.callLater(0, first)
    if from_thread is not None:
        from_thread(log.append, "callFromThread")
    d = Deferred()
    d.addCallback(log.append)
    d.callback("a fired Deferred's callback: at once, inside callback()")
    log.append("(the code that scheduled them returns)")


def on_the_reactor():
    log = []
    schedule(reactor, log, reactor.callFromThread, Pipe(log))
    reactor.callLater(0.05, stop, log)


def stop(log):
    print("the real reactor:")
    for n, line in enumerate(log, 1):
        print(f"  {n}. {line}")
    reactor.stop()


clock = task.Clock()
log = []
schedule(clock, log)
clock.advance(0)
print("task.Clock, after one advance(0) (no I/O, no callFromThread):")
for n, line in enumerate(log, 1):
    print(f"  {n}. {line}")
reactor.callWhenRunning(on_the_reactor)
reactor.run()

"""A worker process over AMP: spawnProcess, a ProcessProtocol, a command and its responder,
a lease as a Deferred, and what becomes of a lease when the child dies."""

import os
import sys

from twisted.internet import defer, error, protocol, reactor
from twisted.protocols import amp

TO_CHILD, FROM_CHILD = 3, 4  # the child's descriptors for AMP: stdin/stdout stay free


class Fetch(amp.Command):
    """Parent to child: work on one URL; the answer is its page's length."""

    arguments = [(b"url", amp.Unicode())]
    response = [(b"length", amp.Integer())]


class Close(amp.Command):
    """Parent to child: finish and exit (no answer: the parent waits for its end)."""

    requiresAnswer = False


class Child(amp.AMP):
    """The child's end: a responder per command."""

    @Fetch.responder
    def fetch(self, url):
        if url.endswith("/crash"):
            os._exit(9)  # dies mid-lease, no clean-up (a kill -9 would end it by a signal)
        return {"length": len(url) * 100}

    @Close.responder
    def close(self):
        reactor.stop()
        return {}

    def connectionLost(self, reason):
        if reactor.running:  # the parent's end closed: nothing left to do
            reactor.stop()


def child_main():
    from twisted.internet.stdio import StandardIO
    StandardIO(Child(), stdin=TO_CHILD, stdout=FROM_CHILD)
    reactor.run()


class Pipe:
    """AMP's transport in the parent: what it writes goes to the child's descriptor 3."""

    def __init__(self, transport):
        self.transport = transport

    def write(self, data):
        self.transport.writeToChild(TO_CHILD, data)

    def writeSequence(self, chunks):
        for data in chunks:
            self.write(data)

    def loseConnection(self):
        self.transport.loseConnection()

    def getPeer(self):
        return "child pipe"

    getHost = getPeer


class WorkerProcess(protocol.ProcessProtocol):
    """The parent's end of one child: AMP over the pipes, and the child's end."""

    def __init__(self):
        self.amp = amp.AMP()
        self.ended = defer.Deferred()

    def connectionMade(self):
        self.amp.makeConnection(Pipe(self.transport))

    def childDataReceived(self, fd, data):
        if fd == FROM_CHILD:
            self.amp.dataReceived(data)

    def processEnded(self, reason):
        self.amp.connectionLost(reason)  # every call still waiting errbacks now
        self.ended.callback(reason.value.exitCode)


def spawn():
    worker = WorkerProcess()
    reactor.spawnProcess(worker, sys.executable, [sys.executable, __file__, "child"],
                         env=os.environ,
                         childFDs={0: "w", 1: 1, 2: 2, TO_CHILD: "w", FROM_CHILD: "r"})
    return worker


def lease(worker, url):
    """A lease is the Deferred of a command: it fires with the child's answer, or
    errbacks when the child dies holding it (then the URL goes back to the frontier)."""
    d = worker.amp.callRemote(Fetch, url=url)
    d.addCallbacks(done, lost, callbackArgs=(url,), errbackArgs=(url,))
    return d


def done(answer, url):
    print(f"done     {url} -> {answer['length']} bytes")


def lost(failure, url):
    failure.trap(error.ConnectionDone, error.ConnectionLost, error.ProcessTerminated)
    print(f"requeued {url} ({failure.type.__name__}: its worker died)")
    frontier.append(url)


frontier = []


@defer.inlineCallbacks
def main():
    first = spawn()
    yield defer.gatherResults([lease(first, "http://a/1"), lease(first, "http://a/2")])
    yield lease(first, "http://a/crash")
    status = yield first.ended
    print(f"worker ended with exit status {status}; frontier now {frontier}")
    second = spawn()  # a new worker takes what the dead one held
    yield lease(second, frontier.pop().replace("/crash", "/3"))
    second.amp.callRemote(Close)
    status = yield second.ended
    print(f"worker ended with exit status {status}")


def stop(result):
    reactor.stop()
    return result


if __name__ == "__main__":
    if sys.argv[1:] == ["child"]:
        child_main()
    else:
        main().addBoth(stop)
        reactor.run()

"""The reactor thread and the others: callFromThread, blockingCallFromThread, deferToThread."""
import threading

from twisted.internet import reactor, task, threads


def in_reactor(what):
    print(f"{what}: on the reactor thread? {threading.current_thread().name == 'MainThread'}")
    return "answer"


def from_another_thread():           # what the shell's prompt thread does
    reactor.callFromThread(in_reactor, "callFromThread")   # fire and forget
    d = threads.blockingCallFromThread(reactor, task.deferLater, reactor, 0.01, str, "late")
    print("blockingCallFromThread waited for the Deferred:", d)
    return "slow work done"


def blocking_lookup():               # what getaddrinfo is: it blocks its thread
    return threading.current_thread().name != "MainThread"


def main():
    d = threads.deferToThread(from_another_thread)
    d.addCallback(print)
    d.addCallback(_cb_then_lookup)


def _cb_then_lookup(_):
    d = threads.deferToThread(blocking_lookup)
    d.addCallback(_cb_report)


def _cb_report(off_thread):
    print("deferToThread ran in the thread pool:", off_thread)
    reactor.stop()


reactor.callWhenRunning(main)
reactor.run()

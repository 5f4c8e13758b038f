"""
The worker processes of C{--workers N}, as the parent runs them: how one is started
(L{WorkerProcess}, with C{reactor.spawnProcess}; L{spider_locator}, how it finds the
spider; L{_reap_children}, so that its end is seen), the parent's end of its AMP pipe
(L{ParentLink}, over L{_ChildTransport}), a worker number through the processes that run
it, a new one after a death (L{Worker}), and a worker's trace as a lane of the parent's
C{--trace} page (L{WorkerLane}).

What is leased, what a report means and whether a dead worker is started again are
decided by the pool, L{tinyscrapy.frontier.service.WorkerPool}: the objects here call it
(C{config}, C{started}, C{report}, C{finished}, C{died}, C{end_leases}, C{gave_up}) and
this module imports nothing of it. The process at the other end of the pipe runs
L{tinyscrapy.frontier.worker}; the commands and their bytes are
L{tinyscrapy.frontier.workerwire}.

The Deferreds:

    - L{Worker.ended} fires with the finish reason once no process of that number will
      run again (L{tinyscrapy.crawler.CrawlerProcess} waits for each);
      L{Worker.ended_here} returns a new Deferred fired with the same reason. Neither
      errbacks.
    - L{Start}'s answer fires once the worker's crawl is open, with its pid (the worker
      can then take leases); it errbacks with the worker's
      L{tinyscrapy.frontier.workerwire.StartFailed}, or with the pipe's end: then the
      pipe is closed and the process ends as one that could not start.
    - L{WorkerProcess.call} sends L{Close} or L{Leases} and returns the answer's
      Deferred (None for L{Leases}, which has none): it fires with C{{}}, or with None
      instead of errbacking when the process has gone (a death is
      L{WorkerProcess.processEnded}'s to handle).
    - L{ParentLink.report} hands back the pool's Deferred for a L{Report}, firing with
      C{{}} once it is handled; it never errbacks (a failure is counted and logged), and
      the process's end is told to its worker only after every such Deferred has fired.
"""

import logging
import os
import sys
from dataclasses import dataclass

from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.protocol import ProcessProtocol
from twisted.protocols import amp
from twisted.python.failure import Failure

from tinyscrapy.exceptions import UsageError
from tinyscrapy.frontier.workerwire import (
    AMP_IN,
    AMP_OUT,
    Close,
    Finished,
    Leases,
    Report,
    Start,
    dumps,
    importable_path,
    loads,
)

logger = logging.getLogger("tinyscrapy.frontier.service")  # the parent's records, one name

WORKER_ENTRY = "from tinyscrapy.frontier.worker import main; main()"


def spider_locator(spidercls):
    """
    How a worker finds C{spidercls}: C{["class", "module.Name"]} when it can be imported
    by its path, C{["file", path, qualname]} for the spider of a file (C{runspider}).

    @raise UsageError: a class defined in the script that runs the crawl (C{__main__}),
        or made on the fly: a worker process cannot make it again.
    """
    path = importable_path(spidercls)
    if path is not None:
        return ["class", path]
    module = sys.modules.get(spidercls.__module__)
    filename = getattr(module, "__file__", None)
    if spidercls.__module__ != "__main__" and filename and "<" not in spidercls.__qualname__:
        return ["file", os.path.abspath(filename), spidercls.__qualname__]
    raise UsageError(f"--workers: the spider {spidercls.__qualname__} cannot be found by a "
                     f"worker process: define it in a module (or a file given to "
                     f"runspider), not in the script that starts the crawl")


class Worker:
    """
    One worker number of the pool, through the processes that run it (a new one after a
    death).

    @ivar index: the number, from 0.
    @ivar share: its engine's part of C{CONCURRENT_REQUESTS}.
    @ivar window: the most leases it holds at once (twice its share).
    @ivar leased: the leases it holds now.
    @ivar process: its L{WorkerProcess} now, or None.
    @ivar ended: a Deferred fired with the finish reason when its last process ended.
    @ivar gone: True once no process of it will run again.
    """

    def __init__(self, pool, index, share):
        self.pool = pool
        self.index = index
        self.share = share
        self.window = 2 * share
        self.leased = 0
        self.process = None
        self.ended = Deferred()
        self.gone = False
        self.reason = None
        self.restarts = 0
        self._closing = None
        self._outbox = []
        self._seen_out = []
        self._flush_call = None

    def room(self):
        """How many more leases it takes now (0 while starting or closing)."""
        process = self.process
        if process is None or not process.ready or self._closing is not None:
            return 0
        return self.window - self.leased

    def spawn(self):
        """Start a process for this worker number."""
        process = self.process = WorkerProcess(self)
        process.spawn(self.pool.reactor, self.pool.crawler.settings)

    def lease(self, lease_id, fields, spaced=False):
        """Send C{fields} (a request) as lease C{lease_id}, with the others of this turn;
        C{spaced}: its slot is spaced here (a delay, AutoThrottle), so the worker must
        report its send and its latency, whatever its own slot's delay."""
        self.leased += 1
        self._outbox.append([lease_id, fields, 1] if spaced else [lease_id, fields])
        if self._flush_call is None:
            self._flush_call = self.pool.reactor.callLater(0, self._flush)

    def tell_seen(self, fingerprint):
        """Tell its process, with the leases of this turn, that C{fingerprint} is in the
        frontier now (another worker found it)."""
        self._seen_out.append(fingerprint)
        if self._flush_call is None:
            self._flush_call = self.pool.reactor.callLater(0, self._flush)

    def _flush(self):
        self._flush_call = None
        leases, self._outbox = self._outbox, []
        seen, self._seen_out = self._seen_out, []
        process = self.process
        if process is not None and process.ready and (leases or seen):
            process.call(Leases, batch=dumps({"leases": leases, "seen": seen}))

    def close(self, reason):
        """Tell its process to close (once), or start none."""
        if self._closing is not None:
            return
        self._closing = reason
        process = self.process
        if process is None:
            if not self.gone:
                self.give_up(reason)
        elif process.ready:
            process.call(Close, reason=reason)
        # a process still starting is told once it has opened (WorkerProcess._cb_started)

    def closing(self):
        """The reason it was told to close with, or None."""
        return self._closing

    def ended_here(self):
        """@return: a new Deferred firing once C{ended} has."""
        d = Deferred()
        if self.gone:
            d.callback(self.reason)
        else:
            self.ended.addBoth(_pass_on, d)
        return d

    def process_ended(self, process):
        """Its process ended: finished (reported), or died."""
        if process is not self.process:
            return
        self.process = None
        if process.reason is not None:
            self.pool.end_leases(self, "returned")
            self.give_up(process.reason)
        else:
            self.pool.died(self, process)

    def give_up(self, reason):
        """No process of this number runs again: C{ended} fires with C{reason}."""
        if self.gone:
            return
        self.gone = True
        self.reason = reason
        self.pool.gave_up(self)
        self.ended.callback(reason)


def _pass_on(result, d):
    d.callback(result)
    return result


class WorkerProcess(ProcessProtocol):
    """
    One worker process: spawned with C{reactor.spawnProcess}, its AMP on descriptors 3
    and 4 (L{ParentLink}), its stdout and stderr the parent's own.

    @ivar ready: True once its crawl is open (its L{Start} answered).
    @ivar reason: the finish reason it reported (L{Finished}), or None.
    @ivar ended_how: how the process ended, for the log.
    """

    def __init__(self, worker):
        self.worker = worker
        self.link = ParentLink(self)
        self.ready = False
        self.reason = None
        self.pid = None
        self.start_error = None
        self.ended_how = None
        self.stopped = False  # stopped by the pool at the close (WorkerPool.stop_overdue)
        self.reports = set()

    def spawn(self, reactor, settings):
        from tinyscrapy.utils.reactor import reactor_path
        loop = settings.get("ASYNCIO_EVENT_LOOP") or ""
        args = [sys.executable, "-c", WORKER_ENTRY, reactor_path(reactor), loop]
        reactor.spawnProcess(self, sys.executable, args, env=os.environ, path=os.getcwd(),
                             childFDs={0: "w", 1: 1, 2: 2, AMP_IN: "w", AMP_OUT: "r"})

    def connectionMade(self):
        self.pid = self.transport.pid
        self.transport.closeChildFD(0)  # its stdin: nothing to read there
        self.link.makeConnection(_ChildTransport(self.transport))
        try:
            config = dumps(self.worker.pool.config(self.worker))
        except UsageError as e:
            self.start_error = str(e)
            self.transport.loseConnection()
            return
        d = self.link.callRemote(Start, config=config)
        d.addCallbacks(self._cb_started, self._eb_start_failed)

    def _cb_started(self, answer):
        self.ready = True
        logger.info("worker %d started (pid %d)", self.worker.index + 1, answer["pid"])
        closing = self.worker.closing()
        if closing is not None:
            self.call(Close, reason=closing)
        self.worker.pool.started(self.worker)

    def _eb_start_failed(self, failure):
        self.start_error = failure.getErrorMessage()
        if self.transport is not None:
            self.transport.loseConnection()  # the worker sees its pipe close and exits

    def call(self, command, **arguments):
        """Send C{command}; a failure (the process has gone) is left to L{processEnded}.
        @return: the answer's Deferred, or None for a command without one (L{Leases})."""
        d = self.link.callRemote(command, **arguments)
        if d is not None:
            d.addErrback(_ignore)
        return d

    def childDataReceived(self, childFD, data):
        if childFD == AMP_OUT:
            self.link.dataReceived(data)

    def reporting(self, d):
        """C{d}, a L{Report} still being handled (its items wait for the feeds), is
        waited for before this process's end is (L{processEnded}). @return: C{d}."""
        self.reports.add(d)
        d.addBoth(self._cb_reported, d)
        return d

    def _cb_reported(self, result, d):
        self.reports.discard(d)
        return result

    def processEnded(self, reason):
        """The process is gone: once the reports it sent are handled (what they
        acknowledge is not lost), its worker knows (L{Worker.process_ended})."""
        value = reason.value
        code, signum = getattr(value, "exitCode", None), getattr(value, "signal", None)
        self.ended_how = f"signal {signum}" if signum else f"exit status {code}"
        self.link.connectionLost(reason)
        if self.reports:
            d = DeferredList(list(self.reports))
            d.addCallback(self._cb_reports_handled)
        else:
            self.worker.process_ended(self)

    def _cb_reports_handled(self, _):
        self.worker.process_ended(self)


def _ignore(_failure):
    return None


class ParentLink(amp.AMP):
    """The parent's end of one worker's pipe: its L{Report}s and its L{Finished}."""

    def __init__(self, process):
        super().__init__()
        self.process = process

    @Report.responder
    def report(self, batch):
        """A L{Report}, handled by the pool (L{tinyscrapy.frontier.service.WorkerPool.report});
        what fails in it is counted (C{workers/report_errors}), logged, and the crawl goes on
        (a L{Report} has no answer to carry the error, and AMP would drop the connection
        over one nobody handled)."""
        worker = self.process.worker
        try:
            d = worker.pool.report(worker, loads(batch))
        except Exception:
            return self._eb_report(Failure(), worker)
        d.addErrback(self._eb_report, worker)
        return d if d.called else self.process.reporting(d)

    def _eb_report(self, failure, worker):
        worker.pool.stats.inc_value("workers/report_errors")
        logger.error("worker %d: a report could not be handled", worker.index + 1,
                     exc_info=(failure.type, failure.value, failure.getTracebackObject()))
        return {}

    @Finished.responder
    def finished(self, reason, batch):
        self.process.reason = reason
        worker = self.process.worker
        worker.pool.finished(worker, reason, loads(batch))
        return {}


class _PipeAddress:
    """The address of a worker's pipe (AMP asks its transport for one)."""

    def __repr__(self):
        return "<worker pipe>"


class _ChildTransport:
    """AMP's transport over a worker's pipes: what it writes goes to descriptor 3."""

    def __init__(self, transport):
        self._transport = transport

    def write(self, data):
        self._transport.writeToChild(AMP_IN, data)

    def writeSequence(self, chunks):
        for data in chunks:
            self._transport.writeToChild(AMP_IN, data)

    def loseConnection(self):
        self._transport.loseConnection()

    def getPeer(self):
        return _PipeAddress()

    def getHost(self):
        return _PipeAddress()


def _reap_children(reactor):
    """
    Make sure the workers that exit are reaped, so that C{processEnded} comes: Twisted
    does it from its own C{SIGCHLD} handler, which a reactor run with
    C{installSignalHandlers=False} (as L{tinyscrapy.crawler.CrawlerProcess} runs it, to
    handle Ctrl-C itself) never installs. Then this handler is installed in its place,
    and it hands the reaping (C{twisted.internet.process.reapAllProcesses}) to the
    reactor's thread, as Twisted's documentation says to.
    """
    import signal
    if not hasattr(signal, "SIGCHLD") or signal.getsignal(signal.SIGCHLD) not in (
            signal.SIG_DFL, None):
        return

    def child_exited(signum, frame):
        from twisted.internet.process import reapAllProcesses
        reactor.callFromThread(reapAllProcesses)

    signal.signal(signal.SIGCHLD, child_exited)


class WorkerLane:
    """A worker's trace as the parent's page draws it (the attributes
    L{tinyscrapy.trace.timeline} reads of a L{tinyscrapy.trace.Trace})."""

    def __init__(self, crawler, worker, data):
        from tinyscrapy.settings import Settings
        from tinyscrapy.statscollectors import StatsCollector
        self.events = data["events"]
        self.urls = data["urls"]
        self.turns = data["turns"]
        self.not_recorded = data["not_recorded"]
        self.max_events = data["max_events"]
        self.opened_at = data["opened_at"]
        self.reason = data["reason"] or "-"
        self._closed_at = data["closed_at"]
        self.name = f"{crawler.spider.name}, worker {worker.index + 1}"
        self.process = f"worker {worker.index + 1}"
        stats = StatsCollector()
        stats.set_stats(data.get("stats") or {})
        self.crawler = _LaneCrawler(stats, Settings({"CONCURRENT_REQUESTS": worker.share}),
                                    crawler.slots)

    @property
    def duration(self):
        if self._closed_at is not None:
            return self._closed_at
        return self.events[-1][1] if self.events else 0.0


@dataclass
class _LaneCrawler:
    stats: object
    settings: object
    slots: object

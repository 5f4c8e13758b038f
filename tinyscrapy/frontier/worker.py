"""
A worker process of C{--workers N}: the ordinary engine, with a scheduler that asks the
parent (L{tinyscrapy.frontier.service} and L{tinyscrapy.frontier.processes} are the
parent's side).

The parent starts it with C{reactor.spawnProcess} (L{main} is what runs) and talks to it
over AMP on its file descriptors 3 (parent to worker) and 4 (worker to parent); its
stdout and stderr are the parent's own. Its L{WorkerLink} answers the parent's commands
(L{tinyscrapy.frontier.workerwire}): L{Start} builds the crawler from the parent's
settings and spider class and opens the crawl; L{Leases} hands requests to the engine's
L{WorkerScheduler}; L{Close} closes the crawl. What the worker does goes back in one
L{Report} per reactor turn, a dict of lists of records:

    C{queued}    C{[fingerprint, request fields]}: a new request (L{WorkerScheduler})
    C{start}     C{[pulled, done]}: how many start requests the first worker pulled
    C{sent}      lease ids whose request went out on the wire (slots the crawl spaces)
    C{stamps}    slot names of sends the parent did not lease (a robots.txt fetch)
    C{released}  C{[lease id, status or None]}: the transfer ended (its slot place free);
                 on a slot the crawl spaces, C{[lease id, status, latency, body size]}
                 once sent (what the parent's AutoThrottle reads)
    C{done}      lease ids acknowledged (the callback ran, its output is reported)
    C{returned}  lease ids given back, never started (the crawl closed first)
    C{floors}    C{[slot, delay]}: a robots.txt C{Crawl-delay} raised a slot's delay
    C{items}     items, as plain data (after this worker's pipelines)
    C{signals}   signals the parent's extensions listen to, with what they need
    C{stats}, C{ledger}   what changed in the stats and the request ledger (every half
                 second, and in L{Finished})

Callbacks, spider and downloader middlewares and pipelines run here, one instance each;
extensions run in the parent only (but L{tinyscrapy.extensions.logcount.LogCount}, which
counts this process's log records, and the trace recorder). A parent that goes away (its
end of the pipe closes, or it was killed: the kernel is asked to kill this process with
it, on Linux) stops the worker at once: nothing it could still do would reach the crawl.
"""

import logging
import os
import signal
import sys
from collections import deque
from dataclasses import dataclass

from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import LoopingCall
from twisted.protocols import amp

from tinyscrapy import signals
from tinyscrapy.crawler import Crawler
from tinyscrapy.dupefilters import FingerprintSet
from tinyscrapy.exceptions import UnserializableRequest
from tinyscrapy.frontier import disconnect_spider_receivers
from tinyscrapy.frontier.codec import request_from_fields, request_to_fields
from tinyscrapy.frontier.plaindata import NotPlain, plain
from tinyscrapy.frontier.workerwire import (
    AMP_IN,
    AMP_OUT,
    Close,
    Finished,
    Leases,
    Report,
    Start,
    StartFailed,
    dumps,
    loads,
    loads_config,
    settings_from_portable,
)
from tinyscrapy.http.request import Request
from tinyscrapy.ledger import RequestLedger
from tinyscrapy.statscollectors import StatsCollector, crawl_statistics
from tinyscrapy.trace import Trace
from tinyscrapy.utils.gc import tune_for_crawl
from tinyscrapy.utils.log import log_components
from tinyscrapy.utils.request import as_int

logger = logging.getLogger(__name__)

STATS_INTERVAL = 0.5  # seconds between two reports of the stats
WORKER_PRIORITY = 50  # the settings a worker must have: above the command line's (40)


def main(argv=None):
    """
    The worker process: C{python -c "from tinyscrapy.frontier.worker import main; main()"
    REACTOR [EVENT_LOOP]}. Runs the reactor until the crawl has finished (exit 0) or the
    parent has gone (exit 1).
    """
    argv = sys.argv[1:] if argv is None else argv
    # Ctrl-C, a terminal's hangup and a stop sent to the whole process group (systemd,
    # timeout, kill -TERM -PGID) are the parent's to handle: it sends Close, and its
    # death ends this process too (PR_SET_PDEATHSIG, and the pipe's end of file)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    _die_with_parent()
    from tinyscrapy.utils.reactor import install_reactor
    if argv and argv[0]:
        install_reactor(argv[0], argv[1] if len(argv) > 1 and argv[1] else None)
    from twisted.internet import reactor
    from twisted.internet.stdio import StandardIO
    link = WorkerLink(reactor)
    StandardIO(link, stdin=AMP_IN, stdout=AMP_OUT, reactor=reactor)
    reactor.run(installSignalHandlers=False)
    sys.exit(link.status)


def _die_with_parent():
    """Ask Linux to kill this process when its parent dies (C{PR_SET_PDEATHSIG}), a
    guard beside the pipe's end-of-file, which a worker blocked in a long callback would
    notice only once it returns. Elsewhere, the pipe alone."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the request was made
        os._exit(1)


class WorkerLink(amp.AMP):
    """
    The worker's end of the pipe: the parent's commands, and the outbox of what goes back.

    @ivar crawler: the crawler, once L{start} made it.
    @ivar scheduler: the engine's L{WorkerScheduler} once open (None with a shared
        frontier, C{--scheduler redis://}).
    @ivar slot_reports: the slots' L{_SlotReports} once open (None with a shared
        frontier).
    @ivar index: this worker's number, from 0.
    @ivar status: the exit status: 0 once the crawl finished and was reported.
    @ivar closing: the reason of the parent's L{Close}, or None.
    """

    def __init__(self, reactor):
        super().__init__()
        self.reactor = reactor
        self.crawler = None
        self.scheduler = None
        self.slot_reports = None
        self.index = None
        self.status = 1
        self.closing = None
        self.shared = False  # True with a shared frontier (--scheduler redis://)
        self.start_role = "all"  # "first": pull the start requests; "none": do not
        self.start_skip = 0
        self.start_pulled = 0
        self.start_done = False
        self._outbox = {}
        self._flush_call = None
        self._stats_task = None
        self._started = None  # the Start answer, until the engine opened
        self._finishing = False
        self._reported_start = None

    # the parent's commands

    @Start.responder
    def start(self, config):
        """Build the crawler from the parent's configuration and open the crawl.
        @return: a Deferred firing once the engine opened."""
        try:
            crawler, kwargs = self._make_crawler(loads_config(config))
        except Exception as e:
            logger.exception("worker could not start")
            raise StartFailed(f"{type(e).__name__}: {e}") from None
        self._started = started = Deferred()
        d = crawler.crawl(**kwargs)
        d.addBoth(self._cb_crawl_ended)
        if self.closing is not None:  # closed (Ctrl-C) before it started
            crawler.stop(self.closing)
        return started

    def _make_crawler(self, config):
        """The worker's L{tinyscrapy.crawler.Crawler}, its settings the parent's with
        this worker's own on top (L{worker_settings}). @return: C{(crawler, kwargs)}."""
        from tinyscrapy.settings import Settings
        from tinyscrapy.utils.log import configure_logging
        self.index = config["index"]
        for path in reversed(config["sys_path"]):
            if path not in sys.path:
                sys.path.insert(0, path)
        if config["as_scrapy"]:
            from tinyscrapy.scrapyfinder import install_as_scrapy
            install_as_scrapy()
        settings = settings_from_portable(config["settings"], Settings())
        worker_settings(settings, config)
        configure_logging(settings)
        self.start_role, self.start_skip = config["start"]
        self.shared = config["shared"]
        spidercls = spider_class(config["spider"])
        crawler = self.crawler = WorkerCrawler(spidercls, settings)
        crawler.worker = self
        crawler.ledger = WorkerLedger(crawler.stats, self)
        bus = crawler.signals
        bus.connect(self._engine_started, signals.engine_started)
        bus.connect(self._item_scraped, signals.item_scraped)
        for name in config["relay"]:
            bus.connect(getattr(self, "_relay_" + name), getattr(signals, name))
        return crawler, config["kwargs"]

    def _engine_started(self, **_):
        """The crawl is open: install the slots' observer, set the garbage collector for
        a crawl as L{tinyscrapy.crawler.CrawlerProcess.start} does in one process (this
        process is the worker's own; L{tune_for_crawl}), answer L{Start}, report the stats
        every half second."""
        tune_for_crawl()  # what exists now lives as long as the process
        slots = self.crawler.slots
        if self.scheduler is not None and slots is not None:
            slots.observer = self.slot_reports = _SlotReports(self)
        self._stats_task = LoopingCall(self._report_stats)
        self._stats_task.clock = self.reactor
        self._stats_task.start(STATS_INTERVAL, now=False)
        started, self._started = self._started, None
        if started is not None:
            started.callback({"pid": os.getpid()})

    @Leases.responder
    def leases(self, batch):
        """Requests to fetch: decoded, and handed to the scheduler (the engine woken);
        and the fingerprints the other workers added to the frontier, added to this
        worker's C{seen}."""
        spider = self.crawler.spider
        batch = loads(batch)
        given = []
        if self.scheduler is not None:
            self.scheduler.add_seen(batch["seen"])
        reports = self.slot_reports
        for lease, fields, *spaced in batch["leases"]:
            try:
                request = request_from_fields(fields, spider)
            except ValueError as e:  # the parent's own spider: not expected
                logger.error("cannot load a request from the parent (%s): skipped", e)
                self.crawler.ledger.close(None, "failed", "Unloadable")
                self.add("done", lease)
                continue
            given.append((lease, request))
            if spaced and reports is not None:
                reports.spaced_by_parent(request)
        if self.scheduler is not None:
            self.scheduler.add_leases(given)
        else:  # a shared frontier: into it, as this worker's own
            for lease, request in given:
                self.crawler.engine.crawl(request)
                self.add("done", lease)
        return {}

    @Close.responder
    def close(self, reason):
        """Close the crawl gracefully with C{reason} (the parent's)."""
        self.closing = reason
        if self.scheduler is not None:
            self.scheduler.over = True
        if self.crawler is not None:
            self.crawler.stop(reason)
        return {}

    def connectionLost(self, reason):
        """The parent's end closed: unless this worker is done, the parent is gone, and
        nothing it does could reach the crawl: stop at once."""
        super().connectionLost(reason)
        if not self._finishing:
            logger.error("the parent process has gone; stopping")
            self._stop_reactor()

    def _stop_reactor(self):
        from twisted.internet.error import ReactorNotRunning
        try:
            self.reactor.stop()
        except ReactorNotRunning:
            pass

    # the outbox

    def add(self, kind, record):
        """Append C{record} to the records of C{kind} sent at the end of this turn."""
        records = self._outbox.get(kind)
        if records is None:
            records = self._outbox[kind] = []
        records.append(record)
        if self._flush_call is None:
            self._flush_call = self.reactor.callLater(0, self.flush)

    def flush(self, books=False):
        """
        Send what the outbox holds as one L{Report}, with what changed in the stats and
        the ledger since the last one: a page's acknowledgement and its counts travel
        together, so a worker killed between two reports loses neither alone (its
        unacknowledged pages are fetched again, and counted again).

        @param books: send what changed in the stats and the ledger even with no record
            to go with it (every L{STATS_INTERVAL}: the memory in use, say).
        @return: a Deferred fired once it is written (L{Report} has no answer: the pipe
            keeps the order, and the L{Finished} after it is answered); it never errbacks
            (a lost parent is logged by L{connectionLost}).
        """
        call, self._flush_call = self._flush_call, None
        if call is not None and call.active():
            call.cancel()
        self._report_start()
        if self._outbox or books:
            self._add_books()
        if not self._outbox:
            return succeed(None)
        box, self._outbox = self._outbox, {}
        self.callRemote(Report, batch=dumps(box))
        return succeed(None)

    def _report_start(self):
        if self.start_role == "first":
            state = (self.start_pulled, self.start_done)
            if state != self._reported_start:
                self._reported_start = state
                self._outbox["start"] = list(state)

    def _add_books(self):
        """Put what changed in the stats and the ledger in the outbox (nothing when
        nothing did)."""
        crawler = self.crawler
        if crawler is None:
            return
        stats, ledger = crawler.stats.take_delta(), crawler.ledger.take_delta()
        if any(stats):
            self._outbox["stats"] = stats
        if ledger[0] or ledger[1]:
            self._outbox["ledger"] = ledger

    def _report_stats(self):
        self.flush(books=True)

    # what this worker's crawl does, for the parent

    def _item_scraped(self, item, **_):
        self.add("items", item_data(item))

    def _relay_response_received(self, response, request, **_):
        lease = self.scheduler.lease_of(request) if self.scheduler is not None else None
        self.add("signals", ["response_received", lease, response.url, response.status])

    def _relay_spider_error(self, failure, response, **_):
        self.add("signals", ["spider_error", failure.type.__name__, str(failure.value),
                             getattr(response, "url", None)])

    def _relay_download_error(self, failure, request, **_):
        self.add("signals", ["download_error", failure.type.__name__, str(failure.value),
                             request.url])

    def _relay_item_dropped(self, item, exception, **_):
        self.add("signals", ["item_dropped", item_data(item), type(exception).__name__,
                             str(exception)])

    def _relay_item_error(self, item, failure, **_):
        self.add("signals", ["item_error", item_data(item), failure.type.__name__,
                             str(failure.value)])

    # the end

    def _cb_crawl_ended(self, result):
        """The crawl is over: report the last of it (L{Finished}), then stop."""
        if isinstance(result, str):
            reason = result
        else:
            reason = "worker_error"
            if hasattr(result, "getTracebackObject"):
                logger.error("the crawl failed", exc_info=(
                    result.type, result.value, result.getTracebackObject()))
        started, self._started = self._started, None
        if started is not None:  # it failed before it opened
            message = result.getErrorMessage() if hasattr(result, "getErrorMessage") \
                else reason
            started.errback(StartFailed(message))
        self._finishing = True
        if self._stats_task is not None and self._stats_task.running:
            self._stats_task.stop()
        d = self.flush()
        d.addCallback(self._cb_send_finished, reason)
        d.addBoth(self._cb_finished)

    def _cb_send_finished(self, _, reason):
        crawler = self.crawler
        final = {"stats": crawler.stats.take_delta(), "ledger": crawler.ledger.take_delta()}
        trace = crawler.get_extension(WorkerTrace) if crawler.engine is not None else None
        if trace is not None:
            final["trace"] = trace.as_data()
        return self.callRemote(Finished, reason=reason, batch=dumps(final))

    def _cb_finished(self, result):
        if hasattr(result, "getErrorMessage"):
            logger.error("could not report its end: %s", result.getErrorMessage())
        else:
            self.status = 0
        self._stop_reactor()


# the spider's receivers of these run in the parent only, once for the whole crawl (and
# spider_idle too, but with a shared frontier, where each worker's crawl idles and ends
# on its own)
PARENTS_SIGNALS = (signals.spider_closed, signals.item_scraped)


class WorkerCrawler(Crawler):
    """
    A worker's crawler: the parent logs the crawl's settings; the first worker logs the
    components that run in each worker.

    The spider's hooks of the whole crawl are the parent's (L{PARENTS_SIGNALS}, and
    C{spider_idle} unless the frontier is shared): here its C{closed(reason)} is not
    called and the receivers its C{from_crawler} connected to those signals are
    disconnected; its other receivers (C{spider_opened}, before its callbacks run here,
    C{response_received}, ...) run here.
    """

    def _create_spider(self, *args, **kwargs):
        spider = super()._create_spider(*args, **kwargs)
        idle = () if self.worker.shared else (signals.spider_idle,)
        disconnect_spider_receivers(self, (*PARENTS_SIGNALS, *idle))
        return spider

    def _create_engine(self):
        engine = super()._create_engine()
        engine.closes_spider = False
        return engine

    def _log_start(self):
        if self.worker.index == 0:
            log_components(self)


def worker_settings(settings, config):
    """
    Put on C{settings} (the parent's) what a worker must run with, above every other
    priority: this worker's share of C{CONCURRENT_REQUESTS}, the parent's frontier (unless
    a shared one is named), no feeds, no extensions but the log counter and the trace, no
    stats dump, and its log lines marked with its number.
    """
    priority = WORKER_PRIORITY
    shared = config["shared"]
    for name, value in (("WORKERS", 1), ("CONCURRENT_REQUESTS", config["share"]),
                        ("JOBDIR", None), ("FEEDS", {}), ("EXTENSIONS", {}),
                        ("STATS_CLASS", "tinyscrapy.frontier.worker.WorkerStats"),
                        ("STATS_DUMP", False), ("STATS_FILE", None),
                        ("LOGSTATS_INTERVAL", 0), ("PROGRESS", False),
                        ("TELNETCONSOLE_ENABLED", False), ("LOG_FILE_APPEND", True)):
        settings.set(name, value, priority)
    extensions = {"tinyscrapy.extensions.logcount.LogCount": 0}
    trace = settings.get("TRACE_FILE")
    if trace and trace != "-":
        extensions["tinyscrapy.frontier.worker.WorkerTrace"] = 0
    elif trace:
        extensions["tinyscrapy.trace.Trace"] = 0
    settings.set("EXTENSIONS_BASE", extensions, priority)
    if not shared:
        settings.set("SCHEDULER", "tinyscrapy.frontier.worker.WorkerScheduler", priority)
        middlewares = dict(settings.getdict("SPIDER_MIDDLEWARES"))
        middlewares["tinyscrapy.frontier.worker.WorkerStart"] = -1000
        settings.set("SPIDER_MIDDLEWARES", middlewares, priority)
    fmt = settings.get("LOG_FORMAT") or "%(message)s"
    mark = f"worker {config['index'] + 1}: "
    fmt = fmt.replace("%(message)s", mark + "%(message)s") if "%(message)s" in fmt \
        else mark + fmt
    settings.set("LOG_FORMAT", fmt, priority)
    return settings


def spider_class(locator):
    """
    The spider class the parent names: C{["class", "module.Name"]} (imported), or
    C{["file", path, qualname]} for a spider of C{runspider FILE.py} (the file imported
    as the parent imported it).
    """
    from tinyscrapy.utils.misc import load_object
    if locator[0] == "class":
        return load_object(locator[1])
    from tinyscrapy.spiderloader import spider_class_from_file
    cls = spider_class_from_file(locator[1])
    module = sys.modules[cls.__module__]
    obj = module
    for part in locator[2].split("."):
        obj = getattr(obj, part)
    return obj


def item_data(item):
    """
    C{item} as plain data for the parent's feeds: as the frontier codec writes it (a
    registered item class is rebuilt there); any other item as a dict of its fields, a
    value JSON cannot hold written as its C{str()} (logged once per field).
    """
    try:
        return plain(item)
    except NotPlain:
        pass
    from itemadapter import ItemAdapter
    fields = {}
    for name, value in ItemAdapter(item).items():
        try:
            fields[name] = plain(value)
        except NotPlain as e:
            key = (type(item).__qualname__, name)
            if key not in _WARNED:
                _WARNED.add(key)
                logger.warning("%s field %r holds %s: sent to the parent's feeds as its text",
                               type(item).__qualname__, name, e)
            fields[name] = str(value)
    return fields


_WARNED = set()


@dataclass(frozen=True)
class WorkerSchedulerStatistics:
    """This worker's side of the parent's frontier."""

    pending: int
    leases: int
    enqueued: int
    duplicates: int
    seen: int


class WorkerScheduler:
    """
    The engine's scheduler in a worker (C{SCHEDULER}, set by L{worker_settings}): the
    frontier is the parent's.

        - L{enqueue_request} answers at once from the fingerprints this worker has seen
          (sent or been given): a known one is a duplicate for sure; any other goes to
          the parent, whose duplicate filter decides (it ends there as C{duplicate} in
          the crawl's ledger when it was another worker's).
        - L{next_request} hands out the leases the parent sent, first come first served;
          the parent sends only requests whose slot can take them now.
        - L{request_done} acknowledges a lease; L{close} gives back the leases never
          started.
        - L{has_pending_requests} is True until the parent closes the crawl: only the
          parent knows when the crawl's frontier is empty and nothing is in flight.

    C{seen} and C{fingerprint} let C{response.follow_all} drop known links before any
    request is made, as in one process.
    """

    def __init__(self, crawler):
        self.link = crawler.worker
        self.stats = crawler.stats
        self.fingerprint = as_int(crawler.request_fingerprinter)
        self.seen = FingerprintSet()
        self.spider = None
        self.over = False
        self._buffer = deque()
        self._leases = {}  # request -> lease id, from the parent's lease until done
        self._enqueued = self._duplicates = 0

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def open(self, spider):
        self.spider = spider
        self.link.scheduler = self

    def enqueue_request(self, request):
        """
        @return: False for a request this worker knows was seen, else True (it goes to
            the parent at the end of the turn).
        @raise UnserializableRequest: it cannot cross the pipe (a callback that is not a
            spider method, ...): logged.
        """
        fingerprint = self.fingerprint(request)
        if not request.dont_filter and fingerprint in self.seen:
            self._duplicates += 1
            self.stats.inc_value("dupefilter/filtered")
            return False
        request.fingerprint = fingerprint
        try:
            fields = request_to_fields(request, self.spider)
        except UnserializableRequest as e:
            logger.error("%s", e)
            raise
        if not request.dont_filter:
            self.seen.add(fingerprint)
        self._enqueued += 1
        self.link.add("queued", [fingerprint, fields])
        return True

    def add_leases(self, leases):
        """C{(lease id, request)} pairs from the parent: queued here, the engine woken."""
        for lease, request in leases:
            self._leases[request] = lease
            self._buffer.append(request)
            if request.fingerprint is not None and not request.dont_filter:
                self.seen.add(request.fingerprint)
        if leases:
            engine = self.link.crawler.engine
            if self.over:  # closing: they go back
                self._give_back()
            elif engine is not None:
                engine.wake("lease")

    def add_seen(self, fingerprints):
        """C{fingerprints} are in the crawl's frontier (another worker found them)."""
        add = self.seen.add
        for fingerprint in fingerprints:
            add(fingerprint)

    def lease_of(self, request):
        """The lease id of C{request}, or None (not one the parent handed out)."""
        return self._leases.get(request)

    def next_request(self):
        buffer = self._buffer
        return buffer.popleft() if buffer else None

    def request_done(self, request):
        lease = self._leases.get(request)
        if lease is not None:
            self.link.crawler.ledger.acknowledge(request)
            del self._leases[request]
            self.link.add("done", lease)

    def next_ready_time(self):
        """None: a lease arriving wakes the engine."""
        return None

    def has_pending_requests(self):
        return bool(self._buffer) or not self.over

    def size(self):
        return len(self._buffer)

    __len__ = size

    def close(self, reason):
        """Give back the leases never started, and send the last records.
        @return: a Deferred firing once the parent has them."""
        self.over = True
        self._give_back()
        return self.link.flush()

    def _give_back(self):
        returned = [self._leases.pop(request) for request in self._buffer
                    if request in self._leases]
        self._buffer.clear()
        for lease in returned:
            self.link.add("returned", lease)

    def statistics(self):
        return WorkerSchedulerStatistics(
            pending=len(self._buffer), leases=len(self._leases), enqueued=self._enqueued,
            duplicates=self._duplicates, seen=len(self.seen))


class _SlotReports:
    """
    The worker's L{tinyscrapy.core.downloader.slots.Slots} observer: for the parent, each
    send on a slot the crawl spaces, each end of a transfer (with its latency and size
    on such a slot, for the parent's AutoThrottle) and each raised delay.

    A slot the parent spaces may have no delay here: the parent's AutoThrottle, or a
    robots.txt C{Crawl-delay} another worker found. The parent flags the leases of such a
    slot (L{WorkerLink.leases}), and this worker reports that slot's sends from then on.

    @ivar spaced: the names of the slots the parent flagged.
    """

    def __init__(self, link):
        self.link = link
        self.scheduler = link.scheduler
        self.spaced = set()
        self._key_for = link.crawler.slots.key_for

    def spaced_by_parent(self, request):
        """The parent spaces the slot of C{request} (its lease was flagged)."""
        self.spaced.add(self._key_for(request))

    def sent(self, request, slot):
        if not (slot.spaced or slot.key in self.spaced):
            return
        lease = self.scheduler.lease_of(request)
        if lease is not None:
            self.link.add("sent", lease)
        else:
            self.link.add("stamps", slot.key)

    def released(self, request, slot, result, latency):
        lease = self.scheduler.lease_of(request)
        if lease is None:
            return
        status = getattr(result, "status", None)
        if latency is None or not (slot.spaced or slot.key in self.spaced):
            self.link.add("released", [lease, status])
            return
        body = getattr(result, "body", None)
        self.link.add("released", [lease, status, latency, len(body) if body else 0])

    def delay_raised(self, key, delay):
        self.link.add("floors", [key, delay])


class WorkerStart:
    """
    A spider middleware of the workers (nearest the engine): only the first worker pulls
    the crawl's start requests, and a first worker started again after a crash skips the
    ones its predecessor had already handed to the parent.
    """

    def __init__(self, link):
        self.link = link

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.worker)

    def process_start_requests(self, start_requests, spider):
        if self.link.start_role != "first":
            return
        for output in start_requests:
            if self._skipped(output):
                continue
            yield output
        self._done()

    async def process_start(self, start):
        if self.link.start_role != "first":
            return
        async for output in start:
            if self._skipped(output):
                continue
            yield output
        self._done()

    def _skipped(self, output):
        if not isinstance(output, Request):
            return False
        link = self.link
        link.start_pulled += 1
        return link.start_pulled <= link.start_skip

    def _done(self):
        self.link.start_done = True
        self.link.flush()


class WorkerStats(StatsCollector):
    """
    The worker's stats (C{STATS_CLASS}, set by L{worker_settings}): kept as usual, and what
    changed since the last report kept aside (L{take_delta}), for the parent's, where the
    crawl's stats are dumped once.
    """

    def __init__(self, crawler=None, **kwargs):
        super().__init__(crawler, stats_file=None)
        self.dump = False
        self._changes = ({}, {}, {}, {})  # increments, values set, maxima, minima

    def inc_value(self, key, count=1, start=0, spider=None):
        stats = self._stats
        if key in stats:
            stats[key] += count
        else:
            stats[key] = start + count
            count += start
        increments = self._changes[0]
        increments[key] = increments.get(key, 0) + count

    def set_value(self, key, value, spider=None):
        self._stats[key] = value
        self._changes[1][key] = value
        self._changes[0].pop(key, None)  # the value set replaces what came before

    def max_value(self, key, value, spider=None):
        super().max_value(key, value)
        maxima = self._changes[2]
        maxima[key] = max(value, maxima.get(key, value))

    def min_value(self, key, value, spider=None):
        super().min_value(key, value)
        minima = self._changes[3]
        minima[key] = min(value, minima.get(key, value))

    def take_delta(self):
        """
        @return: C{[increments, values set, maxima, minima]} since the last call, each a
            list of C{[key, value]} (values as plain data, else their text).
        """
        changes, self._changes = self._changes, ({}, {}, {}, {})
        return [[[key, _stat_value(value)] for key, value in part.items()]
                for part in changes]

    def open_spider(self, spider=None):
        """Nothing to claim: the parent writes C{STATS_FILE}."""

    def close_spider(self, spider=None, reason=None):
        """Count this worker's downloader and pipeline records into the crawl's (no
        summary, no dump: the parent's stats have the whole crawl)."""
        if self.crawler is None or self.crawler.engine is None:
            return
        records = {name: record for name, record in crawl_statistics(self.crawler).items()
                   if name in ("downloader", "pipelines")}
        before = dict(self._stats)
        self.record_statistics(records)
        for key, value in self._stats.items():
            if key not in before and isinstance(value, (int, float)):
                self._changes[0][key] = value


def _stat_value(value):
    try:
        return plain(value)
    except NotPlain:
        return str(value)


class WorkerLedger(RequestLedger):
    """
    A worker's request ledger: its entries are counted as usual, and the parent's ledger
    adds them up (L{take_delta}); a request is often opened in one process and ended in
    another, so only the crawl's books, in the parent, balance.

    The end of a request the parent leased is held until its acknowledgement
    (L{WorkerScheduler.request_done}), and counted in the same report: a worker killed
    in between loses both, and the parent's copy of the lease ends the entry once.
    """

    def __init__(self, stats, link=None):
        super().__init__(stats)
        self.link = link
        self._opened = 0
        self._closed = {}
        self._held = {}  # a leased request -> (state, reason) of its end, until done

    def open(self, request):
        self.opened += 1
        self._opened += 1

    def close(self, request, state, reason=None):
        scheduler = self.link.scheduler if self.link is not None else None
        if scheduler is not None and scheduler.lease_of(request) is not None:
            self._held[request] = (state, reason)
            return
        self._count(request, state, reason)

    def _count(self, request, state, reason):
        super().close(request, state, reason)
        self._closed[state] = self._closed.get(state, 0) + 1

    def acknowledge(self, request):
        """C{request}, a lease, is acknowledged: its end (if it has one here) counts now."""
        held = self._held.pop(request, None)
        if held is not None:
            self._count(request, *held)

    def forget(self, request):
        """C{request}, a lease, is not acknowledged (given back, or cancelled at close):
        the parent ends its entry."""
        self._held.pop(request, None)

    def reconcile(self, pending, in_flight=0):
        """Nothing to check here: the parent reconciles the crawl's books. @return: 0."""
        return 0

    def take_delta(self):
        """@return: C{[opened, {state: count}]} since the last call."""
        delta = [self._opened, self._closed]
        self._opened, self._closed = 0, {}
        return delta


class WorkerTrace(Trace):
    """The trace recorder of a worker (C{--trace FILE}): it records as in one process,
    and its events go to the parent in L{Finished}, which draws every worker's lane on
    one page."""

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler, None, crawler.settings.getint("TRACE_MAX_EVENTS"))

    def spider_closed(self, spider, reason, **_):
        self._closed_at = self._now()
        self.reason = reason
        self.name = spider.name
        self._ids.clear()
        self._continuing.clear()

    def as_data(self):
        """@return: what the parent's page needs, as JSON data."""
        stats = self.crawler.stats
        return {"events": self.events, "urls": self.urls, "turns": self.turns,
                "not_recorded": self.not_recorded, "max_events": self.max_events,
                "opened_at": self.opened_at, "closed_at": self._closed_at,
                "reason": self.reason,
                "stats": {key: stats.get_value(key, 0) for key in _LANE_STATS}}


_LANE_STATS = ("response_received_count", "item_scraped_count", "ledger/failed")

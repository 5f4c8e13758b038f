"""
The parent of C{--workers N} (C{WORKERS}): one crawl in N worker processes that share the
parent's frontier. This module decides what is leased, what a report means and
whether a dead worker is started again; the processes themselves, as the parent starts
them and talks to them, are L{tinyscrapy.frontier.processes}; the worker's side is
L{tinyscrapy.frontier.worker}; the commands and their bytes are
L{tinyscrapy.frontier.workerwire}; C{docs/workers.md} is the user's view.

The parent runs the ordinary engine loop (L{FrontierService}, an
L{tinyscrapy.core.engine.ExecutionEngine}) over the crawl's frontier -- the same
scheduler, duplicate filter and per-host slots as one process, in memory or a
C{--jobdir} -- whose downloader is the pool of workers (L{WorkerPool}): to "download" a
request is to lease it to a worker, and the download's Deferred fires when the worker
acknowledges it (its callback ran, what it yielded came back first). So:

    - C{CONCURRENT_REQUESTS} stays the crawl's: each worker's engine gets its share;
      the parent leases each worker up to twice its share, the rest waiting there while
      the report of the one before is on its way;
    - the slots are the parent's: a request is leased only when its slot can take one
      now, across every worker, and the workers report each send on a slot with a delay
      and the end of each transfer, so every gap at the server is at least the delay and
      a host never has more than its parallelism at once;
    - the crawl ends as in one process: the frontier empty, no lease out, the first
      worker done with the start requests; then C{spider_idle}, and every worker is
      closed before the parent's own parts close (feeds, frontier, C{spider_closed},
      the stats, dumped once, the ledger, which balances over every process).

A worker that dies (C{kill -9}, a crash) is started again (at most L{MAX_RESTARTS} times
for one worker number) and its leases go back to the frontier (C{workers/requeued}); a
request whose worker died with it L{DEATHS_TO_GIVE_UP} times is given up (failed,
C{WorkerLost}, logged with its URL), so a page that crashes every worker cannot loop.
Such a request (a suspect: a worker died holding it) is leased only while no other
suspect is out, so the page that kills its worker does not take the same innocent
neighbours down with it again and again: each of them dies at most once with it. A
worker that closes its crawl by itself (a callback raised C{CloseSpider}) closes the
crawl.

With a shared frontier (C{--scheduler redis://}) the workers lease from it themselves
and each runs its start requests; the parent only gathers their items, stats, ledger and
trace, and the crawl ends when every worker's has.
"""

import copy
import logging
import sys
from collections import deque
from dataclasses import dataclass

from twisted.internet.defer import Deferred, DeferredList, succeed
from twisted.internet.error import ProcessExitedAlready
from twisted.python.failure import Failure

from tinyscrapy import signals
from tinyscrapy.core.downloader.slots import Slots
from tinyscrapy.core.engine import ExecutionEngine
from tinyscrapy.core.scheduler import Scheduler
from tinyscrapy.core.scraper import Scope, Scraper
from tinyscrapy.core.spidermw import SpiderMiddlewareManager
from tinyscrapy.dupefilters import RFPDupeFilter
from tinyscrapy.exceptions import UnserializableRequest, UsageError
from tinyscrapy.frontier import disconnect_spider_receivers, is_shared, workers_wanted
from tinyscrapy.frontier.codec import request_from_fields, request_to_fields
from tinyscrapy.frontier.processes import Worker, WorkerLane, _reap_children, spider_locator
from tinyscrapy.frontier.workerwire import RELAYED, dumps, portable_settings

logger = logging.getLogger(__name__)

MAX_RESTARTS = 10  # a worker number whose process died this often is not started again
DEATHS_TO_GIVE_UP = 3  # a request held by this many dying workers is given up


class FrontierService(ExecutionEngine):
    """
    The parent's engine: the crawl's frontier, leased to the workers (see the module's
    docstring). Extensions, the C{CLOSESPIDER_*} counts, C{spider_idle},
    C{spider_closed} and L{close_spider} act here, on the whole crawl.

    @ivar pool: the L{WorkerPool}, also the engine's C{downloader}.
    """

    def __init__(self, crawler, spider_closed_callback=None, *, reactor=None):
        """
        @raise UsageError: the spider or a setting cannot reach a worker process (checked
            before anything opens).
        """
        spider_locator(crawler.spidercls)
        portable_settings(crawler.settings)
        if is_shared(crawler.settings):  # said here once, not by every worker
            from tinyscrapy.frontier.redisconnect import require_txredisapi
            require_txredisapi(crawler.settings.get("SCHEDULER_URL"))
        # the spider's receivers of what the workers relay run there, with the response
        # or failure itself (and a signal only the spider listened to is not relayed);
        # with a shared frontier, each worker's crawl idles on its own
        leave = [getattr(signals, name) for name in RELAYED]
        if is_shared(crawler.settings):
            leave.append(signals.spider_idle)
        disconnect_spider_receivers(crawler, leave)
        self.pool = pool = WorkerPool(crawler, reactor)
        crawler.downloader, crawler.slots = pool, pool.slots
        scheduler = Scheduler.from_crawler(crawler) if pool.shared else None
        super().__init__(crawler, spider_closed_callback, reactor=reactor, downloader=pool,
                         scheduler=scheduler, scraper=ParentScraper(crawler))
        pool.engine = self
        self._workers_closed = None

    @property
    def workers(self):
        """The L{Worker}s: each one's C{ended} Deferred fires when its last process has
        ended (L{tinyscrapy.crawler.CrawlerProcess} waits for each)."""
        return self.pool.workers

    def open_spider(self, spider, start_requests=()):
        """
        Open the frontier (a C{--jobdir} resumes here), then start the workers. The start
        requests are the first worker's to pull, through its spider middlewares:
        C{start_requests} is never iterated here.

        @return: a Deferred firing with None once the workers are started.
        """
        d = super().open_spider(spider, ())
        d.addCallback(self._cb_start_workers)
        return d

    def _cb_start_workers(self, _):
        self.pool.start()

    def _has_room(self):
        return not self.paused and self.pool.has_room()

    def _is_exhausted(self):
        return super()._is_exhausted() and self.pool.settled()

    def close_spider(self, spider=None, reason=None):
        """As the engine's, and every worker is told to close too. @return: C{_close}."""
        d = super().close_spider(spider, reason)
        self.pool.close_workers(self.closing_reason)
        return d

    def stop_for_error(self, reason):
        super().stop_for_error(reason)
        self.pool.close_workers(self.closing_reason)

    def _cancel_in_flight(self):
        """
        The grace period is over: the engine stops waiting for the requests still leased
        (as in one process). A worker whose process still runs one more grace period
        later (a callback that blocks) is stopped (L{WorkerPool.stop_overdue}), and its
        leases go back to the frontier as a dead worker's do.
        """
        super()._cancel_in_flight()
        self.pool.stop_overdue(self.grace_period)

    def _count_cancelled(self, request):
        """Nothing: each worker, told to close when the close began, cancels on its own
        grace period what it still runs and counts it in its ledger (counting it here
        too counted it twice)."""

    def _close_spider(self):
        """Nothing leased and closing: wait for every worker to end, then close the
        crawl's parts as the engine does."""
        self._stop_timers()
        if self._workers_closed is None:
            self._workers_closed = self.pool.close_workers(self.closing_reason)
            self._workers_closed.addCallback(self._cb_workers_closed)

    def _cb_workers_closed(self, _):
        super()._close_spider()


class ParentScraper(Scraper):
    """
    What stands where the engine's L{Scraper} stands, in the parent: pages are scraped in
    the workers, so it runs no callback, spider middleware or pipeline. It keeps the
    scope's basic checks (http and https only) for the requests the parent's own
    extensions give to C{engine.crawl}, and the scraper's bookkeeping.
    """

    def __init__(self, crawler):
        self.crawler = crawler
        self.stats = crawler.stats
        self.signals = crawler.signals
        self.ledger = crawler.ledger
        self.engine = None
        self.spidermw = _ParentSpiderMiddleware(crawler=crawler)
        self.scope = Scope(crawler.stats)
        self.itemproc = _InWorkers()

    def open_spider(self, spider):
        return succeed(None)

    def close_spider(self, spider, reason):
        return succeed(None)

    def scrape(self, response, request, spider):
        """A lease came back acknowledged: the worker scraped it. @return: None."""
        return None

    def scrape_failure(self, failure, request, spider):
        self.log_unexpected(failure, request)


class _ParentSpiderMiddleware(SpiderMiddlewareManager):
    """The parent's spider middlewares: none (they run in each worker), shown as such."""

    @property
    def components(self):
        return [("(in each worker)", None)]


class _InWorkers:
    """The item pipelines of the parent: none (they run in each worker), shown as such."""

    middlewares = ()
    components = (("(in each worker)", None),)

    def statistics(self):
        return None


class _Answer:
    """What AutoThrottle reads of a response whose transfer a worker reported: its
    status, its request (the meta) and the length of its body (C{len(answer.body)})."""

    __slots__ = ("status", "request", "size")

    def __init__(self, status, request, size=0):
        self.status = status
        self.request = request
        self.size = size

    @property
    def body(self):
        """Stands for the body, which stayed in the worker: only its length."""
        return _Length(self.size)


class _Length:
    """A body the parent never sees, as long as it was."""

    __slots__ = ("size",)

    def __init__(self, size):
        self.size = size

    def __len__(self):
        return self.size


class _SlotMark:
    """A request of slot C{key} that a worker sent without a lease (its robots.txt):
    what L{Slots.sent} reads of it."""

    __slots__ = ("_meta", "url")

    def __init__(self, key):
        self._meta = {"download_slot": key}
        self.url = ""


class Lease:
    """A request handed to a worker, until it acknowledges or gives it back."""

    __slots__ = ("id", "request", "worker", "deferred", "sent", "released", "deaths")

    def __init__(self, lease_id, request, worker, deferred, deaths):
        self.id = lease_id
        self.request = request
        self.worker = worker
        self.deferred = deferred
        self.sent = self.released = False
        self.deaths = deaths


@dataclass(frozen=True)
class WorkerPoolStatistics:
    """The workers and what they hold."""

    workers: int
    alive: int
    leases: int
    restarts: int
    requeued: int


class WorkerPool:
    """
    The parent engine's downloader: the worker processes, and the requests leased to
    them (see the module's docstring).

    @ivar slots: the crawl's per-host L{Slots}.
    @ivar workers: one L{Worker} per worker number.
    @ivar leases: lease id -> L{Lease}, those out now.
    @ivar shared: True with a shared frontier (the workers lease from it themselves).
    @ivar start_done: True once the first worker has pulled every start request.
    """

    def __init__(self, crawler, reactor=None):
        self.crawler = crawler
        self.reactor = reactor if reactor is not None else crawler.reactor
        self.stats = crawler.stats
        self.ledger = crawler.ledger
        self.slots = Slots.from_crawler(crawler, self.reactor)
        self.middleware = _InWorkers()  # as log_start shows it
        self.shared = is_shared(crawler.settings)
        total = max(1, crawler.settings.getint("CONCURRENT_REQUESTS"))
        count = workers_wanted(crawler.settings)
        if count > total:
            logger.warning("WORKERS=%d is more than CONCURRENT_REQUESTS=%d: %d workers",
                           count, total, total)
            count = total
        self.workers = [Worker(self, index, total // count + (index < total % count))
                        for index in range(count)]
        self.leases = {}
        self.engine = None
        self.start_pulled = 0
        self.start_done = self.shared
        self.closing = None
        self._next_lease = 1
        self._deaths = {}  # a requeued copy -> how many workers died holding it
        self._suspect = None  # the lease id of the suspect out now (see _lease_suspect)
        self._suspects = deque()  # (request, spider, Deferred, deaths) waiting for it
        self._seen = None
        self._restarts = self._requeued = 0

    # the workers

    def start(self):
        """
        Start every worker's process.

        @raise UsageError: what they would be started with cannot reach them (checked
            here, before any is spawned; then every worker has ended).
        """
        self._seen = _seen_set(self.engine.scheduler)
        self.stats.set_value("workers/count", len(self.workers))
        try:
            dumps(self.config(self.workers[0]))
        except UsageError:
            self.closing, self.start_done = "worker_error", True
            for worker in self.workers:
                worker.give_up("worker_error")
            raise
        _reap_children(self.reactor)
        for worker in self.workers:
            worker.spawn()

    def config(self, worker):
        """
        What L{worker} is started with (L{Start}): the spider and its arguments, the
        settings, its share and role.

        @raise UsageError: the spider class or a setting cannot reach a worker process.
        """
        crawler = self.crawler
        args, kwargs = getattr(crawler, "_spider_args", ((), {}))
        if args:
            raise UsageError("--workers: spider arguments must be given by name")
        if worker.index == 0 and not self.shared:
            start = ["first" if not self.start_done else "none", self.start_pulled]
        else:
            start = ["all" if self.shared else "none", 0]
        finder = sys.modules.get("tinyscrapy.scrapyfinder")
        bus = crawler.signals
        return {
            "index": worker.index, "count": len(self.workers), "share": worker.share,
            "shared": self.shared, "spider": spider_locator(crawler.spidercls),
            "kwargs": kwargs, "settings": portable_settings(crawler.settings),
            "start": start, "sys_path": [path for path in sys.path if path],
            "as_scrapy": bool(finder is not None and finder.is_installed()),
            "relay": [name for name in RELAYED if bus.listened(getattr(signals, name))],
        }

    def has_room(self):
        """Whether a worker can take one more lease now."""
        return any(worker.room() > 0 for worker in self.workers)

    def settled(self):
        """Whether nothing more can come from the workers unasked: the start requests
        are all pulled (or, with a shared frontier, every worker's crawl has ended)."""
        if self.shared:
            return all(worker.gone for worker in self.workers)
        return self.start_done

    def close_workers(self, reason):
        """
        Tell every worker to close with C{reason} (once each), and start no more.

        @return: a Deferred firing once every worker's last process has ended.
        """
        if self.closing is None:
            self.closing = reason
        for worker in self.workers:
            worker.close(self.closing)
        while self._suspects:  # not leased yet, and now never: they wait in the frontier
            request, _fields, d, deaths = self._suspects.popleft()
            if not d.called:
                self._requeue(request, deaths)
                d.callback(None)
        return DeferredList([worker.ended_here() for worker in self.workers])

    def stop_overdue(self, after):
        """C{after} seconds from now, stop (SIGKILL) every worker process still running:
        told to close, it had its grace period to end its requests and one more to close
        its parts (a callback or a pipeline that blocks holds it). Its leases then go back
        to the frontier (L{died}). Nothing when C{after} is 0 (C{CLOSE_GRACE_PERIOD = 0}
        waits for everything)."""
        if after and after > 0:
            self.reactor.callLater(after, self._stop_overdue)

    def _stop_overdue(self):
        for worker in self.workers:
            process = worker.process
            if process is not None and process.pid is not None and process.transport:
                logger.error("worker %d (pid %d) is still running two grace periods after "
                             "the close began (a callback or a pipeline that blocks?): "
                             "stopped", worker.index + 1, process.pid)
                self.stats.inc_value("workers/stopped")
                process.stopped = True
                try:
                    process.transport.signalProcess("KILL")  # a process this pool started
                except (OSError, ProcessExitedAlready):  # it has just ended
                    pass

    def close(self):
        """The engine's last step for its downloader: every worker has ended by then."""
        return succeed(None)

    # leases

    def fetch(self, request, spider):
        """
        Lease C{request} to the worker with the most room.

        @return: a Deferred firing with None once the worker acknowledged it (or gave it
            back, or died holding it: then it waits in the frontier again); it never
            errbacks.
        """
        try:
            fields = request_to_fields(request, spider)
        except UnserializableRequest as e:  # the parent's own engine.crawl(), with a lambda
            logger.error("%s", e)
            self.ledger.close(request, "dropped", "UnserializableRequest")
            return succeed(None)
        d = Deferred()
        deaths = self._deaths.pop(request, 0)
        if deaths and self._suspect is not None:  # it waits for the suspect out now
            self._suspects.append((request, fields, d, deaths))
        else:
            self._lease(request, fields, d, deaths)
        return d

    def _lease(self, request, fields, d, deaths):
        worker = max(self.workers, key=Worker.room)
        slot = self.slots.acquire(request)
        lease_id = self._next_lease
        self._next_lease += 1
        self.leases[lease_id] = Lease(lease_id, request, worker, d, deaths)
        if deaths:
            self._suspect = lease_id
        worker.lease(lease_id, fields, slot.spaced)

    def _lease_suspect(self):
        """The suspect out has ended: lease the next one waiting (not one the close
        cancelled meanwhile), once a worker has room for it."""
        while self._suspect is None and self._suspects and self.has_room():
            request, fields, d, deaths = self._suspects.popleft()
            if not d.called:
                self._lease(request, fields, d, deaths)

    def report(self, worker, box):
        """
        One L{Report} of C{worker}: its records, in an order that keeps the promises of
        one process (an item in the feeds before its page is acknowledged, what a page
        yielded in the frontier before it).

        @return: a Deferred firing with C{{}} (L{Report}'s answer) once it is handled.
        """
        slots = self.slots
        for key, delay in box.get("floors", ()):
            slots.raise_delay(key, delay)
        waits = [wait for wait in map(self._item, box.get("items", ())) if wait is not None]
        if waits:  # a receiver of item_scraped is still writing: the rest after it
            d = DeferredList(waits)
            d.addCallback(self._cb_report_rest, worker, box)
            return d
        return succeed(self._cb_report_rest(None, worker, box))

    def _cb_report_rest(self, _, worker, box):
        if box.get("queued"):
            self._queued(worker, box["queued"])
        if "start" in box:
            pulled, done = box["start"]
            self.start_pulled = max(self.start_pulled, pulled)
            self.start_done = self.start_done or done
        leases, slots = self.leases, self.slots
        for lease_id in box.get("sent", ()):
            lease = leases.get(lease_id)
            if lease is not None and not lease.sent:
                lease.sent = True
                slots.sent(lease.request)
        for key in box.get("stamps", ()):
            slots.sent(_SlotMark(key))
        for lease_id, status, *measured in box.get("released", ()):
            lease = leases.get(lease_id)
            if lease is not None and not lease.released:
                lease.released = True
                if measured:  # a slot the crawl spaces: the worker's latency, for AutoThrottle
                    latency, size = measured
                    slots.release(lease.request, _Answer(status, lease.request, size), latency)
                else:
                    slots.release(lease.request, _Answer(status, lease.request))
        for lease_id in box.get("done", ()):
            self._end(lease_id, "done")
        for lease_id in box.get("returned", ()):
            self._end(lease_id, "returned")
        for record in box.get("signals", ()):
            self._relayed(record)
        self._merge(box.get("stats"), box.get("ledger"))
        if self.engine is not None:
            self.engine.wake("report")
        return {}

    def _item(self, data):
        """An item a worker scraped: C{item_scraped} here (the feeds write it)."""
        return self.crawler.signals.send_waiting(signals.item_scraped, item=data,
                                                 response=None, spider=self.engine.spider)

    def _queued(self, worker, records):
        """New requests from C{worker}: each one the frontier has not seen is queued; the
        parent's frontier is the crawl's duplicate filter. The fingerprint of each one
        queued is told to the other workers (L{Worker.tell_seen}), so that their
        C{response.follow_all} drops its links before any request is made, as in one
        process."""
        scheduler = self.engine.scheduler
        spider = self.engine.spider
        seen, ledger, stats = self._seen, self.ledger, self.stats
        others = [each for each in self.workers if each is not worker] \
            if seen is not None else ()
        for fingerprint, fields in records:
            if seen is not None and fingerprint in seen and not fields["dont_filter"]:
                ledger.close(None, "duplicate")  # known: no request made to find it out
                stats.inc_value("dupefilter/filtered")
                continue
            try:
                request = request_from_fields(fields, spider)
                queued = scheduler.enqueue_request(request)
            except UnserializableRequest:  # a --jobdir that cannot store it: logged there
                ledger.close(None, "dropped", "UnserializableRequest")
                continue
            except ValueError as e:  # the worker's own codec: not expected
                logger.error("a request from a worker does not load (%s): dropped", e)
                ledger.close(None, "dropped", "Unloadable")
                continue
            if not queued:
                ledger.close(request, "duplicate")
            elif others and not fields["dont_filter"]:
                for each in others:
                    each.tell_seen(fingerprint)

    def _end(self, lease_id, how):
        """
        The end of a lease: C{"done"} (acknowledged), C{"returned"} (never started: it
        waits in the frontier again) or C{"lost"} (its worker died: again too, unless
        workers died with it L{DEATHS_TO_GIVE_UP} times).
        """
        lease = self.leases.pop(lease_id, None)
        if lease is None:
            return
        lease.worker.leased -= 1
        if lease_id == self._suspect:
            self._suspect = None
        self._lease_suspect()
        request = lease.request
        if not lease.released:
            self.slots.release(request)
        if how == "done":
            if self.shared:  # handed to the workers' shared frontier
                self.ledger.close(request, "shared")
        elif how == "lost" and lease.deaths + 1 >= DEATHS_TO_GIVE_UP:
            logger.error("%s: %d worker processes died while fetching it: given up",
                         request, lease.deaths + 1)
            self.ledger.close(request, "failed", "WorkerLost")
            self.stats.inc_value("workers/given_up")
        else:
            self._requeue(request, lease.deaths + (how == "lost"), lost=how == "lost")
        if not lease.deferred.called:  # the engine stopped waiting at its grace period
            lease.deferred.callback(None)

    def _requeue(self, request, deaths, lost=False):
        """Queue a copy of C{request} again, without the duplicate check: the engine
        acknowledges the original as the lease's Deferred fires (with C{--jobdir}, in
        the same commit as the copy's new row). C{lost}: a dead worker held it (counted
        in C{workers/requeued}; a lease given back unstarted is not)."""
        again = copy.copy(request)
        if deaths:
            self._deaths[again] = deaths
        scheduler = self.engine.scheduler
        requeue = getattr(scheduler, "requeue", None)
        try:
            if requeue is not None:
                requeue(again)
            else:  # a scheduler of the user's own: the duplicate check skipped as it can be
                again.dont_filter = True
                scheduler.enqueue_request(again)
        except UnserializableRequest:
            self.ledger.close(request, "dropped", "UnserializableRequest")
            return
        if lost:
            self._requeued += 1
            self.stats.inc_value("workers/requeued")

    def _relayed(self, record):
        """A signal of a worker's crawl that the parent's extensions listen to, sent here
        with what stands for its objects (a response without a body, a failure naming
        the worker's exception)."""
        from tinyscrapy.http.request import Request
        from tinyscrapy.http.response import Response
        name, *values = record
        spider, bus = self.engine.spider, self.crawler.signals
        signal = getattr(signals, name)
        if name == "response_received":
            lease_id, url, status = values
            lease = self.leases.get(lease_id)
            request = lease.request if lease is not None else Request(url)
            bus.send(signal, response=Response(url, status=status, request=request),
                     request=request, spider=spider)
        elif name in ("spider_error", "download_error"):
            kind, message, url = values
            failure = _remote_failure(kind, message)
            if name == "spider_error":
                response = Response(url) if url else None
                bus.send(signal, failure=failure, response=response, spider=spider)
            else:
                bus.send(signal, failure=failure, request=Request(url), spider=spider)
        elif name == "item_dropped":
            item, kind, message = values
            bus.send(signal, item=item, response=None, spider=spider,
                     exception=RemoteError(kind, message))
        elif name == "item_error":
            item, kind, message = values
            bus.send(signal, item=item, response=None, spider=spider,
                     failure=_remote_failure(kind, message))

    def _merge(self, stats, ledger):
        """A worker's changed stats and ledger counts, added to the crawl's."""
        if stats:
            increments, values, maxima, minima = stats
            crawl_stats = self.stats
            for key, value in values:
                crawl_stats.set_value(key, value)
            for key, value in increments:
                crawl_stats.inc_value(key, value)
            for key, value in maxima:
                crawl_stats.max_value(key, value)
            for key, value in minima:
                crawl_stats.min_value(key, value)
        if ledger:
            opened, closed = ledger
            self.ledger.add(opened, closed)

    # what the workers tell of themselves

    def started(self, worker):
        """C{worker}'s crawl is open: it can take leases."""
        self._lease_suspect()
        if self.engine is not None:
            self.engine.wake("worker ready")

    def finished(self, worker, reason, box):
        """C{worker}'s crawl ended with C{reason}; C{box} holds its last stats, ledger
        and trace. A worker that ended by itself (not told to) closes the crawl."""
        self._merge(box.get("stats"), box.get("ledger"))
        if "trace" in box:
            self._add_trace(worker, box["trace"])
        if self.closing is None and not (self.shared and reason == "finished"):
            logger.info("worker %d closed its crawl (%s): closing the crawl",
                        worker.index + 1, reason)
            if reason.endswith("_error"):
                self.engine.stop_for_error(reason)
            else:
                self.engine.close_spider(reason)
        elif reason.endswith("_error"):
            self.engine.stop_for_error(reason)

    def died(self, worker, process):
        """C{worker}'s process ended without finishing: its leases go back (or are given
        up); it is started again unless the crawl closes, it never opened, or it died
        L{MAX_RESTARTS} times."""
        lost = self.end_leases(worker, "lost")
        self.stats.inc_value("workers/died")
        if self.closing is not None:
            if not process.stopped:  # else _stop_overdue said it
                logger.error("worker %d (pid %s) died (%s) while the crawl closed: %d of "
                             "its requests go back to the frontier", worker.index + 1,
                             process.pid, process.ended_how, lost)
            worker.give_up("shutdown" if self.closing == "shutdown" else "worker_died")
        elif not process.ready:
            logger.error("worker %d could not start%s", worker.index + 1,
                         f": {process.start_error}" if process.start_error else "")
            worker.give_up("worker_error")
        elif worker.restarts >= MAX_RESTARTS:
            logger.error("worker %d died %d times: not started again", worker.index + 1,
                         worker.restarts + 1)
            worker.give_up("worker_error")
        else:
            logger.error("worker %d (pid %s) died (%s): %d of its requests go back to the "
                         "frontier; starting it again", worker.index + 1, process.pid,
                         process.ended_how, lost)
            worker.restarts += 1
            self._restarts += 1
            self.stats.inc_value("workers/restarts")
            worker.spawn()
        if self.engine is not None:
            self.engine.wake("worker died")

    def end_leases(self, worker, how):
        """
        End every lease C{worker} still holds: C{"lost"} (its process died) or
        C{"returned"} (it finished without acknowledging them: cancelled at its close).
        Each goes back to the frontier (L{_end}).

        @return: how many there were.
        """
        held = [lease.id for lease in self.leases.values() if lease.worker is worker]
        for lease_id in held:
            self._end(lease_id, how)
        return len(held)

    def gave_up(self, worker):
        """C{worker} will not run again: if it held the start requests, they are done;
        if no worker is left, the crawl cannot go on."""
        if worker.index == 0 and not self.start_done:
            if self.closing is None:
                logger.error("the first worker is gone before it pulled every start "
                             "request (%d pulled)", self.start_pulled)
            self.start_done = True
        if self.engine is None:
            return
        if self.closing is None and all(each.gone for each in self.workers):
            if self.shared and all(each.reason == "finished" for each in self.workers):
                self.engine.wake("workers ended")
                return
            logger.error("no worker process is left: the crawl cannot go on")
            self.engine.stop_for_error("worker_error")

    def _add_trace(self, worker, data):
        """A worker's trace, drawn as its lane on the parent's page (C{--trace})."""
        from tinyscrapy.trace import Trace
        trace = self.crawler.get_extension(Trace)
        if trace is not None and trace.text is None:
            trace.page.append(WorkerLane(self.crawler, worker, data))

    def statistics(self):
        """None: the engine's downloader keeps no C{downloader/...} stats here (the
        workers' downloaders count theirs into the crawl's); L{workers} tells of the
        workers."""
        return None

    def workers_statistics(self):
        """@return: a L{WorkerPoolStatistics} of now."""
        return WorkerPoolStatistics(
            workers=len(self.workers), alive=sum(not w.gone for w in self.workers),
            leases=len(self.leases), restarts=self._restarts, requeued=self._requeued)


def _seen_set(scheduler):
    """The frontier's fingerprints when its duplicate filter is the default one (a new
    request from a worker is then checked before it is even made), else None."""
    dupefilter = getattr(scheduler, "dupefilter", None)
    if dupefilter is None or type(dupefilter).request_seen is not RFPDupeFilter.request_seen \
            or getattr(dupefilter, "debug", False):
        return None
    return getattr(scheduler, "seen", None)


class RemoteError(Exception):
    """An exception raised in a worker process, by its class name and message."""

    def __init__(self, kind, message):
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind


def _remote_failure(kind, message):
    return Failure(RemoteError(kind, message))

"""
L{DiskScheduler}: the frontier kept in SQLite, so that a crawl can pause (Ctrl-C) and
resume (the same command again, with the same C{--jobdir DIR}), and so that millions of
waiting requests cost disk, not memory.

Each spider keeps its frontier in its own directory, C{DIR/<spider name>/} (so one
C{--jobdir} serves every spider of a C{run}, and a spider resumes the same way whether it
ran alone or with others). C{DIR/<spider name>/lock} is held (C{flock}) while a crawl uses
it: a second process on the same directory stops at once with a usage error. The
directories are made C{0700} and the files C{0600}: the stored requests keep their
headers (cookies, credentials) in plain text. The database is
L{tinyscrapy.frontier.diskstore.DiskStore}.

Every waiting request is a row on disk; only a bounded head of each host's queue is in
memory, as requests (the slot-aware queues of L{tinyscrapy.core.scheduler.Scheduler}): at most
C{HEAD} per slot, and C{WINDOW} in all (beyond it, a new host's requests wait on disk only
until the window has room: a broad crawl of a million hosts stays bounded too). A request
for a slot whose head is full is "spilled": written, and not kept. When a slot's head runs
below C{HEAD // 2}, its best rows on disk (by priority, then enqueue order) are paged in.
A resume reads the seen set and one count per slot, and pages in the slots' heads (as far
as the window goes): it does not load every row. (Within one slot, a request paged in
later can have a higher priority than one already in memory: priorities are exact within
the head and within the disk, not across them.)

A request is acknowledged (deleted) in L{DiskScheduler.request_done}, which the engine
calls once its callback finished, its items are in the feeds, and what it yielded is
enqueued. Each acknowledgement is committed at once, in one transaction with the inserts
and fingerprints buffered since the last commit (its children among them): a C{kill -9}
repeats at most the requests in flight, and never loses one. New requests are buffered
until the next commit (an acknowledgement, the C{FLUSH_INTERVAL} C{LoopingCall}, or
C{FLUSH_ROWS} of them waiting), so a callback yielding a million requests is written in
bounded chunks. What is not committed yet waits in
L{tinyscrapy.frontier.diskstore.PendingWrites}: a write that fails is tried again at the
next commit; after C{MAX_FLUSH_FAILURES} in a row, or a constraint violation (the file
changed under us), the writes stop and the crawl closes with C{jobdir_error}.

Everything is synchronous (SQLite from the standard library, on the reactor thread): no
method returns a Deferred.
"""

import gc
import logging
import os
from itertools import islice

from twisted.internet.task import LoopingCall

from tinyscrapy.core.scheduler import Scheduler, priority_queue
from tinyscrapy.dupefilters import FingerprintSet, RFPDupeFilter
from tinyscrapy.exceptions import UnserializableRequest, UsageError
from tinyscrapy.frontier.codec import (
    MissingMethod,
    StoredRequestError,
    request_from_bytes,
    request_to_bytes,
)
from tinyscrapy.frontier.diskstore import DiskStore, PendingWrites, signed
from tinyscrapy.frontier.jobdir import (
    FRONTIER,
    check_free_space,
    lock_jobdir,
    make_private_dir,
    spider_jobdir,
)
from tinyscrapy.utils.misc import build_from_crawler, load_object
from tinyscrapy.utils.request import as_int, request_fingerprint

logger = logging.getLogger(__name__)

FILENAME = FRONTIER
FLUSH_INTERVAL = 0.5  # seconds
FLUSH_ROWS = 5000  # buffered inserts that make a commit now (a few milliseconds)
HEAD = 64  # requests of one slot kept in memory; the rest wait on disk
WINDOW = 100000  # requests kept in memory in all (some 70 MB): beyond, hosts wait on disk
MIN_FREE_BYTES = 64 * 1024  # less free space than this when opening: a usage error
LARGE = 100000  # rows that make the open log a line first (about a second a million)


class DiskScheduler(Scheduler):
    """
    A L{Scheduler} whose waiting requests and seen set live in C{jobdir}.

    @ivar jobdir: the directory (created if missing).
    @ivar resumed: how many waiting requests L{open} found.
    """

    def __init__(self, jobdir, dupefilter=None, queue=None, stats=None, ledger=None,
                 fingerprint=None, **kwargs):
        super().__init__(dupefilter, queue, fingerprint=fingerprint, **kwargs)
        # the fingerprint of each stored row and of the seen table: tinyscrapy's, whatever
        # the duplicate filter; a filter of the user's own (not RFPDupeFilter's
        # request_seen) decides alone what is a duplicate, and keeps its own record
        self._row_fingerprint = fingerprint or getattr(self.dupefilter, "fingerprint", None) \
            or request_fingerprint
        self._own_filter = type(self.dupefilter).request_seen is RFPDupeFilter.request_seen
        self.jobdir = jobdir
        self.stats = stats
        self.ledger = ledger
        self.spider = None
        self.resumed = 0
        self._store = None  # the DiskStore while connected
        self._rows = {}  # request (in memory or in flight) -> (row id, slot)
        self._slot_rows = {}  # slot -> the row ids of its requests in memory or in flight
        self._head = {}  # slot -> how many of its requests wait in memory
        self._spilled = {}  # slot -> how many of its requests wait on disk only
        self._dormant = {}  # slots with requests on disk and none in memory (in order)
        self._next_id = 1
        self._writes = PendingWrites(jobdir, stats, stopped=self._stopped_writing)
        self._lock = None  # the JobdirLock while connected
        self._closing = False
        self.crawler = None  # set by from_crawler: closed when the writes stop
        self._turn_flush = None  # the callLater(0) committing this turn's acknowledgements
        self._stopping_for_unloadable = False  # a stored request was kept: stopping
        self._flusher = LoopingCall(self.flush)
        self._flusher.clock = self.clock

    @classmethod
    def from_crawler(cls, crawler):
        """Use C{JOBDIR/<spider name>}, checked now, so that a bad directory stops the
        command before the crawl."""
        spider = crawler.spider
        name = spider.name if spider is not None else crawler.spidercls.name
        settings = crawler.settings
        dupefilter = build_from_crawler(load_object(settings["DUPEFILTER_CLASS"]), crawler)
        queue = priority_queue(crawler)
        scheduler = cls(spider_jobdir(settings.get("JOBDIR"), name), dupefilter, queue,
                        stats=crawler.stats, ledger=crawler.ledger,
                        fingerprint=as_int(crawler.request_fingerprinter),
                        clock=crawler.reactor)
        scheduler.crawler = crawler
        scheduler.connect(name)
        return scheduler

    def connect(self, spider_name):
        """
        Open (or create) C{jobdir}, lock it, and open its database, for the spider
        C{spider_name}.

        @raise UsageError: the directory cannot be used (a file, not writable, on a full
            filesystem, not our database), another process uses it, or it belongs to
            another spider.
        """
        if self._store is not None:
            return
        if os.path.exists(self.jobdir) and not os.path.isdir(self.jobdir):
            raise UsageError(f"--jobdir {self.jobdir}: cannot use it (a file, not a directory)")
        make_private_dir(self.jobdir, parent_too=True)
        check_free_space(self.jobdir, MIN_FREE_BYTES)
        self._lock = lock_jobdir(self.jobdir)
        try:
            self._store = DiskStore(self.jobdir, spider_name)
        finally:
            if self._store is None:
                self._unlock()

    def _unlock(self):
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def open(self, spider):
        """Load the seen set, count the waiting requests per slot, page in each slot's
        head; start the flushes. Returns None."""
        self.spider = spider
        self.connect(spider.name)
        store = self._store
        stored, fingerprints, self._next_id = store.counts()
        if stored + fingerprints >= LARGE:
            logger.info("opening --jobdir %s: %d requests waiting, %d seen ...",
                        self.jobdir, stored, fingerprints)
        if fingerprints and not len(self.seen):  # sized once: no doubling while loading
            self.seen = FingerprintSet(capacity=fingerprints)  # (at most half full)
        collecting = gc.isenabled()
        gc.disable()  # a million new integers: no collections half-way
        try:
            add = self.seen.add
            for chunk in store.fingerprints():
                for fingerprint in chunk:
                    add(fingerprint)
        finally:
            if collecting:
                gc.enable()
        bad = store.bad_fingerprints()
        if bad:  # crafted or damaged: left out, said once, and the crawl goes on
            logger.error("--jobdir %s: %d stored fingerprints are not integers (crafted or "
                         "damaged): ignored", self.jobdir, bad)
            self._count("scheduler/unloadable", bad)
        self._spilled = store.slot_counts()
        self.resumed = sum(self._spilled.values())
        self._pending += self.resumed
        if self.ledger is not None:
            for _ in range(self.resumed):
                self.ledger.open(None)  # this run's books: each ends here like any other
            self.ledger.keep_pending()
        for slot in list(self._spilled):
            if len(self._rows) < WINDOW:
                self._page_in(slot)
            else:
                self._dormant[slot] = None  # paged in when the window has room
        if self.resumed or len(self.seen):
            logger.info("resuming: %d requests waiting, %d seen (--jobdir %s)",
                        self.resumed, len(self.seen), self.jobdir)
        self._set("scheduler/resumed", self.resumed)
        self._flusher.start(FLUSH_INTERVAL, now=False)

    # in

    def enqueue_request(self, request):
        """
        As L{Scheduler.enqueue_request}; the request's row (and its new fingerprint) is
        buffered for the next commit, and the request is kept in memory only while its
        slot's head has room.

        @raise UnserializableRequest: the request cannot be stored (see L{codec}); it is logged,
            counted as C{scheduler/unpersistable} and not queued, nor marked as seen.
        """
        fingerprint = self._row_fingerprint(request)
        if self._own_filter:
            new = fingerprint not in self.seen
            duplicate = not new and not request.dont_filter
        else:
            new = False
            duplicate = not request.dont_filter and self.dupefilter.request_seen(request)
        if duplicate:
            self._duplicates += 1
            self.dupefilter.log(request, self.spider)
            return False
        request.fingerprint = fingerprint
        self._write_row(request, fingerprint, new and not request.dont_filter)
        return True

    def requeue(self, request):
        """
        As L{Scheduler.requeue}: C{request} (a copy of one handed out and never finished)
        gets a row of its own, committed with the acknowledgement that deletes the row of
        the one it copies, so a C{kill -9} in between keeps one or the other.

        @raise UnserializableRequest: it cannot be stored (it was stored once: not expected).
        """
        self._write_row(request, request.fingerprint, False)

    def _write_row(self, request, fingerprint, seen):
        """
        Buffer C{request}'s row (and its fingerprint, when C{seen} says it is new) for the
        next commit, keeping the request in memory while its slot's head has room.

        @raise UnserializableRequest: logged, counted as C{scheduler/unpersistable}.
        """
        try:
            data = request_to_bytes(request, self.spider)
        except UnserializableRequest as e:
            logger.error("%s", e)
            self._count("scheduler/unpersistable")
            raise
        if seen:  # as the in-memory scheduler: a dont_filter request leaves no trace
            self.seen.add(fingerprint)
        self._pending += 1
        self._enqueued += 1
        slot = self.slots.key_for(request)
        row = self._next_id
        self._next_id += 1
        writes = self._writes
        writes.inserts[row] = (slot, request.priority, data)
        if seen:
            writes.seen.append(signed(fingerprint))
        if self._spilled.get(slot) or self._head.get(slot, 0) >= HEAD \
                or len(self._rows) >= WINDOW:
            self._spilled[slot] = self._spilled.get(slot, 0) + 1  # on disk only
            if not self._head.get(slot):
                self._dormant[slot] = None
        else:
            self._keep(request, row, slot)
        if len(writes.inserts) >= FLUSH_ROWS:
            self.flush()

    def _keep(self, request, row, slot):
        """Queue C{request} (row C{row} of C{slot}) in memory."""
        self._rows[request] = (row, slot)
        self._slot_rows.setdefault(slot, set()).add(row)
        self._head[slot] = self._head.get(slot, 0) + 1
        self._queue(request)

    def _page_in(self, slot):
        """Bring C{slot}'s best rows on disk into memory, up to C{HEAD} of the slot and
        C{WINDOW} in all; a slot left with none in memory is filed as dormant."""
        if self._stopping_for_unloadable:
            return  # a kept row stops the crawl: read no more
        if (self._writes.inserts or self._writes.deletes) and not self.flush():
            # the spilled rows still buffered must be on disk to be read, and the rows
            # acknowledged in this turn gone from it (else read again): later
            return
        want = min(HEAD - self._head.get(slot, 0), self._spilled.get(slot, 0),
                   WINDOW - len(self._rows))
        if want <= 0 or self._store is None:
            if self._spilled.get(slot) and not self._head.get(slot):
                self._dormant[slot] = None  # when the window has room
            return
        rows = self._store.best_rows(slot, sorted(self._slot_rows.get(slot, ())), want)
        for row, data in rows:
            try:
                request = request_from_bytes(data, self.spider)
            except Exception as e:
                if self._unloadable(row, e):
                    return  # kept on disk: the crawl stops
                request = None  # dropped
            self._spilled[slot] -= 1
            if request is not None:
                self._keep(request, row, slot)
        if not rows or self._spilled[slot] <= 0:  # nothing more (or it was not written)
            self._pending -= self._spilled.pop(slot)
        elif not self._head.get(slot):
            self._dormant[slot] = None

    def _unloadable(self, row, error):
        """
        A stored request that does not load. Crafted or damaged bytes
        (L{StoredRequestError}) are moved to the C{dead} table (with the reason): logged,
        counted as C{scheduler/unloadable}, the crawl goes on. A well-formed one whose
        callback the spider no longer has (L{MissingMethod}), or any other error (a bug,
        not the row's fault), is kept on disk, and the crawl stops with C{jobdir_error}
        (exit 1), so nothing is lost: the spider it was stored for finds it there.

        @return: True when the row is kept and the crawl stops.
        """
        if isinstance(error, MissingMethod) or not isinstance(error, StoredRequestError):
            if not self._stopping_for_unloadable:
                self._stopping_for_unloadable = True
                logger.error("--jobdir %s: cannot load stored request %d (%s: %s): the crawl "
                             "stops (jobdir_error) and keeps it, and every request still "
                             "waiting, for a spider that can (or use a new directory to "
                             "start over)", self.jobdir, row, type(error).__name__, error)
                self._count("scheduler/unloadable_kept")
                self._stop_crawl()
            return True
        logger.error("--jobdir %s: dropping stored request %d: %s (moved to the table "
                     "dead of %s)", self.jobdir, row, error, FILENAME)
        self._count("scheduler/unloadable")
        self._pending -= 1
        self._writes.dead.append((row, str(error)[:500]))
        self._writes.deletes.append(row)
        if self.ledger is not None:
            self.ledger.close(None, "dropped", "Unloadable")
        return False

    # out

    def next_request(self):
        """As L{Scheduler.next_request}; the slot of a request handed out pages in more
        when its head runs low, and hosts waiting only on disk are paged in while the
        window has room."""
        if self._dormant and len(self._rows) < WINDOW:
            self._wake_dormant()
        request = super().next_request()
        if request is not None:
            entry = self._rows.get(request)
            if entry is not None:
                slot = entry[1]
                left = self._head[slot] = self._head[slot] - 1
                if left < HEAD // 2 and self._spilled.get(slot):
                    self._page_in(slot)
        return request

    def _wake_dormant(self):
        """Page in up to 16 hosts that wait on disk only (the oldest first)."""
        for slot in list(islice(self._dormant, 16)):
            if len(self._rows) >= WINDOW:
                return
            del self._dormant[slot]
            self._page_in(slot)  # files it again if nothing came in

    def request_done(self, request):
        """
        Acknowledge C{request}, with what it yielded, and commit at the end of this turn
        of the reactor (C{callLater(0)}): the pages done in one turn share one small
        transaction (some 40 microseconds in WAL mode, and more on a slow disk), and a
        C{kill -9} repeats at most those and the requests in flight. The engine calls it
        after the page's items are in the feeds, so a feed line is always written before
        its page's acknowledgement.
        """
        entry = self._rows.pop(request, None)
        if entry is None:
            return
        row, slot = entry
        rows = self._slot_rows.get(slot)
        if rows is not None:
            rows.discard(row)
            if not rows:
                del self._slot_rows[slot]
                self._head.pop(slot, None)
        if self._writes.inserts.pop(row, None) is None:
            self._writes.deletes.append(row)
        if self._turn_flush is None:
            self._turn_flush = self.clock.callLater(0, self._flush_turn)

    def _flush_turn(self):
        """The commit of the acknowledgements of one reactor turn."""
        self._turn_flush = None
        self.flush()

    # writing

    def flush(self):
        """
        Commit the buffered inserts, fingerprints and deletes in one transaction (see
        L{PendingWrites.commit}: a failure is counted and tried again, and after
        C{MAX_FLUSH_FAILURES} in a row the writes stop and the crawl closes with
        C{jobdir_error}).

        @return: how many rows were written (0 when nothing was buffered or it failed).
        """
        if self._store is None:
            return 0
        return self._writes.commit(self._store)

    def _stopped_writing(self):
        """The writes stopped for good: stop the flushes, and close the crawl."""
        if self._flusher.running:
            self._flusher.stop()
        if self._store is not None:
            self._stop_crawl()

    def _stop_crawl(self):
        """Close the crawl with C{jobdir_error} (exit 1), when it runs in an engine."""
        engine = getattr(self.crawler, "engine", None)
        if engine is not None:
            engine.stop_for_error("jobdir_error")

    def unwritten(self):
        """@return: how many buffered operations (inserts, fingerprints, deletes) are not
        on disk yet."""
        return len(self._writes)

    def close(self, reason):
        """Stop the flushes, write what is buffered, close the database and release the
        directory. Returns None."""
        self._closing = True
        super().close(reason)
        if self._flusher.running:
            self._flusher.stop()
        if self._turn_flush is not None:  # its writes are flushed below
            self._turn_flush.cancel()
            self._turn_flush = None
        if self._store is None:
            return
        self.flush()
        # waiting (in memory and on disk), plus any handed out and never acknowledged
        saved = len(self._rows) + sum(self._spilled.values())
        self._set("scheduler/saved", saved)
        lost = self._writes.report()  # what was not written: logged and counted there
        if saved and not lost:
            logger.info("--jobdir %s: %d requests kept for the next run", self.jobdir, saved)
        elif not lost:
            logger.info("--jobdir %s: the crawl is complete, nothing is left to fetch. "
                        "Running it again with this directory skips every page already "
                        "crawled (only start URLs the spider marks dont_filter, as the "
                        "default start_requests() does, are fetched again); to crawl "
                        "everything again, use a new directory", self.jobdir)
        self._store.close()
        self._store = None
        self._unlock()

    def _count(self, key, count=1):
        if self.stats is not None:
            self.stats.inc_value(key, count)

    def _set(self, key, value):
        if self.stats is not None:
            self.stats.set_value(key, value)

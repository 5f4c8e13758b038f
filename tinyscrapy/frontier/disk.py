"""
L{DiskScheduler}: the in-memory frontier, mirrored in SQLite so that a crawl can pause
(Ctrl-C) and resume (the same command again, with the same C{--jobdir DIR}).

Each spider keeps its frontier in its own directory, C{DIR/<spider name>/} (so one
C{--jobdir} serves every spider of a C{run}, and a spider resumes the same way whether it
ran alone or with others). C{DIR/<spider name>/lock} is held (C{flock}) while a crawl uses
it: a second process on the same directory stops at once with a usage error.

The slot-aware queues of L{tinyscrapy.scheduler.Scheduler} stay the working structure;
C{DIR/<spider name>/frontier.sqlite} holds a copy of what a new run needs:

    - C{requests}: every request enqueued and not yet acknowledged (id, data only, by
      L{tinyscrapy.frontier.codec});
    - C{seen}: the fingerprints of every request admitted (signed 64-bit integers);
    - C{meta}: the spider the directory belongs to, and the codec's format.

The directories are made C{0700} and the files C{0600}: the stored requests keep their
headers (cookies, credentials) in plain text.

A request is acknowledged (deleted) in L{DiskScheduler.request_done}, which the engine
calls once its callback finished and what it yielded is enqueued. A pause or a crash in
between replays it on the next run: delivery is at least once.

Writes are batched: L{DiskScheduler.enqueue_request} and L{DiskScheduler.request_done}
only buffer, and L{DiskScheduler.flush} writes the buffer in one transaction, every
C{FLUSH_INTERVAL} seconds on a C{LoopingCall} and at close. A child's insert is therefore
written in the same transaction as its parent's delete, or an earlier one: a crash can
lose at most the last half second of work, never a request. A request acknowledged before
its insert was written is never written at all. A write that fails is tried again at the
next flush, except a constraint violation (the file changed under us): that one stops the
writes and closes the crawl, and the close says how much was not written.

Everything is synchronous (SQLite from the standard library, on the reactor thread): no
method returns a Deferred. Loading a large directory at L{DiskScheduler.open} takes a
moment once; a flush of thousands of rows is one C{executemany} per table.
"""

import gc
import logging
import os
import sqlite3

from twisted.internet.task import LoopingCall

from tinyscrapy.errors import UnserializableRequest, UsageError
from tinyscrapy.frontier.codec import FORMAT, is_old_format, request_from_bytes, request_to_bytes
from tinyscrapy.frontier.jobdir import (
    FRONTIER,
    lock_jobdir,
    make_private_dir,
    make_private_file,
    spider_jobdir,
)
from tinyscrapy.scheduler import Scheduler

logger = logging.getLogger(__name__)

FILENAME = FRONTIER
FLUSH_INTERVAL = 0.5  # seconds
MAX_FLUSH_FAILURES = 3  # writes that fail in a row before the crawl stops (jobdir_error)
MIN_FREE_BYTES = 1 << 20  # less free space than this when opening: a usage error
LOAD_CHUNK = 10000  # rows read at once while loading
_SIGN = 1 << 63
_MASK = (1 << 64) - 1
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS requests (id INTEGER PRIMARY KEY, data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS seen (fp INTEGER PRIMARY KEY) WITHOUT ROWID",
)


def _signed(fingerprint):
    """SQLite integers are signed 64-bit: store C{2**63} and above as negatives."""
    return fingerprint - (1 << 64) if fingerprint >= _SIGN else fingerprint


def _check_free_space(directory):
    """@raise UsageError: the filesystem of C{directory} is (nearly) full."""
    try:
        info = os.statvfs(directory)
    except (OSError, AttributeError):  # not POSIX: the first write will tell
        return
    free = info.f_bavail * info.f_frsize
    if free < MIN_FREE_BYTES:
        raise UsageError(f"--jobdir {directory}: its filesystem is full ({free} bytes "
                         "free): free some space or give a directory elsewhere")


def _chunks(cursor):
    """The rows of C{cursor}, C{LOAD_CHUNK} at a time (a list each)."""
    while True:
        rows = cursor.fetchmany(LOAD_CHUNK)
        if not rows:
            return
        yield rows


class DiskScheduler(Scheduler):
    """
    A L{Scheduler} whose waiting requests and seen set persist in C{jobdir}.

    @ivar jobdir: the directory (created if missing).
    @ivar resumed: how many waiting requests L{open} loaded.
    """

    def __init__(self, jobdir, stats=None, ledger=None, **kwargs):
        super().__init__(**kwargs)
        self.jobdir = jobdir
        self.stats = stats
        self.ledger = ledger
        self.spider = None
        self.resumed = 0
        self._db = None
        self._rows = {}  # request -> its row id, until acknowledged
        self._next_id = 1
        self._inserts = {}  # row id -> data, not yet written (in enqueue order)
        self._new_seen = []
        self._deletes = []
        self._lock = None  # the JobdirLock while connected
        self._closing = False
        self._write_error = None  # the error that stopped the writes
        self._failures = 0  # writes failed in a row
        self.crawler = None  # set by from_crawler: closed when the writes stop
        self._flusher = LoopingCall(self.flush)
        self._flusher.clock = self.clock

    @classmethod
    def from_crawler(cls, crawler):
        """Use C{JOBDIR/<spider name>}, checked now, so that a bad directory stops the
        command before the crawl."""
        spider = crawler.spider
        name = spider.name if spider is not None else crawler.spidercls.name
        scheduler = cls(spider_jobdir(crawler.settings.get("JOBDIR"), name),
                        stats=crawler.stats, ledger=crawler.ledger,
                        slots=getattr(crawler, "slots", None), clock=crawler.reactor)
        scheduler.crawler = crawler
        scheduler.connect(name)
        return scheduler

    def connect(self, spider_name):
        """
        Open (or create) C{jobdir}, lock it, and open its database, for the spider
        C{spider_name}.

        @raise UsageError: the directory cannot be used (a file, not writable, not our
            database), another process uses it, or it belongs to another spider.
        """
        if self._db is not None:
            return
        if os.path.exists(self.jobdir) and not os.path.isdir(self.jobdir):
            raise UsageError(f"--jobdir {self.jobdir}: cannot use it (a file, not a directory)")
        make_private_dir(self.jobdir, parent_too=True)
        _check_free_space(self.jobdir)
        self._lock = lock_jobdir(self.jobdir)
        try:
            self._db = self._open_database(spider_name)
        finally:
            if self._db is None:
                self._unlock()

    def _unlock(self):
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def _open_database(self, spider_name):
        """@return: the connection to C{jobdir}'s database, which belongs to C{spider_name}.
        @raise UsageError: it cannot be opened or belongs to another spider."""
        path = os.path.join(self.jobdir, FILENAME)
        for each in (path, path + "-wal", path + "-shm"):  # SQLite gives its -wal and -shm
            if each == path or os.path.exists(each):  # files the mode of the database
                make_private_file(each)
        try:
            db = sqlite3.connect(path, isolation_level=None)
        except sqlite3.Error as e:
            raise UsageError(f"--jobdir {self.jobdir}: cannot use it ({e})") from None
        try:
            db.execute("PRAGMA journal_mode=WAL")  # durable at each commit, for a crash
            db.execute("PRAGMA synchronous=NORMAL")  # (not for a power loss: docs)
            for statement in _SCHEMA:
                db.execute(statement)
            new = db.execute("SELECT count(*) FROM meta").fetchone()[0] == 0
            db.execute("INSERT OR IGNORE INTO meta VALUES ('spider', ?)", (spider_name,))
            if new:
                db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
            (owner,) = db.execute("SELECT value FROM meta WHERE key = 'spider'").fetchone()
            # a write now, so that a directory that cannot be written stops the start
            db.execute("INSERT OR REPLACE INTO meta VALUES ('opened_by', ?)",
                       (str(os.getpid()),))
            stored_format = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            first = db.execute("SELECT data FROM requests ORDER BY id LIMIT 1").fetchone()
        except sqlite3.Error as e:
            db.close()
            raise UsageError(f"--jobdir {self.jobdir}: cannot use it ({e})") from None
        if owner != spider_name:
            db.close()
            raise UsageError(f"--jobdir {self.jobdir} holds the frontier of spider {owner!r}, "
                             f"not {spider_name!r}: give another directory")
        if stored_format is None or stored_format[0] != FORMAT \
                or (first is not None and is_old_format(first[0])):
            db.close()
            raise UsageError(f"--jobdir {self.jobdir} was written by an older tinyscrapy "
                             "(pickled requests, which this version never loads): delete "
                             "the directory, or give a new one, and start the crawl again")
        return db

    def open(self, spider):
        """Load the seen set and the waiting requests; start the flushes. Returns None."""
        self.spider = spider
        self.connect(spider.name)
        db = self._db
        (stored,) = db.execute("SELECT count(*) FROM requests").fetchone()
        (fingerprints,) = db.execute("SELECT count(*) FROM seen").fetchone()
        if stored + fingerprints >= LOAD_CHUNK:  # a moment (some 50,000 requests a second)
            logger.info("loading --jobdir %s: %d requests, %d seen ...", self.jobdir,
                        stored, fingerprints)
        collecting = gc.isenabled()
        gc.disable()  # hundreds of thousands of new objects: no collections half-way
        try:
            self._load(db, spider)
        finally:
            if collecting:
                gc.enable()
        if self.resumed or len(self.seen):
            logger.info("resuming: %d requests waiting, %d seen (--jobdir %s)",
                        self.resumed, len(self.seen), self.jobdir)
        self._set("scheduler/resumed", self.resumed)
        if self.ledger is not None:
            self.ledger.keep_pending()
        self._flusher.start(FLUSH_INTERVAL, now=False)

    def _load(self, db, spider):
        """Fill the seen set and queue the stored requests, C{LOAD_CHUNK} rows at a time."""
        seen = self.seen
        for rows in _chunks(db.execute("SELECT fp FROM seen")):
            for (fingerprint,) in rows:
                seen.add(fingerprint & _MASK)  # stored signed (see _signed)
        for rows in _chunks(db.execute("SELECT id, data FROM requests ORDER BY id")):
            for row, data in rows:
                try:
                    request = request_from_bytes(data, spider)
                except Exception as e:
                    logger.error("--jobdir %s: dropping stored request %d: %s",
                                 self.jobdir, row, e)
                    self._deletes.append(row)
                    self._count("scheduler/unloadable")
                    continue
                self._restore(request, row)
            self._next_id = rows[-1][0] + 1

    def _restore(self, request, row):
        """Queue a stored request again, as L{Scheduler.enqueue_request} queues one."""
        self._rows[request] = row
        self._pending += 1
        self.resumed += 1
        if self.ledger is not None:
            self.ledger.open(request)  # this run's books: it ends here like any other
        self._queue(request)

    def enqueue_request(self, request):
        """
        As L{Scheduler.enqueue_request}, and buffer the request's insert (and its new
        fingerprint) for the next flush.

        @raise UnserializableRequest: the request cannot be stored (see L{codec}); it is logged,
            counted as C{scheduler/unpersistable} and not queued, nor marked as seen.
        """
        # the duplicate check comes before the base class's, so that a request that
        # cannot be stored is not marked as seen; an admitted request pays for a second
        # fingerprint in the base class (duplicates, most of the offers, only one)
        fingerprint = self.fingerprint(request)
        new = fingerprint not in self.seen
        if not new and not request.dont_filter:
            self._duplicates += 1
            return False
        request.fingerprint = fingerprint
        try:
            data = request_to_bytes(request, self.spider)
        except UnserializableRequest as e:
            logger.error("%s", e)
            self._count("scheduler/unpersistable")
            raise
        super().enqueue_request(request)
        row = self._next_id
        self._next_id += 1
        self._rows[request] = row
        self._inserts[row] = data
        if new:
            self._new_seen.append(_signed(fingerprint))
        return True

    def request_done(self, request):
        """
        Acknowledge C{request} and commit at once, with what it yielded (one small
        transaction a page, some 40 microseconds in WAL mode): a C{kill -9} then repeats
        at most the requests in flight. The engine calls it after the page's items are
        in the feeds, so a feed line is always written before its page's acknowledgement.
        """
        row = self._rows.pop(request, None)
        if row is None:
            return
        if self._inserts.pop(row, None) is None:
            self._deletes.append(row)
        self.flush()

    def flush(self):
        """
        Write the buffered inserts, fingerprints and deletes in one transaction.

        A failed write (a full disk) is logged and counted; the buffer is kept and the
        next flush tries again. After C{MAX_FLUSH_FAILURES} failures in a row, or at once
        for a constraint violation (C{sqlite3.IntegrityError}: the file was changed by
        someone else, so our row ids collide), the writes stop and the crawl closes with
        the reason C{jobdir_error}.

        @return: how many rows were written (0 when nothing was buffered or it failed).
        """
        inserts, seen, deletes = self._inserts, self._new_seen, self._deletes
        if self._db is None or self._write_error is not None \
                or not (inserts or seen or deletes):
            return 0
        db = self._db
        try:
            db.execute("BEGIN")
            if inserts:
                db.executemany("INSERT INTO requests (id, data) VALUES (?, ?)",
                               inserts.items())
            if seen:
                db.executemany("INSERT OR IGNORE INTO seen (fp) VALUES (?)",
                               [(fp,) for fp in seen])
            if deletes:
                db.executemany("DELETE FROM requests WHERE id = ?",
                               [(row,) for row in deletes])
            db.execute("COMMIT")
        except sqlite3.Error as e:
            if db.in_transaction:
                db.execute("ROLLBACK")
            self._count("scheduler/flush_errors")
            self._failures += 1
            if isinstance(e, sqlite3.IntegrityError) or self._failures >= MAX_FLUSH_FAILURES:
                self._stop_writing(e)
            else:
                logger.error("--jobdir %s: cannot write the frontier (will try again): %s",
                             self.jobdir, e)
            return 0
        self._failures = 0
        written = len(inserts) + len(seen) + len(deletes)
        self._inserts, self._new_seen, self._deletes = {}, [], []
        return written

    def _stop_writing(self, error):
        """A write that can never succeed: stop the flushes, and close the crawl."""
        self._write_error = error
        if isinstance(error, sqlite3.IntegrityError):
            logger.error("--jobdir %s: the frontier on disk no longer matches this crawl "
                         "(%s; was it used by another process?): no more writes, the crawl "
                         "stops", self.jobdir, error)
        else:
            logger.error("--jobdir %s: cannot write the frontier (%s), %d times in a row: "
                         "no more writes, the crawl stops (jobdir_error)", self.jobdir,
                         error, self._failures)
        if self._flusher.running:
            self._flusher.stop()
        engine = getattr(self.crawler, "engine", None)
        if engine is not None and self._db is not None:
            engine.stop_for_error("jobdir_error")

    def unwritten(self):
        """@return: how many buffered operations (inserts, fingerprints, deletes) are not
        on disk yet."""
        return len(self._inserts) + len(self._new_seen) + len(self._deletes)

    def close(self, reason):
        """Stop the flushes, write what is buffered, close the database and release the
        directory. Returns None."""
        self._closing = True
        super().close(reason)
        if self._flusher.running:
            self._flusher.stop()
        if self._db is None:
            return
        self.flush()
        saved = len(self._rows)  # waiting, plus any handed out and never acknowledged
        self._set("scheduler/saved", saved)
        lost = self.unwritten()
        if lost:
            self._set("scheduler/unwritten", lost)
            logger.error("--jobdir %s: %d frontier operations were NOT written (%d new "
                         "requests, %d fingerprints, %d acknowledgements): the next run with "
                         "this directory misses those requests and fetches the acknowledged "
                         "ones again", self.jobdir, lost, len(self._inserts),
                         len(self._new_seen), len(self._deletes))
        elif saved:
            logger.info("--jobdir %s: %d requests kept for the next run", self.jobdir, saved)
        else:
            logger.info("--jobdir %s: nothing left waiting; a run with this directory again "
                        "fetches only its start requests that have dont_filter (those of the "
                        "default start_requests() do), and no page already seen", self.jobdir)
        self._db.close()
        self._db = None
        self._unlock()

    def _count(self, key):
        if self.stats is not None:
            self.stats.inc_value(key)

    def _set(self, key, value):
        if self.stats is not None:
            self.stats.set_value(key, value)

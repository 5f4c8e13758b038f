"""
L{DiskStore}: the SQLite file of a C{--jobdir} spider directory, C{frontier.sqlite}, and
the few statements L{tinyscrapy.frontier.disk.DiskScheduler} runs on it; and
L{PendingWrites}, what the frontier has to write and has not committed yet.

Tables:

    - C{requests}: every request enqueued and not yet acknowledged: its row id (the
      enqueue order), its download slot (host), its priority, and its data (written by
      L{tinyscrapy.frontier.codec}); an index on (slot, priority, id) pages a host's
      waiting requests in, best first;
    - C{seen}: the fingerprints of every request admitted (signed 64-bit integers),
      appended: a plain rowid table, no index on the fingerprint. The in-memory seen set
      is the index (it is loaded whole at the open, and a fingerprint is written only
      when it is new to it); an index here would cost every commit a random page for
      each new fingerprint (docs/frontier.md has the figures);
    - C{meta}: the spider the directory belongs to, and the codec's format.

The database runs in WAL mode with C{synchronous=NORMAL}: a commit survives the process
being killed, not a power loss (docs/frontier.md). The file is made C{0600} before SQLite
opens it, and SQLite gives its C{-wal} and C{-shm} files the same mode.

L{PendingWrites} holds three buffers, committed together in one transaction by
L{PendingWrites.commit}: the new requests' rows, the new fingerprints, and the
acknowledged rows to delete. A commit that fails (a full disk) is logged and counted as
C{scheduler/flush_errors}; the buffers are kept and the next commit tries again. After
C{MAX_FLUSH_FAILURES} failures in a row, or at once for a constraint violation
(C{sqlite3.IntegrityError}: the file was changed by someone else, so our row ids collide),
the writes stop for good and the frontier is told (it closes the crawl with
C{jobdir_error}). L{PendingWrites.report} says at close what was never written.
"""

import logging
import os
import sqlite3

from tinyscrapy.exceptions import UsageError
from tinyscrapy.frontier.codec import FORMAT, is_old_format
from tinyscrapy.frontier.jobdir import make_private_file

CHUNK = 10000  # rows read at once
_SIGN = 1 << 63
_MASK = (1 << 64) - 1
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS requests (id INTEGER PRIMARY KEY, slot TEXT NOT NULL, "
    "priority INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS requests_by_slot ON requests (slot, priority DESC, id)",
    # appended, not indexed (above); an older directory's "WITHOUT ROWID" table still works
    "CREATE TABLE IF NOT EXISTS seen (fp INTEGER NOT NULL)",
    # the dead letters: stored requests that do not load (crafted, damaged), moved out of
    # the queue's way with the reason, for a person to look at
    "CREATE TABLE IF NOT EXISTS dead (id INTEGER PRIMARY KEY, slot TEXT, data BLOB, "
    "reason TEXT)",
)


def signed(fingerprint):
    """SQLite integers are signed 64-bit: store C{2**63} and above as negatives."""
    return fingerprint - (1 << 64) if fingerprint >= _SIGN else fingerprint


class DiskStore:
    """
    One spider's C{frontier.sqlite}.

    @ivar path: the database file.
    """

    def __init__(self, directory, spider_name):
        """
        Open (or create) the database of C{spider_name} in C{directory}, and write to it
        once, so that a directory that cannot be written stops the start.

        @raise UsageError: it cannot be opened or written, belongs to another spider, or
            was written by an older tinyscrapy.
        """
        self.directory = directory
        self.path = path = os.path.join(directory, "frontier.sqlite")
        for each in (path, path + "-wal", path + "-shm"):
            if each == path or os.path.exists(each):
                make_private_file(each)
        try:
            self.db = sqlite3.connect(path, isolation_level=None)
        except sqlite3.Error as e:
            raise UsageError(f"--jobdir {directory}: cannot use it ({e})") from None
        try:
            self._check(spider_name)
        except BaseException:
            self.db.close()
            raise

    def _check(self, spider_name):
        db, directory = self.db, self.directory
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            old = db.execute("SELECT name FROM sqlite_master WHERE name = 'requests'"
                             ).fetchone() is not None and not self._has_slots()
            if not old:
                for statement in _SCHEMA:
                    db.execute(statement)
                new = db.execute("SELECT count(*) FROM meta").fetchone()[0] == 0
                db.execute("INSERT OR IGNORE INTO meta VALUES ('spider', ?)", (spider_name,))
                if new:
                    db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
                owner = db.execute("SELECT value FROM meta WHERE key = 'spider'").fetchone()[0]
                stored = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
                first = db.execute("SELECT data FROM requests LIMIT 1").fetchone()
                old = stored is None or stored[0] != FORMAT \
                    or (first is not None and is_old_format(first[0]))
        except sqlite3.Error as e:
            raise UsageError(f"--jobdir {directory}: cannot use it ({e})") from None
        if old:
            raise UsageError(f"--jobdir {directory} was written by an older tinyscrapy "
                             "(pickled requests, which this version never loads): delete "
                             "the directory, or give a new one, and start the crawl again")
        if owner != spider_name:
            raise UsageError(f"--jobdir {directory} holds the frontier of spider {owner!r}, "
                             f"not {spider_name!r}: give another directory")
        try:  # a write now: a directory that cannot be written stops the start
            db.execute("INSERT OR REPLACE INTO meta VALUES ('opened_by', ?)",
                       (str(os.getpid()),))
        except sqlite3.Error as e:
            raise UsageError(f"--jobdir {directory}: cannot use it ({e})") from None

    def _has_slots(self):
        columns = [row[1] for row in self.db.execute("PRAGMA table_info(requests)")]
        return "slot" in columns

    # reading, at open

    def counts(self):
        """@return: (waiting requests, seen fingerprints, the next free row id)."""
        db = self.db
        (stored, last) = db.execute("SELECT count(*), max(id) FROM requests").fetchone()
        (fingerprints,) = db.execute("SELECT count(*) FROM seen").fetchone()
        return stored, fingerprints, (last or 0) + 1

    def fingerprints(self):
        """The stored fingerprints (unsigned), in chunks of C{CHUNK} (a list each); a value
        that is not an integer (crafted or damaged: L{bad_fingerprints}) is left out."""
        cursor = self.db.execute("SELECT fp FROM seen WHERE typeof(fp) = 'integer'")
        while True:
            rows = cursor.fetchmany(CHUNK)
            if not rows:
                return
            yield [fp & _MASK for (fp,) in rows]

    def bad_fingerprints(self):
        """@return: how many stored fingerprints are not integers (never written by us)."""
        return self.db.execute(
            "SELECT count(*) FROM seen WHERE typeof(fp) != 'integer'").fetchone()[0]

    def slot_counts(self):
        """@return: C{{slot: how many requests wait}} (one walk of the index)."""
        return dict(self.db.execute("SELECT slot, count(*) FROM requests GROUP BY slot"))

    def best_rows(self, slot, exclude, limit):
        """
        @return: up to C{limit} C{(id, data)} rows of C{slot}, by priority (highest first)
            then enqueue order, leaving out the ids in C{exclude} (those already in memory
            or in flight: a bounded few, which the index walk steps over).
        """
        if exclude:
            marks = ",".join("?" * len(exclude))
            return self.db.execute(
                f"SELECT id, data FROM requests WHERE slot = ? AND id NOT IN ({marks}) "
                "ORDER BY priority DESC, id LIMIT ?", (slot, *exclude, limit)).fetchall()
        return self.db.execute("SELECT id, data FROM requests WHERE slot = ? "
                               "ORDER BY priority DESC, id LIMIT ?", (slot, limit)).fetchall()

    # writing

    def write(self, inserts, seen, deletes, dead=()):
        """
        Write in one transaction: C{inserts} (a dict row id -> (slot, priority, data)),
        C{seen} (signed fingerprints), C{dead} (C{(row id, reason)}: copied to the C{dead}
        table), C{deletes} (row ids).

        @raise sqlite3.Error: nothing was written (a full disk, a changed file).
        """
        db = self.db
        try:
            db.execute("BEGIN")
            if inserts:
                db.executemany("INSERT INTO requests (id, slot, priority, data) "
                               "VALUES (?, ?, ?, ?)",
                               [(row, *fields) for row, fields in inserts.items()])
            if seen:
                db.executemany("INSERT OR IGNORE INTO seen (fp) VALUES (?)",
                               [(fp,) for fp in seen])
            if dead:
                db.executemany("INSERT OR REPLACE INTO dead (id, slot, data, reason) "
                               "SELECT id, slot, data, ? FROM requests WHERE id = ?",
                               [(reason, row) for row, reason in dead])
            if deletes:
                db.executemany("DELETE FROM requests WHERE id = ?",
                               [(row,) for row in deletes])
            db.execute("COMMIT")
        except sqlite3.Error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def close(self):
        self.db.close()

# the frontier's own logger: one name to filter or silence for everything --jobdir logs
logger = logging.getLogger("tinyscrapy.frontier.disk")

MAX_FLUSH_FAILURES = 3  # writes that fail in a row before the crawl stops (jobdir_error)


class PendingWrites:
    """
    The frontier's writes not yet committed.

    @ivar inserts: row id -> C{(slot, priority, data)}, the new requests.
    @ivar seen: the new fingerprints (signed, as stored).
    @ivar deletes: the row ids acknowledged (or moved to the C{dead} table).
    @ivar dead: C{(row id, reason)} of the rows that do not load, to the C{dead} table.
    @ivar error: the error that stopped the writes, or None while they go on.
    """

    def __init__(self, jobdir, stats=None, stopped=None):
        """
        @param stopped: called with no argument when the writes stop for good.
        """
        self.jobdir = jobdir
        self.stats = stats
        self.stopped = stopped
        self.inserts = {}
        self.seen = []
        self.deletes = []
        self.dead = []
        self.error = None
        self.failures = 0  # commits failed in a row

    def __len__(self):
        """How many operations (inserts, fingerprints, deletes) are not on disk yet."""
        return len(self.inserts) + len(self.seen) + len(self.deletes)

    def commit(self, store):
        """
        Write the buffers to C{store} (a L{tinyscrapy.frontier.diskstore.DiskStore}) in
        one transaction, and empty them.

        @return: how many operations were written (0 when nothing was buffered, the
            writes stopped, or this commit failed).
        """
        if self.error is not None or not (self.inserts or self.seen or self.deletes):
            return 0
        try:
            store.write(self.inserts, self.seen, self.deletes, self.dead)
        except sqlite3.Error as e:
            if self.stats is not None:
                self.stats.inc_value("scheduler/flush_errors")
            self.failures += 1
            if isinstance(e, sqlite3.IntegrityError) or self.failures >= MAX_FLUSH_FAILURES:
                self._stop(e)
            else:
                logger.error("--jobdir %s: cannot write the frontier (will try again): %s",
                             self.jobdir, e)
            return 0
        self.failures = 0
        written = len(self)
        self.inserts, self.seen, self.deletes, self.dead = {}, [], [], []
        return written

    def _stop(self, error):
        """A write that can never succeed: no more writes; the frontier is told."""
        self.error = error
        if isinstance(error, sqlite3.IntegrityError):
            logger.error("--jobdir %s: the frontier on disk no longer matches this crawl "
                         "(%s; was it used by another process?): no more writes, the crawl "
                         "stops", self.jobdir, error)
        else:
            logger.error("--jobdir %s: cannot write the frontier (%s), %d times in a row: "
                         "no more writes, the crawl stops (jobdir_error)", self.jobdir,
                         error, self.failures)
        if self.stopped is not None:
            self.stopped()

    def report(self):
        """
        At close, after the last commit: log what was not written, and count it as
        C{scheduler/unwritten}. @return: how many operations were not written.
        """
        lost = len(self)
        if lost:
            if self.stats is not None:
                self.stats.set_value("scheduler/unwritten", lost)
            logger.error("--jobdir %s: %d frontier operations were NOT written (%d new "
                         "requests, %d fingerprints, %d acknowledgements): the next run with "
                         "this directory fetches those pages again, and finds their links "
                         "again (a page and what it yielded are written together)",
                         self.jobdir, lost, len(self.inserts), len(self.seen),
                         len(self.deletes))
        return lost

"""
L{PendingWrites}: what the C{--jobdir} frontier (L{tinyscrapy.frontier.disk}) has to write
and has not committed yet, and what happens when a commit fails.

Three buffers, committed together in one transaction by L{PendingWrites.commit}: the new
requests' rows, the new fingerprints, and the acknowledged rows to delete. A commit that
fails (a full disk) is logged and counted as C{scheduler/flush_errors}; the buffers are
kept and the next commit tries again. After C{MAX_FLUSH_FAILURES} failures in a row, or at
once for a constraint violation (C{sqlite3.IntegrityError}: the file was changed by
someone else, so our row ids collide), the writes stop for good and the frontier is told
(it closes the crawl with C{jobdir_error}). L{PendingWrites.report} says at close what
was never written.
"""

import logging
import sqlite3

# the frontier's own logger: one name to filter or silence for everything --jobdir logs
logger = logging.getLogger("tinyscrapy.frontier.disk")

MAX_FLUSH_FAILURES = 3  # writes that fail in a row before the crawl stops (jobdir_error)


class PendingWrites:
    """
    The frontier's writes not yet committed.

    @ivar inserts: row id -> C{(slot, priority, data)}, the new requests.
    @ivar seen: the new fingerprints (signed, as stored).
    @ivar deletes: the row ids acknowledged.
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
            store.write(self.inserts, self.seen, self.deletes)
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
        self.inserts, self.seen, self.deletes = {}, [], []
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

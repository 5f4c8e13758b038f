"""
L{RequestLedger}: proof that no request was lost.

Every request offered to the crawl opens one entry, and every entry ends in exactly one
terminal state:

    - C{handled}: downloaded, and the response handed to its callback;
    - C{duplicate}: filtered by the duplicate filter;
    - C{dropped}: refused by a rule (offsite, depth, robots, ...) or by an C{IgnoreRequest}
      a downloader middleware raised, counted by the class of the rule;
    - C{failed}: the download failed for good (after retries) or the status was refused;
    - C{cancelled}: still waiting when the crawl stopped early, or still in flight when
      the close's grace period was over (L{RequestLedger.cancel});
    - C{saved}: still waiting at close (or in flight when the grace period was over), and
      kept by a persistent frontier (C{--jobdir}) for the next run, which opens it again
      (L{RequestLedger.keep_pending});
    - C{shared}: handed to a frontier shared with other processes (C{--scheduler
      redis://}), where any process may fetch it. A request this process takes from the
      shared frontier opens a new entry here, so each process's books balance.

A redirect or a retry continues its parent's entry rather than opening a new one. A
request downloaded outside the scheduler (L{tinyscrapy.core.engine.ExecutionEngine.download}:
a media file) is an entry of its own: handled once its response is back, whatever the
status, dropped or failed otherwise. At close
L{RequestLedger.reconcile} checks C{opened == terminal + still pending + still in flight};
a difference is a request that went missing, logged as an error.
"""

import logging
from collections import Counter
from dataclasses import dataclass

logger = logging.getLogger(__name__)

TERMINAL_STATES = ("handled", "duplicate", "dropped", "failed", "cancelled", "saved",
                   "shared")


@dataclass(frozen=True)
class LedgerStatistics:
    """
    The books now. C{open} is the requests not yet ended: waiting in the frontier, or in
    flight (before the close, that is not a loss).
    """

    opened: int
    handled: int
    duplicate: int
    dropped: int
    failed: int
    cancelled: int
    open: int
    saved: int = 0
    shared: int = 0


class RequestLedger:
    """
    Counters of opened and closed entries, mirrored into the stats as C{ledger/...}.

    @ivar opened: entries opened so far.
    @ivar closed: a Counter of terminal states.
    """

    def __init__(self, stats):
        self.stats = stats
        self.opened = 0
        self.closed = Counter()
        self.pending_state = "cancelled"
        self._cancelled = set()  # requests cancelled in flight: a later close is ignored

    def open(self, request):
        """One new request was offered to the crawl."""
        self.opened += 1

    def add(self, opened, closed):
        """
        Count another process's entries into these books (a worker of C{--workers}, whose
        requests are often opened in one process and ended in another): C{opened} more
        entries, and C{closed} (state -> count) more ended. Their stats come with that
        process's own.
        """
        self.opened += opened
        self.closed.update(closed)

    def keep_pending(self):
        """
        The frontier keeps the requests still waiting at close for the next run (a
        C{--jobdir}): L{reconcile} ends their entries as C{saved}, not C{cancelled}.
        """
        self.pending_state = "saved"

    def close(self, request, state, reason=None):
        """
        The entry of C{request} ended in C{state} (one of L{TERMINAL_STATES}).

        @param reason: for C{dropped} and C{failed}, the class name of the decision or the
            failure (counted as C{ledger/STATE/REASON}).
        """
        if state not in TERMINAL_STATES:
            raise ValueError(f"unknown ledger state {state!r}")
        if self._cancelled and request in self._cancelled:
            return  # it ended when it was cancelled; its chain is only unwinding now
        self.closed[state] += 1
        self.stats.inc_value("ledger/" + state)
        if reason is not None:
            self.stats.inc_value(f"ledger/{state}/{reason}")

    def cancel(self, request):
        """
        C{request} was still in flight when the close's grace period was over: its entry
        ends now, as C{cancelled} (or C{saved}, see L{keep_pending}: a persistent frontier
        keeps what it never acknowledged), and a later L{close} of it is ignored.
        """
        self.close(request, self.pending_state)
        self._cancelled.add(request)

    def reconcile(self, pending, in_flight=0):
        """
        Check the books at close.

        @param pending: requests still in the frontier; counted as C{cancelled} (or
            C{saved}, see L{keep_pending}); None when the frontier cannot count (a
            scheduler of Scrapy's bare interface): every request neither ended nor in
            flight is taken to be in it.
        @return: how many requests went missing (0 when the books balance).
        """
        if pending is None:
            pending = max(0, self.opened - sum(self.closed.values()) - in_flight)
        if pending:
            self.closed[self.pending_state] += pending
            self.stats.inc_value("ledger/" + self.pending_state, pending)
        ended = sum(self.closed.values())
        missing = self.opened - ended - in_flight
        self.stats.set_value("ledger/opened", self.opened)
        self.stats.set_value("ledger/missing", missing)
        if missing:
            books = ", ".join(f"{state} {self.closed[state]}" for state in TERMINAL_STATES)
            what = (f"{missing} request(s) went missing" if missing > 0 else
                    f"{-missing} request(s) ended twice")
            logger.error("request ledger does not balance: %s (%d opened; ended: %s; "
                         "%d in flight)", what, self.opened, books, in_flight)
        return missing

    def statistics(self):
        """@return: a L{LedgerStatistics} of now."""
        closed = self.closed
        return LedgerStatistics(
            opened=self.opened, handled=closed["handled"], duplicate=closed["duplicate"],
            dropped=closed["dropped"], failed=closed["failed"], cancelled=closed["cancelled"],
            open=self.opened - sum(closed.values()), saved=closed["saved"],
            shared=closed["shared"])

"""
L{RequestLedger}: proof that no request was lost.

Every request offered to the crawl opens one entry, and every entry ends in exactly one
terminal state:

    - C{handled}: downloaded, and its callback (or errback) ran;
    - C{duplicate}: filtered by the duplicate filter;
    - C{dropped}: refused by a rule (offsite, depth, robots, ...), by the class of the rule;
    - C{failed}: the download failed for good (after retries) or the status was refused;
    - C{cancelled}: still waiting when the crawl stopped early (or kept for a resume).

A redirect or a retry continues its parent's entry rather than opening a new one. At close
L{RequestLedger.reconcile} checks C{opened == terminal + still pending + still in flight};
a difference is a request that went missing, logged as an error.
"""

import logging
from collections import Counter

logger = logging.getLogger(__name__)

TERMINAL_STATES = ("handled", "duplicate", "dropped", "failed", "cancelled")


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

    def open(self, request):
        """One new request was offered to the crawl."""
        self.opened += 1

    def close(self, request, state, reason=None):
        """The entry of C{request} ended in C{state} (one of L{TERMINAL_STATES})."""
        self.closed[state] += 1
        self.stats.inc_value("ledger/" + state)
        if reason is not None:
            self.stats.inc_value(f"ledger/{state}/{reason}")

    def reconcile(self, pending, in_flight=0):
        """
        Check the books at close.

        @param pending: requests still in the frontier; counted as C{cancelled}.
        @return: how many requests went missing (0 when the books balance).
        """
        if pending:
            self.closed["cancelled"] += pending
            self.stats.inc_value("ledger/cancelled", pending)
        ended = sum(self.closed.values())
        missing = self.opened - ended - in_flight
        self.stats.set_value("ledger/opened", self.opened)
        self.stats.set_value("ledger/missing", missing)
        if missing:
            logger.error("request ledger does not balance: %d opened, %d ended (%s), "
                         "%d in flight: %d request(s) went missing",
                         self.opened, ended, dict(self.closed), in_flight, missing)
        return missing

"""
The duplicate filter, as Scrapy keeps it (C{DUPEFILTER_CLASS}): L{BaseDupeFilter} is the
interface the scheduler calls, L{RFPDupeFilter} the default, which remembers the
fingerprint of every request seen in a L{FingerprintSet}, about 24 bytes each.

L{SeenUrls} is the early check of C{response.follow_all}: links whose fingerprint the
filter has already seen get no Request at all.

L{FingerprintSet}: a Python C{set} of 64-bit C{int}s costs about 90 bytes an entry (the
int object, and the table's hash and pointer at a load of two thirds); Scrapy's set of
20-byte C{bytes} costs 107. This table stores the 64-bit values themselves, 8 bytes a
cell, with open addressing and linear probing, kept at most half full: 16 to 32 bytes an
entry. The fingerprints are already uniform hashes, so their low bits index the table
directly.

It grows without stalling the caller. Doubling a table of millions of cells in one go
(allocating the new one, rehashing every value into it) would hold the reactor for a
long C{add}. Instead:

    - a table is an anonymous C{mmap} seen through a C{memoryview} of C{"Q"} cells: the
      kernel hands out its pages zeroed on first touch, so allocating the doubled table is
      immediate however large it is (an C{array} would be filled with zeros, page by page,
      at once);
    - while it grows, the old table stays as it was, read only, next to the new one; every
      C{EVERY}-th C{add} of a new value moves the next C{STEP} cells of the old table into
      the new one, and the old table is dropped once all its cells are moved. A lookup
      meanwhile looks in the new table, then in the old.

No call moves more than C{STEP} cells, and the moving ends long before the new table is
half full (it starts a quarter full and ends after C{old size * EVERY / STEP} adds, a
sixteenth of the adds until the next doubling), so there is only ever one old table.
Moving in chunks costs each cell what the one-go doubling did; a lookup while a table
moves costs one more cell read (the old table's), and a method call when that cell is
taken. The memory is what a one-go doubling held at its peak (the old table and the new,
three times the old's size), for a little longer; the per-entry cost is unchanged
(docs/performance.md has the figures).
"""

import logging
import mmap

from tinyscrapy.utils.request import as_int, request_fingerprint, url_fingerprint

logger = logging.getLogger(__name__)


class BaseDupeFilter:
    """
    Scrapy's duplicate filter interface: the scheduler asks L{request_seen} of every
    request that is not C{dont_filter}. This base one sees nothing twice (it filters
    nothing).
    """

    @classmethod
    def from_crawler(cls, crawler):
        return cls()

    def request_seen(self, request):
        """@return: True when C{request} was seen before (it is dropped)."""
        return False

    def open(self):
        """Called when the scheduler opens; may return a Deferred."""

    def close(self, reason):
        """Called when the scheduler closes; may return a Deferred."""

    def log(self, request, spider):
        """C{request} was dropped as a duplicate."""


class RFPDupeFilter(BaseDupeFilter):
    """
    The default duplicate filter: the fingerprint of every request seen (method, canonical
    URL and body, as C{REQUEST_FINGERPRINTER_CLASS} gives it), kept in a
    L{FingerprintSet} as a 64-bit C{int} each.

    Given a C{path} (a folder), it also keeps them in C{path/requests.seen}, as Scrapy's
    does (each fingerprint as its 2-byte big-endian length, then its bytes; the file is
    made private): a filter made again on the same folder has seen them. A crawl with
    C{--jobdir} keeps its seen set in the job directory's database instead
    (L{tinyscrapy.frontier.disk}).

    @ivar fingerprint: the function giving a request's fingerprint as a 64-bit C{int}.
    @ivar seen: the fingerprints seen.
    @ivar debug: log every duplicate (C{DUPEFILTER_DEBUG}), not only the first.
    """

    def __init__(self, path=None, debug=False, *, fingerprinter=None):
        self.fingerprinter = fingerprinter
        self.fingerprint = as_int(fingerprinter) if fingerprinter is not None \
            else request_fingerprint
        if type(self).request_fingerprint is not RFPDupeFilter.request_fingerprint:
            self.fingerprint = self._legacy_fingerprint  # a subclass's own (Scrapy's old way)
        self.seen = FingerprintSet()
        self.debug = debug
        self.logdupes = True
        self.file = None
        if path:
            self._open_file(path)

    @classmethod
    def from_crawler(cls, crawler):
        """The crawl's fingerprinter (C{REQUEST_FINGERPRINTER_CLASS}) decides identity;
        C{DUPEFILTER_DEBUG} logs every duplicate."""
        return cls(debug=crawler.settings.getbool("DUPEFILTER_DEBUG"),
                   fingerprinter=crawler.request_fingerprinter)

    def _open_file(self, path):
        """Read C{path/requests.seen} (made private if new), and append to it from now on.
        A truncated last record (a crash while writing) is dropped."""
        import os
        name = os.path.join(path, "requests.seen")
        fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        self.file = os.fdopen(fd, "a+b")
        self.file.seek(0)
        data = self.file.read()
        at = 0
        while at + 2 <= len(data):
            size = int.from_bytes(data[at:at + 2], "big")
            record = data[at + 2:at + 2 + size]
            if len(record) < size:
                break
            self.seen.add(int.from_bytes(record[:8], "big"))
            at += 2 + size

    def request_seen(self, request):
        """Remember C{request}'s fingerprint (also kept as C{request.fingerprint}).
        @return: True when it was seen before."""
        fingerprint = request.fingerprint = self.fingerprint(request)
        if fingerprint in self.seen:
            return True
        self.seen.add(fingerprint)
        if self.file is not None:
            self.file.write(b"\x00\x08" + fingerprint.to_bytes(8, "big"))
        return False

    def request_fingerprint(self, request):
        """C{request}'s fingerprint as hex text (Scrapy's)."""
        return self.fingerprint(request).to_bytes(8, "big").hex()

    def _legacy_fingerprint(self, request):
        return int(self.request_fingerprint(request)[:16], 16)

    @property
    def fingerprints(self):
        """The fingerprints seen, as hex text (Scrapy's, deprecated there too)."""
        return frozenset(value.to_bytes(8, "big").hex() for value in self.seen)

    def close(self, reason):
        if self.file is not None:
            self.file.close()
            self.file = None

    def log(self, request, spider):
        """C{request} was a duplicate: counted (C{dupefilter/filtered}); the first one
        logged at DEBUG, or every one with C{DUPEFILTER_DEBUG}, in Scrapy's words."""
        if self.debug:
            referer = request.headers.get("Referer")
            if isinstance(referer, bytes):
                referer = referer.decode("latin-1")
            logger.debug("Filtered duplicate request: %s (referer: %s)", request, referer)
        elif self.logdupes:
            logger.debug("Filtered duplicate request: %s - no more duplicates will be shown "
                         "(see DUPEFILTER_DEBUG to show all duplicates)", request)
            self.logdupes = False
        stats = getattr(getattr(spider, "crawler", None), "stats", None)
        if stats is not None:
            stats.inc_value("dupefilter/filtered")

    def __len__(self):
        return len(self.seen)


class SeenUrls:
    """
    The early duplicate check of L{HttpResponse.follow_all}: links whose fingerprint the
    scheduler has already seen get no Request at all (where most of a crawl's duplicates
    die cheaply). Counted as C{dupefilter/skipped_early}; never in the ledger.

    @ivar seen: the scheduler's set of fingerprints (read, never written).
    """

    # most duplicate links of a site are the same few strings (menus, pagers, footers):
    # a bounded cache of URL strings already known as seen skips their fingerprint
    RECENT_MAX = 20_000

    def __init__(self, seen, stats):
        self.seen = seen
        self.stats = stats
        self._recent = set()

    @classmethod
    def of(cls, scheduler, stats):
        """
        The check for C{scheduler}, or None when it cannot be done locally: a backend
        with its own fingerprint function, or without a local C{seen} set.
        """
        dupefilter = getattr(scheduler, "dupefilter", None)
        if dupefilter is not None and type(dupefilter).request_seen is not \
                RFPDupeFilter.request_seen:  # a filter of the user's own decides alone
            return None
        seen = getattr(scheduler, "seen", None)
        if getattr(scheduler, "fingerprint", None) is not request_fingerprint \
                or not isinstance(seen, (set, frozenset, FingerprintSet)):
            return None
        return cls(seen, stats)

    def unseen(self, urls):
        """
        @param urls: absolute URLs of GET requests without a body.
        @return: those not seen by the scheduler, each canonical URL once, in order.
        """
        seen, recent = self.seen, self._recent
        kept = []
        on_page = set()
        for url in urls:
            if url in recent:
                continue
            fingerprint = url_fingerprint(url)
            if fingerprint in seen:
                if len(recent) >= self.RECENT_MAX:
                    recent.clear()
                recent.add(url)
                continue
            if fingerprint in on_page:
                continue
            on_page.add(fingerprint)
            kept.append(url)
        skipped = len(urls) - len(kept)
        if skipped:
            self.stats.inc_value("dupefilter/skipped_early", skipped)
        return kept

_EMPTY = 0
STEP = 2048  # old cells moved into the new table at once while it grows (some 0.1 ms)
EVERY = 64  # ... by every EVERY-th add: 32 cells an add, on average


def _table(size):
    """A zeroed table of C{size} 64-bit cells, paged in only as the cells are touched."""
    return memoryview(mmap.mmap(-1, 8 * size)).cast("Q")


class FingerprintSet:
    """
    A growable open-addressing hash set of non-zero 64-bit integers.

    Zero marks an empty cell, so a fingerprint of 0 is stored as 1 (one more collision in
    2**64, which is nothing beside the chance of two URLs sharing a fingerprint).

    @ivar moved: while the table grows, how many cells of the old table have been moved
        (None otherwise).
    """

    __slots__ = ("_table", "_mask", "_count", "_old", "_old_mask", "moved")

    def __init__(self, capacity=1 << 12):
        size = 1
        while size < capacity * 2:
            size <<= 1
        self._table = _table(size)
        self._mask = size - 1
        self._count = 0
        self._old = None  # the table being moved out of, while growing
        self._old_mask = 0
        self.moved = None

    def __len__(self):
        return self._count

    def __contains__(self, fingerprint):
        fingerprint = fingerprint or 1
        index = fingerprint & self._mask
        value = self._table[index]
        if value == fingerprint:
            return True
        if value != _EMPTY and self._table[self._probe(fingerprint, index)] != _EMPTY:
            return True
        old = self._old
        return old is not None and old[fingerprint & self._old_mask] != _EMPTY \
            and self._in_old(fingerprint)

    def add(self, fingerprint):
        """Add C{fingerprint}. @return: True if it was new, False if already present."""
        fingerprint = fingerprint or 1
        table = self._table
        index = fingerprint & self._mask
        value = table[index]
        if value == fingerprint:
            return False
        if value != _EMPTY:
            index = self._probe(fingerprint, index)
            if table[index] != _EMPTY:
                return False
        if self._old is not None:
            if self._old[fingerprint & self._old_mask] != _EMPTY \
                    and self._in_old(fingerprint):
                return False
            table[index] = fingerprint
            self._count += 1
            if not self._count % EVERY:
                self._move()
        else:
            table[index] = fingerprint
            self._count += 1
        if self._count * 2 > self._mask:
            self._grow()
        return True

    def _probe(self, fingerprint, index):
        """
        Linear probing on from the taken cell C{index}: the cell holding C{fingerprint},
        else the empty cell where it goes. L{__contains__} and L{add} look at the home cell
        themselves and call this only when another value sits there: the call costs more
        than that first look, which is all most lookups need in a table at most half full.
        """
        table, mask = self._table, self._mask
        while True:
            index = (index + 1) & mask
            value = table[index]
            if value == fingerprint or value == _EMPTY:
                return index

    def _in_old(self, fingerprint):
        """Is C{fingerprint} in the old table? (It is never written while it is moved.)"""
        old, mask = self._old, self._old_mask
        index = fingerprint & mask
        while True:
            value = old[index]
            if value == fingerprint:
                return True
            if value == _EMPTY:
                return False
            index = (index + 1) & mask

    def _grow(self):
        """Start moving into a table twice the size: every C{EVERY}-th L{add} then moves
        C{STEP} cells (a table still moving is finished first, which the sizes never
        need)."""
        while self._old is not None:
            self._move()
        self._old, self._old_mask = self._table, self._mask
        size = (self._mask + 1) * 2
        self._table = _table(size)
        self._mask = size - 1
        self.moved = 0

    def _move(self):
        """Move the next C{STEP} cells of the old table; drop it after its last cell."""
        start = self.moved
        end = start + STEP
        table, mask = self._table, self._mask
        for value in self._old[start:end]:
            if value != _EMPTY:  # not in the new table: add() looked in the old first
                index = value & mask
                while table[index] != _EMPTY:
                    index = (index + 1) & mask
                table[index] = value
        if end > self._old_mask:
            self._old = None
            self._old_mask = 0
            self.moved = None
        else:
            self.moved = end

    def __iter__(self):
        table = self._table
        old, moved = self._old, self.moved
        yield from (value for value in table if value != _EMPTY)
        if old is not None:  # the cells not moved yet (the moved ones are in the new table)
            yield from (value for value in old[moved:] if value != _EMPTY)

"""
Python's cyclic garbage collector, set for a crawl: L{tune_for_crawl}, which
L{tinyscrapy.crawler.CrawlerProcess.start} calls, and L{freeze} / L{thaw}, which keep a
large in-memory frontier out of full collections.

Reference counting frees almost everything a crawl makes (Requests, responses, Deferreds,
parsed pages) as soon as the last reference goes; the cyclic collector is there for the
rest, and it walks live objects to find them. Left as Python sets it, it costs a crawl
twice what it needs to, for two reasons:

- A full collection walks every object alive, and most of those were made before the
  first request (modules, classes, functions, settings) and live as long as the process.
  C{gc.freeze()} moves them to a permanent generation the collector never walks.
- The youngest generation is collected every 700 allocations, so a page's short-lived
  objects (its links, its Requests) are walked, and the survivors moved to an older
  generation, several times a page. Collecting it every L{YOUNG_THRESHOLD} allocations
  lets reference counting free most of them first.

Only L{CrawlerProcess} does this, since it owns the process; L{CrawlerRunner} runs inside
someone else's program and leaves the collector alone. With the collector disabled
(C{gc.disable()} or a threshold of 0), nothing is changed.

Keeping a large in-memory frontier out of CPython's full garbage collections.

CPython's cyclic garbage collector is generational, and its full (oldest generation)
collection stops the program to walk every tracked object alive: each of a million
waiting requests is two (the L{Request}, and the bound method that is its callback), so a
large frontier makes each full collection a stall of the reactor that nothing else in the
crawl causes (docs/performance.md has the figures).
CPython runs one each time the objects that survived since the last one reach a quarter
of those it found then, so a frontier that keeps growing meets one again and again.

Waiting requests are exactly what a generational collector need not look at: they live
long, and they form no garbage cycles while they wait (a request refers to its URL, its
callback, its C{meta}; nothing refers back to it but its queue). So the in-memory
priority queue (L{tinyscrapy.pqueues.SlotAwarePriorityQueue}) calls L{freeze} each time the
requests waiting in it have grown
by C{STEP} since it last did (C{STEP}, then 2 C{STEP}, ...): a full collection first
(it walks only what is not frozen yet, some C{STEP} requests, so it is as short as the
collections CPython would run anyway), then C{gc.freeze()}, which moves every object
alive into the permanent generation, at no cost, where no collection looks again. Every
full collection from then on walks only what came after.

Why this leaks nothing:

    - a frozen object is still freed by reference counting when its last reference goes:
      a request handed out, downloaded and done is freed as it was;
    - only garbage I{cycles} among frozen objects wait. The collection just before each
      freeze means nothing already garbage is frozen; what is frozen alive and later
      becomes a cycle is what was in flight at that instant besides the requests (the
      page being parsed, a few downloads), so at most that much for each C{STEP} the
      frontier grew;
    - when the frontier has drained to under C{STEP // 2} waiting requests, or its
      scheduler closes, L{thaw} calls C{gc.unfreeze()}: the permanent generation goes
      back to the oldest one, and the next full collection (walking what is still alive
      of it: few requests by then) frees those cycles.

Freezing is process-wide, so holders are counted: the heap is thawed when the last
scheduler that froze it lets go. Nothing is frozen when the program disabled the collector
(C{gc.disable()}: it chose its own policy), and a program that froze the heap itself
(C{gc.freeze()} before the first crawl) is never thawed by this module. Python 3.14's
incremental collector makes this unneeded; it stays harmless there.
"""

import gc

YOUNG_THRESHOLD = 20000  # allocations between collections of the youngest generation


def tune_for_crawl():
    """Freeze what exists now and collect the youngest generation less often."""
    young, middle, old = gc.get_threshold()
    if not gc.isenabled() or young == 0:
        return
    gc.freeze()
    if young < YOUNG_THRESHOLD:
        gc.set_threshold(YOUNG_THRESHOLD, middle, old)

STEP = 100000  # waiting requests between two freezes (a collection of about 0.05 s)

_holders = set()  # id() of each scheduler holding a freeze
_theirs = [False]  # the program froze objects before we did: never unfreeze


def freeze(holder):
    """
    Collect, then freeze every object alive, for C{holder} (a scheduler).

    @return: True if frozen (then C{holder} must call L{thaw}), False when the collector
        is disabled.
    """
    if not gc.isenabled():
        return False
    if not _holders and gc.get_freeze_count():
        _theirs[0] = True
    gc.collect()
    gc.freeze()
    _holders.add(id(holder))
    return True


def thaw(holder):
    """C{holder} lets go of its freeze; the last holder to let go unfreezes the heap."""
    _holders.discard(id(holder))
    if not _holders and not _theirs[0]:
        gc.unfreeze()

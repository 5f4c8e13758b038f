"""
Python's cyclic garbage collector, set for a crawl by L{CrawlerProcess.start}.

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

"""
L{MemoryDebugger}: what is still alive when the crawl closes, as Scrapy's extension.

Off unless C{MEMDEBUG_ENABLED}. When it is built it switches on the tracking of
L{tinyscrapy.utils.trackref} (off until then: it costs nothing per request otherwise),
counting the crawl's spider, made just before; when the spider closes it collects the
garbage and stores C{memdebug/gc_garbage_count} (C{len(gc.garbage)}) and, for each tracked
class with live instances (requests, responses, items, selectors, spiders and every
C{object_ref} subclass of yours), C{memdebug/live_refs/<Class>}.
"""

import gc

from tinyscrapy import signals
from tinyscrapy.exceptions import NotConfigured
from tinyscrapy.utils.trackref import live_refs, start_tracking


class MemoryDebugger:
    """Stores what is still alive at close in the stats."""

    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        """@raise NotConfigured: C{MEMDEBUG_ENABLED} is off."""
        if not crawler.settings.getbool("MEMDEBUG_ENABLED"):
            raise NotConfigured
        start_tracking(crawler.spider)
        extension = cls(crawler.stats)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_closed(self, spider, reason):
        gc.collect()
        self.stats.set_value("memdebug/gc_garbage_count", len(gc.garbage))
        for cls, refs in list(live_refs.items()):
            if refs:
                self.stats.set_value(f"memdebug/live_refs/{cls.__name__}", len(refs))

"""
L{Progress}: how a running crawl is doing, every so often, at no cost per page.

Two forms, chosen by C{PROGRESS}:

    - the live line (C{PROGRESS=true}, or C{"auto"} when stderr is a terminal): one line on
      stderr, rewritten in place with C{\\r} every half second and cleared at the end::

          books: 120 pages, 118 items, 8 in flight, 340 queued, 2 errors, 35.2 pages/s

      A log record written to the same stream first clears the line, so the two never
      mix; the next tick draws it again.
    - Scrapy's LogStats line (C{PROGRESS=false}, or C{"auto"} when stderr is not a
      terminal), logged every C{LOGSTATS_INTERVAL} seconds (0 switches it off)::

          Crawled 120 pages (at 240 pages/min), scraped 118 items (at 236 items/min)

Both read the stats and the parts' C{statistics()} records from a C{LoopingCall} on the
crawler's reactor, started at C{engine_started} and stopped at C{spider_closed}; no signal
is listened to per page. Pages are C{response_received_count}; errors are requests that
ended C{failed} in the ledger (a download that failed for good, a refused status) plus
exceptions raised by callbacks. With several spiders in one process each live line is
prefixed with its spider's name and they take turns on the one line.
"""

import logging
import sys
from collections import deque

from twisted.internet.task import LoopingCall

from tinyscrapy import signals
from tinyscrapy.core.engine import pending_count
from tinyscrapy.exceptions import NotConfigured, UsageError
from tinyscrapy.statscollectors import crawl_statistics

logger = logging.getLogger(__name__)

LIVE_INTERVAL = 0.5   # seconds between two draws of the live line
RATE_WINDOW = 5.0     # the live pages/s is measured over about this many seconds


def live_wanted(value, stream, items_on_terminal=False):
    """
    Whether C{PROGRESS=value} asks for the live line on C{stream}. C{"auto"} means: when
    C{stream} is a terminal, unless items are printed to that terminal too (the default
    feed, C{-}, on a terminal), where they would land in the middle of the line.

    @raise UsageError: C{value} is neither C{"auto"} nor a boolean.
    """
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered == "auto":
            isatty = getattr(stream, "isatty", None)
            return bool(isatty is not None and isatty()) and not items_on_terminal
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
    elif isinstance(value, bool) or value in (0, 1):
        return bool(value)
    raise UsageError(f"setting PROGRESS={value!r}: expected \"auto\", true or false")


class Progress:
    """
    The progress of one crawl, as an extension.

    @ivar live: True for the live line, False for the LogStats lines.
    @ivar stream: where the live line is written (stderr unless given).
    @ivar interval: seconds between two ticks.
    @cvar live_interval: seconds between two draws of the live line.
    """

    live_interval = LIVE_INTERVAL

    def __init__(self, crawler, stream, live, interval):
        self.crawler = crawler
        self.stream = stream
        self.live = live
        self.interval = interval
        self.name = crawler.spider.name if crawler.spider is not None else "crawl"
        self._task = LoopingCall(self.tick)
        self._task.clock = crawler.reactor
        self._width = 0       # the length of the line on screen; 0: none shown
        self._samples = deque()
        self._last = (0, 0)   # pages and items at the previous LogStats line
        self._filters = []
        crawler.signals.connect(self.engine_started, signals.engine_started)
        crawler.signals.connect(self.spider_closed, signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler, stream=None):
        stream = stream if stream is not None else sys.stderr
        settings = crawler.settings
        items_on_terminal = "-" in (settings.get("FEEDS") or {}) and sys.stdout.isatty()
        live = live_wanted(settings.get("PROGRESS"), stream, items_on_terminal)
        interval = cls.live_interval if live else settings.getfloat("LOGSTATS_INTERVAL")
        if interval <= 0:
            raise NotConfigured("PROGRESS is off and LOGSTATS_INTERVAL is 0")
        return cls(crawler, stream, live, interval)

    def engine_started(self, **_):
        if self.live:
            self._clear_before_logging()
            self._samples.append((self.crawler.reactor.seconds(), 0))
        self._task.start(self.interval, now=False)

    def spider_closed(self, **_):
        if self._task.running:
            self._task.stop()
        if self.live:
            self.clear()
            for handler, log_filter in self._filters:
                handler.removeFilter(log_filter)
            self._filters = []

    def tick(self):
        if self.live:
            self.draw(self.line())
        else:
            logger.info(self.logstats_line())

    # what is shown

    def counts(self):
        """@return: a dict of C{pages}, C{items}, C{in_flight}, C{queued}, C{errors}."""
        stats = self.crawler.stats
        records = crawl_statistics(self.crawler)
        engine, scheduler = records.get("engine"), records.get("scheduler")
        queued = getattr(scheduler, "pending", None)
        if queued is None and self.crawler.engine is not None:
            queued = pending_count(self.crawler.engine.scheduler)
        ledger = records.get("ledger")
        exceptions = sum(value for key, value in stats.get_stats().items()
                         if key.startswith("spider_exceptions/"))
        return {"pages": stats.get_value("response_received_count", 0),
                "items": stats.get_value("item_scraped_count", 0),
                "in_flight": engine.in_flight if engine is not None else 0,
                "queued": queued or 0,
                "errors": (ledger.failed if ledger is not None else 0) + exceptions}

    def line(self):
        """The live line: the counts and the recent pages per second."""
        counts = self.counts()
        now = self.crawler.reactor.seconds()
        samples = self._samples
        samples.append((now, counts["pages"]))
        while len(samples) > 2 and now - samples[1][0] >= RATE_WINDOW:
            samples.popleft()
        elapsed = now - samples[0][0]
        rate = (counts["pages"] - samples[0][1]) / elapsed if elapsed > 0 else 0.0
        return (f"{self.name}: {counts['pages']} pages, {counts['items']} items, "
                f"{counts['in_flight']} in flight, {counts['queued']} queued, "
                f"{counts['errors']} errors, {rate:.1f} pages/s")

    def logstats_line(self):
        """Scrapy's LogStats line, rates over the last interval."""
        counts = self.counts()
        pages, items = counts["pages"], counts["items"]
        per_minute = 60.0 / self.interval
        page_rate = (pages - self._last[0]) * per_minute
        item_rate = (items - self._last[1]) * per_minute
        self._last = (pages, items)
        return (f"Crawled {pages} pages (at {page_rate:.0f} pages/min), "
                f"scraped {items} items (at {item_rate:.0f} items/min)")

    # the live line on the stream

    def draw(self, text):
        """Rewrite the line in place (padded over a longer previous one)."""
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def clear(self):
        """Blank the line and put the cursor back at its start."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def _clear_before_logging(self):
        """Have each log handler writing to our stream clear the line first."""
        log_filter = _ClearLine(self)
        for handler in logging.getLogger().handlers:
            if getattr(handler, "stream", None) is self.stream:
                handler.addFilter(log_filter)
                self._filters.append((handler, log_filter))


class _ClearLine(logging.Filter):
    """Clears the live line before a record is written; lets every record through."""

    def __init__(self, progress):
        super().__init__()
        self.progress = progress

    def filter(self, record):
        self.progress.clear()
        return True

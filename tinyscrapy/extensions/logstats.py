"""
How a running crawl is doing, every so often, at no cost per page: Scrapy's L{LogStats}
lines, and tinyscrapy's live L{Progress} line beside them.

    - L{LogStats} (Scrapy's), every C{LOGSTATS_INTERVAL} seconds (0 switches it off), from
      the moment the spider opens, logs one INFO line::

          Crawled 120 pages (at 240 pages/min), scraped 118 items (at 236 items/min)

      with the rates over the last interval, and at the close stores
      C{responses_per_minute} and C{items_per_minute} over the whole crawl.
    - L{Progress}, the live line (C{PROGRESS=true}, or C{"auto"} when stderr is a
      terminal): one line on stderr, rewritten in place with C{\\r} every half second and
      cleared at the end::

          books: 120 pages, 118 items, 8 in flight, 340 queued, 2 errors, 35.2 pages/s

      A log record written to the same stream (a LogStats line too) first clears the
      line, so the two never mix; the next tick draws it again.

Both read the stats (and the live line the parts' C{statistics()} records) from a
C{LoopingCall} on the crawler's reactor; no signal is listened to per page. Pages are
C{response_received_count}; errors are requests that ended C{failed} in the ledger (a
download that failed for good, a refused status) plus exceptions raised by callbacks.
With several spiders in one process each live line is prefixed with its spider's name
and they take turns on the one line.
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


class LogStats:
    """
    Scrapy's LogStats: the pages and items so far, and their rates per minute over the
    last C{LOGSTATS_INTERVAL}, logged at INFO every interval.

    @ivar interval: seconds between two lines.
    @ivar multiplier: C{60 / interval}, the rates per minute from counts per interval.
    @ivar task: the C{LoopingCall} while the spider is open, else None.
    """

    def __init__(self, stats, interval=60.0, clock=None):
        self.stats = stats
        self.interval = interval
        self.multiplier = 60.0 / self.interval
        self.task = None
        self.clock = clock

    @classmethod
    def from_crawler(cls, crawler):
        """@raise NotConfigured: C{LOGSTATS_INTERVAL} is 0."""
        interval = crawler.settings.getfloat("LOGSTATS_INTERVAL")
        if not interval:
            raise NotConfigured
        extension = cls(crawler.stats, interval, crawler.reactor)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self, spider):
        """Log the first line now, then one every interval."""
        self.pagesprev = 0
        self.itemsprev = 0
        self.task = LoopingCall(self.log, spider)
        if self.clock is not None:
            self.task.clock = self.clock
        self.task.start(self.interval)

    def log(self, spider):
        self.calculate_stats()
        logger.info("Crawled %(pages)d pages (at %(pagerate)d pages/min), scraped %(items)d "
                    "items (at %(itemrate)d items/min)",
                    {"pages": self.pages, "pagerate": self.prate, "items": self.items,
                     "itemrate": self.irate}, extra={"spider": spider})

    def calculate_stats(self):
        """The counts now, and their rates per minute since the previous call."""
        self.items = self.stats.get_value("item_scraped_count", 0)
        self.pages = self.stats.get_value("response_received_count", 0)
        self.irate = (self.items - self.itemsprev) * self.multiplier
        self.prate = (self.pages - self.pagesprev) * self.multiplier
        self.pagesprev, self.itemsprev = self.pages, self.items

    def spider_closed(self, spider, reason):
        """Stop the lines; store the rates over the whole crawl."""
        if self.task is not None and self.task.running:
            self.task.stop()
        rpm_final, ipm_final = self.calculate_final_stats(spider)
        self.stats.set_value("responses_per_minute", rpm_final)
        self.stats.set_value("items_per_minute", ipm_final)

    def calculate_final_stats(self, spider):
        """
        @return: C{(responses per minute, items per minute)} between C{start_time} and
            C{finish_time} (whole seconds, as Scrapy counts them), or C{(None, None)}
            when either is missing or no second passed.
        """
        start_time = self.stats.get_value("start_time")
        finish_time = self.stats.get_value("finish_time")
        if not start_time or not finish_time:
            return None, None
        minutes = (finish_time - start_time).seconds / 60
        if minutes == 0:
            return None, None
        items = self.stats.get_value("item_scraped_count", 0)
        pages = self.stats.get_value("response_received_count", 0)
        return pages / minutes, items / minutes


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
    tinyscrapy's live progress line of one crawl, as an extension (in C{EXTENSIONS_BASE}
    after Scrapy's).

    @ivar stream: where the line is written (stderr unless given).
    @ivar interval: seconds between two draws.
    @cvar live_interval: seconds between two draws of the line.
    """

    live_interval = LIVE_INTERVAL

    def __init__(self, crawler, stream, interval=LIVE_INTERVAL):
        self.crawler = crawler
        self.stream = stream
        self.interval = interval
        self.name = crawler.spider.name if crawler.spider is not None else "crawl"
        self._task = LoopingCall(self.tick)
        self._task.clock = crawler.reactor
        self._width = 0       # the length of the line on screen; 0: none shown
        self._samples = deque()
        self._filters = []
        crawler.signals.connect(self.engine_started, signals.engine_started)
        crawler.signals.connect(self.spider_closed, signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler, stream=None):
        """
        @raise NotConfigured: C{PROGRESS} does not ask for the line on C{stream}.
        @raise UsageError: C{PROGRESS} is neither C{"auto"} nor a boolean.
        """
        stream = stream if stream is not None else sys.stderr
        settings = crawler.settings
        items_on_terminal = "-" in (settings.get("FEEDS") or {}) and sys.stdout.isatty()
        if not live_wanted(settings.get("PROGRESS"), stream, items_on_terminal):
            raise NotConfigured("PROGRESS does not ask for the live line here")
        return cls(crawler, stream, cls.live_interval)

    def engine_started(self, **_):
        self._clear_before_logging()
        self._samples.append((self.crawler.reactor.seconds(), 0))
        self._task.start(self.interval, now=False)

    def spider_closed(self, **_):
        if self._task.running:
            self._task.stop()
        self.clear()
        for handler, log_filter in self._filters:
            handler.removeFilter(log_filter)
        self._filters = []

    def tick(self):
        self.draw(self.line())

    # what is shown

    def counts(self):
        """@return: a dict of C{pages}, C{items}, C{in_flight}, C{queued}, C{errors}."""
        stats = self.crawler.stats
        records = crawl_statistics(self.crawler)
        engine, scheduler = records.get("engine"), records.get("scheduler")
        queued = getattr(scheduler, "pending", None)
        if queued is None and self.crawler.engine is not None:
            queued = pending_count(self.crawler.engine.scheduler) or 0
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

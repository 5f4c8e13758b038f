"""
L{StatsCollector}: one flat dictionary of counters per crawl, named as in Scrapy
(C{downloader/response_status_count/200}, C{item_scraped_count}, ...).

The parts of a crawl count into it as things happen. At close the collector also copies
the final C{statistics()} record of each stateful part (engine, scheduler, downloader,
pipelines) as C{part/field}, logs the summary and, with C{STATS_FILE}, writes it as JSON.
L{crawl_statistics} is the one place that gathers those records; the progress line and
the trace read it too.
"""

import dataclasses
import json
import logging
import os
import warnings
from datetime import datetime

from tinyscrapy.exceptions import ScrapyDeprecationWarning
from tinyscrapy.utils.deprecate import argument_is_required
from tinyscrapy.utils.misc import check_output_path

logger = logging.getLogger(__name__)

# fields of the parts' statistics() records that the stats already count, as Scrapy names
# them (the record's name -> the stats' own key)
_COUNTED_AS = {
    "downloader/requests": "downloader/request_count",
    "downloader/responses": "downloader/response_count",
    "downloader/failures": "downloader/exception_count",
    "downloader/bytes": "downloader/response_bytes",
    "downloader/decoded_bytes": "downloader/response_bytes_decoded",
    "pipelines/scraped": "item_scraped_count",
}

# STATS_FILE paths in use by the crawlers of this process
_STATS_FILES = set()


def crawl_statistics(crawler):
    """
    The current C{statistics()} record of each stateful part of C{crawler}'s crawl.

    @return: a dict of part name (C{engine}, C{scheduler}, C{downloader}, C{pipelines},
        C{ledger}) to its frozen record; parts that are missing or keep no statistics are
        left out.
    """
    engine = crawler.engine
    parts = {"ledger": crawler.ledger}
    if engine is not None:
        parts.update(engine=engine, scheduler=engine.scheduler,
                     downloader=engine.downloader, pipelines=engine.scraper.itemproc)
    records = {}
    for name, part in parts.items():
        statistics = getattr(part, "statistics", None)
        record = statistics() if statistics is not None else None
        if record is not None:
            records[name] = record
    return records


def _spider_argument(collector, method):
    """Warn, as Scrapy 2.14+ does, of a C{spider} given to a stats method (it is ignored:
    one collector is one crawl's)."""
    warnings.warn(f"Passing a 'spider' argument to {type(collector).__qualname__}.{method}() "
                  f"is deprecated and the argument will be removed in a future Scrapy "
                  f"version.", ScrapyDeprecationWarning, stacklevel=3)


def call_with_spider_if_required(method, spider, **kwargs):
    """
    Call a stats collector's C{open_spider} or C{close_spider} as Scrapy 2.14+ does:
    without the spider, unless its signature requires one (deprecated: warned).

    @return: what the method returns.
    """
    if argument_is_required(method, "spider"):
        warnings.warn(f"The {method.__name__}() method of "
                      f"{type(method.__self__).__module__}.{type(method.__self__).__qualname__}"
                      f" requires a spider argument, this is deprecated and the argument will "
                      f"not be passed in future Scrapy versions.", ScrapyDeprecationWarning,
                      stacklevel=3)
        return method(spider=spider, **kwargs)
    return method(**kwargs)


class StatsCollector:
    """
    A dict of named values with counter helpers, as Scrapy's C{StatsCollector} (every
    method takes Scrapy's C{spider} keyword too, deprecated as in Scrapy, and ignores it:
    one collector is one crawl's).

    @ivar stats_file: where to write the stats as JSON at close (C{STATS_FILE}, where
        C{%(name)s} is the spider's name), or None.
    @ivar dump: log the stats at close (C{STATS_DUMP}).
    """

    def __init__(self, crawler=None, *, stats_file=None):
        self._stats = {}
        self.crawler = crawler
        settings = getattr(crawler, "settings", None)
        if stats_file is None and settings is not None:
            stats_file = settings.get("STATS_FILE")
        self.stats_file = stats_file
        self.dump = settings.getbool("STATS_DUMP", True) if settings is not None else True
        self._path = None

    @classmethod
    def from_crawler(cls, crawler):
        stats_file = crawler.settings.get("STATS_FILE")
        if stats_file:  # checked now, not after the crawl (as the spider opens, again)
            check_output_path(_resolve(stats_file, crawler.spidercls.name), "STATS_FILE")
        return cls(crawler)

    def inc_value(self, key, count=1, start=0, spider=None):
        if spider is not None:
            _spider_argument(self, "inc_value")
        stats = self._stats
        stats[key] = stats.get(key, start) + count

    def max_value(self, key, value, spider=None):
        if spider is not None:
            _spider_argument(self, "max_value")
        if value > self._stats.get(key, value - 1):
            self._stats[key] = value

    def min_value(self, key, value, spider=None):
        if spider is not None:
            _spider_argument(self, "min_value")
        if value < self._stats.get(key, value + 1):
            self._stats[key] = value

    def set_value(self, key, value, spider=None):
        if spider is not None:
            _spider_argument(self, "set_value")
        self._stats[key] = value

    def set_stats(self, stats, spider=None):
        """Replace every value with those of C{stats}."""
        if spider is not None:
            _spider_argument(self, "set_stats")
        self._stats = dict(stats)

    def get_value(self, key, default=None, spider=None):
        if spider is not None:
            _spider_argument(self, "get_value")
        return self._stats.get(key, default)

    def get_stats(self, spider=None):
        """A copy of every value."""
        if spider is not None:
            _spider_argument(self, "get_stats")
        return dict(self._stats)

    def clear_stats(self, spider=None):
        if spider is not None:
            _spider_argument(self, "clear_stats")
        self._stats.clear()

    def open_spider(self, spider=None):
        """Claim C{STATS_FILE} (warning if another crawler has it). The times are
        stamped by L{tinyscrapy.extensions.corestats.CoreStats}."""
        if spider is not None:
            _spider_argument(self, "open_spider")
        spider = spider if spider is not None else getattr(self.crawler, "spider", None)
        if self.stats_file:
            path = _resolve(self.stats_file, spider.name)
            if path in _STATS_FILES:
                logger.warning("%s: STATS_FILE %s is also another spider's: the last one to "
                               "finish wins (put %%(name)s in it)", spider.name, path)
            check_output_path(path, "STATS_FILE")  # now, not after the crawl
            _STATS_FILES.add(path)
            self._path = path

    def close_spider(self, spider=None, reason=None):
        """Copy the parts' statistics, log the summary (and, with C{STATS_DUMP}, every
        value), write C{STATS_FILE}, and keep the values (L{_persist_stats})."""
        if spider is not None:
            _spider_argument(self, "close_spider")
        spider = spider if spider is not None else getattr(self.crawler, "spider", None)
        if reason is not None:
            self._stats.setdefault("finish_reason", reason)
        if self.crawler is not None and getattr(self.crawler, "engine", None) is not None:
            self.record_statistics(crawl_statistics(self.crawler))
        if logger.isEnabledFor(logging.INFO):
            if self.crawler is not None and getattr(self.crawler, "engine", None) is not None:
                from tinyscrapy.utils.log import summary_line
                logger.info("%s", summary_line(self.crawler, self._stats, reason))
            if self.dump:
                import pprint
                logger.info("Dumping stats for %s:\n%s", getattr(spider, "name", "the crawl"),
                            pprint.pformat(self._stats, sort_dicts=True))
        if self._path:
            self._write(self._path)
        self._persist_stats(self._stats, spider)

    def _persist_stats(self, stats, spider):
        """Keep the final values somewhere (Scrapy's hook): nothing here."""

    def record_statistics(self, records):
        """Copy the number fields of each record as C{part/field}, leaving out zeros, and
        those the stats count already under Scrapy's names (L{_COUNTED_AS}; the ledger is
        left out too: it counts into the stats itself). Decoded bytes are kept only when
        they differ from the bytes on the wire (a compressed response)."""
        stats = self._stats
        for part, record in records.items():
            if part == "ledger" or not dataclasses.is_dataclass(record):
                continue
            for field, value in dataclasses.asdict(record).items():
                key = f"{part}/{field}"
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value \
                        and key not in _COUNTED_AS:
                    stats[key] = value
        decoded = stats.get("downloader/response_bytes_decoded")
        if decoded is not None and decoded == stats.get("downloader/response_bytes"):
            del stats["downloader/response_bytes_decoded"]

    def _write(self, path):
        _STATS_FILES.discard(path)
        try:
            folder = os.path.dirname(path)
            if folder:
                os.makedirs(folder, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(self._stats, f, indent=2, sort_keys=True, default=_json_value)
                f.write("\n")
        except OSError as e:
            logger.error("cannot write STATS_FILE %s: %s", path, e)


class MemoryStatsCollector(StatsCollector):
    """Keeps each closed crawl's final values in L{spider_stats}, by spider name."""

    def __init__(self, crawler=None, **kwargs):
        super().__init__(crawler, **kwargs)
        self.spider_stats = {}

    def _persist_stats(self, stats, spider):
        if spider is not None:
            self.spider_stats[spider.name] = dict(stats)


class DummyStatsCollector(StatsCollector):
    """Keeps nothing: every value read is the default (Scrapy's, for speed)."""

    def get_value(self, key, default=None, spider=None):
        return default

    def set_value(self, key, value, spider=None):
        pass

    def set_stats(self, stats, spider=None):
        pass

    def inc_value(self, key, count=1, start=0, spider=None):
        pass

    def max_value(self, key, value, spider=None):
        pass

    def min_value(self, key, value, spider=None):
        pass


def _resolve(template, name):
    """The absolute path of C{STATS_FILE} C{template} for the spider C{name}."""
    return os.path.abspath(template % {"name": name} if "%(" in template else template)


def _json_value(value):
    """Times as ISO 8601; anything else JSON does not know, as its string."""
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)

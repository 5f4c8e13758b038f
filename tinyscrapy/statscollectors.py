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
from datetime import datetime

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
                     downloader=engine.downloader, pipelines=engine.scraper.pipelines)
    records = {}
    for name, part in parts.items():
        statistics = getattr(part, "statistics", None)
        record = statistics() if statistics is not None else None
        if record is not None:
            records[name] = record
    return records


class StatsCollector:
    """
    A dict of named values with counter helpers.

    @ivar stats_file: where to write the stats as JSON at close (C{STATS_FILE}, where
        C{%(name)s} is the spider's name), or None.
    """

    def __init__(self, stats_file=None, crawler=None):
        self._stats = {}
        self.stats_file = stats_file
        self.crawler = crawler
        self._path = None

    @classmethod
    def from_crawler(cls, crawler):
        stats_file = crawler.settings.get("STATS_FILE")
        if stats_file:  # checked now, not after the crawl (as the spider opens, again)
            check_output_path(_resolve(stats_file, crawler.spidercls.name), "STATS_FILE")
        return cls(stats_file, crawler)

    def inc_value(self, key, count=1, start=0):
        stats = self._stats
        stats[key] = stats.get(key, start) + count

    def max_value(self, key, value):
        if value > self._stats.get(key, value - 1):
            self._stats[key] = value

    def set_value(self, key, value):
        self._stats[key] = value

    def get_value(self, key, default=None):
        return self._stats.get(key, default)

    def get_stats(self):
        """A copy of every value."""
        return dict(self._stats)

    def open_spider(self, spider):
        """Claim C{STATS_FILE} (warning if another crawler has it). The times are
        stamped by L{tinyscrapy.extensions.corestats.CoreStats}."""
        if self.stats_file:
            path = _resolve(self.stats_file, spider.name)
            if path in _STATS_FILES:
                logger.warning("%s: STATS_FILE %s is also another spider's: the last one to "
                               "finish wins (put %%(name)s in it)", spider.name, path)
            check_output_path(path, "STATS_FILE")  # now, not after the crawl
            _STATS_FILES.add(path)
            self._path = path

    def close_spider(self, spider, reason):
        """Copy the parts' statistics, log the summary, write C{STATS_FILE}."""
        self._stats.setdefault("finish_reason", reason)
        if self.crawler is not None:
            self.record_statistics(crawl_statistics(self.crawler))
        if logger.isEnabledFor(logging.INFO):
            import pprint
            if self.crawler is not None:
                from tinyscrapy.utils.log import summary_line
                logger.info("%s", summary_line(self.crawler, self._stats, reason))
            logger.info("Dumping stats for %s:\n%s", spider.name,
                        pprint.pformat(self._stats, sort_dicts=True))
        if self._path:
            self._write(self._path)

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


def _resolve(template, name):
    """The absolute path of C{STATS_FILE} C{template} for the spider C{name}."""
    return os.path.abspath(template % {"name": name} if "%(" in template else template)


def _json_value(value):
    """Times as ISO 8601; anything else JSON does not know, as its string."""
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)

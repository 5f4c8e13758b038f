"""
L{StatsCollector}: one flat dictionary of counters per crawl, named as in Scrapy
(C{downloader/response_status_count/200}, C{item_scraped_count}, ...).

At close the collector logs the summary and, with C{STATS_FILE}, writes it as JSON.
"""

import json
import logging
import pprint
from datetime import datetime, timezone

logger = logging.getLogger(__name__)


class StatsCollector:
    """A dict of named values with counter helpers."""

    def __init__(self, stats_file=None):
        self._stats = {}
        self.stats_file = stats_file

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings.get("STATS_FILE"))

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
        self._stats["start_time"] = datetime.now(timezone.utc)

    def close_spider(self, spider, reason):
        """Stamp the finish, log the summary, write C{STATS_FILE}."""
        finish = datetime.now(timezone.utc)
        start = self._stats.get("start_time", finish)
        self._stats["finish_time"] = finish
        self._stats["elapsed_time_seconds"] = round((finish - start).total_seconds(), 3)
        self._stats["finish_reason"] = reason
        logger.info("Dumping stats for %s:\n%s", spider.name,
                    pprint.pformat(self._stats, sort_dicts=True))
        if self.stats_file:
            with open(self.stats_file, "w", encoding="utf-8") as f:
                json.dump(self._stats, f, indent=2, sort_keys=True, default=str)
                f.write("\n")

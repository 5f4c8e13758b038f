"""
Feed exports: each scraped item is written, and flushed, the moment it is scraped.

C{FEEDS} maps a path to its options (C{format}: C{jsonlines}, C{json} or C{csv};
C{overwrite}); the command line fills it from C{-o FILE} (append) and C{-O FILE}
(overwrite), the format from the extension. C{%(name)s} in a path is the spider's name,
so one setting gives one file per spider. Several spiders of one process that name the
same file share one open writer: each item is one C{write()} of whole lines, and the
reactor is single-threaded, so two spiders' lines never interleave.

A C{.json} feed is a valid JSON array after a clean end; appending to one continues the
array already in the file.
"""

import csv
import io
import json
import logging
import os
import sys

from itemadapter import ItemAdapter

from tinyscrapy import signals
from tinyscrapy.errors import NotConfigured, UsageError

logger = logging.getLogger(__name__)

# path -> [writer, number of spiders using it]; shared by the crawlers of one process
_OPEN_WRITERS = {}


class FeedExporter:
    """The extension that connects C{item_scraped} to the feed writers."""

    def __init__(self, crawler, feeds):
        self.crawler = crawler
        self.feeds = feeds
        self.writers = []
        crawler.signals.connect(self.item_scraped, signals.item_scraped)
        crawler.signals.connect(self.spider_closed, signals.spider_closed)
        crawler.signals.connect(self.engine_started, signals.engine_started)

    @classmethod
    def from_crawler(cls, crawler):
        feeds = crawler.settings.getdict("FEEDS")
        if not feeds:
            raise NotConfigured("no FEEDS")
        for path, options in feeds.items():
            if options.get("format", "jsonlines") not in WRITERS:
                raise UsageError(f"FEEDS[{path!r}]: unknown format {options.get('format')!r}")
        return cls(crawler, feeds)

    def engine_started(self, spider):
        settings = self.crawler.settings
        for template, options in self.feeds.items():
            path = template % {"name": spider.name} if "%(" in template else template
            entry = _OPEN_WRITERS.get(path)
            if entry is None:
                writer = WRITERS[options.get("format", "jsonlines")](
                    path, overwrite=options.get("overwrite", False),
                    fields=options.get("fields") or settings.getlist("FEED_EXPORT_FIELDS"),
                    encoding=settings.get("FEED_EXPORT_ENCODING") or "utf-8")
                entry = _OPEN_WRITERS[path] = [writer, 0]
            entry[1] += 1
            self.writers.append(path)

    def item_scraped(self, item, spider, **kwargs):
        stats = self.crawler.stats
        for path in self.writers:
            _OPEN_WRITERS[path][0].write_item(item)
            stats.inc_value(f"feedexport/items/{path}")

    def spider_closed(self, spider, reason):
        for path in self.writers:
            entry = _OPEN_WRITERS[path]
            entry[1] -= 1
            if entry[1] == 0:
                entry[0].close()
                del _OPEN_WRITERS[path]
                if path != "-":
                    logger.info("stored %s feed (%d items) in %s", entry[0].format,
                                entry[0].count, path)
        self.writers = []


class _Writer:
    """A feed file; subclasses turn an item into text."""

    format = None

    def __init__(self, path, overwrite=False, fields=None, encoding="utf-8"):
        self.path = path
        self.fields = list(fields) if fields else None
        self.count = 0
        if path == "-":
            self.file = sys.stdout
            self.existing = False
        else:
            self.existing = not overwrite and os.path.exists(path) \
                and os.path.getsize(path) > 0
            folder = os.path.dirname(path)
            if folder:
                os.makedirs(folder, exist_ok=True)
            self.file = open(path, "r+" if self.existing else "w", encoding=encoding,
                             newline="")
            if self.existing:
                self.file.seek(0, os.SEEK_END)
        self.start()

    def start(self):
        """Called once after opening."""

    def write_item(self, item):
        self.file.write(self.serialize(ItemAdapter(item).asdict()))
        self.file.flush()
        self.count += 1

    def close(self):
        self.finish()
        self.file.flush()
        if self.file is not sys.stdout:
            self.file.close()

    def finish(self):
        """Called once before closing."""


class JsonLinesWriter(_Writer):
    format = "jsonlines"

    def serialize(self, item):
        return json.dumps(item, ensure_ascii=False, default=str) + "\n"


class JsonWriter(_Writer):
    """A JSON array. Appending reopens the array: the closing bracket moves to the end."""

    format = "json"

    def start(self):
        self.first = True
        if self.existing and not self._reopen_array():
            raise UsageError(f"cannot append to {self.path}: it is not a JSON array")
        if not self.existing:
            self.file.write("[")
        self.file.flush()

    def _reopen_array(self):
        """Position the file before its final C{]}; @return: False if it has none."""
        self.file.seek(0)
        text = self.file.read()
        end = text.rstrip().rfind("]")
        if not text.lstrip().startswith("[") or end < 0:
            return False
        self.first = text[:end].strip() == "["
        self.file.seek(0)
        self.file.truncate(len(text[:end].encode("utf-8")))
        self.file.seek(0, os.SEEK_END)
        return True

    def serialize(self, item):
        prefix = "\n" if self.first else ",\n"
        self.first = False
        # the closing bracket is written after every item and overwritten by the next,
        # so the file is valid JSON even if the process dies between two items
        return prefix + json.dumps(item, ensure_ascii=False, default=str)

    def write_item(self, item):
        super().write_item(item)

    def finish(self):
        self.file.write("\n]\n")


class CsvWriter(_Writer):
    """CSV with a header; columns from C{FEED_EXPORT_FIELDS}, else from the first item."""

    format = "csv"

    def start(self):
        self.header_written = self.existing

    def serialize(self, item):
        buffer = io.StringIO()
        if self.fields is None:
            self.fields = list(item)
        writer = csv.DictWriter(buffer, self.fields, extrasaction="ignore",
                                lineterminator="\n")
        if not self.header_written:
            writer.writeheader()
            self.header_written = True
        writer.writerow({k: _csv_value(v) for k, v in item.items()})
        return buffer.getvalue()


def _csv_value(value):
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return value


WRITERS = {"jsonlines": JsonLinesWriter, "json": JsonWriter, "csv": CsvWriter}

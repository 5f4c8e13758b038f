"""
Feed exports: each scraped item is written, and flushed, the moment it is scraped.

C{FEEDS} maps a path to its options, Scrapy's: C{format} (C{jsonlines}, C{json}, C{csv}
or C{xml}; from the extension when absent), C{overwrite}, C{fields}, C{encoding},
C{indent} (C{FEED_EXPORT_INDENT}), C{item_export_kwargs}, C{item_classes} (only items of
these classes). The command line fills it from C{-o FILE} (append) and C{-O FILE}
(overwrite). In a path, C{%(name)s} is the spider's name (one setting gives one file per
spider), C{%(time)s} the start time (UTC, as Scrapy writes it: C{2026-12-01T09-05-00+00-00}),
and any other C{%(attribute)s} the spider's attribute (a C{-a} argument, say).

Several spiders of one process that name the same file share one open writer: each item
is one C{write()} of whole lines, and the reactor is single-threaded, so two spiders'
lines never interleave (and with C{overwrite}, the file is emptied once, by the first).
A CSV file is the exception: its columns come from the first item, so the rows of a spider
with other fields would be blank. Sharing one is refused at the start, with one line,
unless C{FEED_EXPORT_FIELDS} (or the feed's C{fields}) chooses the columns for all.

Files are opened when the crawler is built, so a feed that cannot be opened (a folder
that cannot be made, a C{.json} file to append to that is not a JSON array) stops the
start with one line, before anything is fetched.

A feed that cannot be written (a full disk, an I/O error) loses nothing that was scraped:
the part of the item that did reach the file is cut off again (no torn last line), the
crawl stops with the finish reason C{feed_error} (exit status 1), and from then on the
engine acknowledges no request, so a C{--jobdir} frontier keeps every page whose items
may not be in the file, and the next run fetches them again. At the end of a crawl the
feeds are closed before the frontier's last write (L{tinyscrapy.core.closing}).

The writers, one per format, are in L{tinyscrapy.exporters}.
"""

import datetime
import logging
import os

from tinyscrapy import signals
from tinyscrapy.exceptions import NotConfigured, UsageError
from tinyscrapy.exporters import WRITERS
from tinyscrapy.utils.misc import load_object

logger = logging.getLogger(__name__)

EXTENSIONS = {".jsonl": "jsonlines", ".jl": "jsonlines", ".json": "json", ".csv": "csv",
              ".xml": "xml"}
ALIASES = {"jsonl": "jsonlines", "jl": "jsonlines"}
OPTIONS = ("format", "overwrite", "fields", "encoding", "indent", "item_export_kwargs",
           "item_classes")

# path -> [writer, number of crawlers using it]; shared by the crawlers of one process
_OPEN_WRITERS = {}


def format_for_path(path):
    """
    The feed format for a file name, from its extension (C{-} is stdout: JSON lines).

    @raise UsageError: the extension names no format.
    """
    if path == "-":
        return "jsonlines"
    extension = os.path.splitext(path)[1].lower()
    try:
        return EXTENSIONS[extension]
    except KeyError:
        raise UsageError(f"cannot tell the feed format of {path!r}: use one of "
                         + ", ".join(EXTENSIONS)) from None


class FeedExporter:
    """
    The extension that writes scraped items to the C{FEEDS} files.

    @ivar paths: the resolved paths this crawler writes to.
    """

    def __init__(self, crawler, paths):
        self.crawler = crawler
        self.paths = paths
        self.item_classes = {}  # path -> the classes of the items it takes (all: absent)
        self._broken = set()
        crawler.signals.connect(self.item_scraped, signals.item_scraped)
        crawler.signals.connect(self.spider_closed, signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        """Open (or join) every feed file of C{FEEDS}.
        @raise UsageError: a feed's format or options are wrong, or its file cannot be
            opened."""
        settings = crawler.settings
        feeds = settings.getdict("FEEDS")
        if not feeds:
            raise NotConfigured("no FEEDS")
        spider = crawler.spider if crawler.spider is not None else crawler.spidercls
        fields = settings.get("FEED_EXPORT_FIELDS")
        if not isinstance(fields, dict):  # a dict names the columns: {field: column}
            fields = settings.getlist("FEED_EXPORT_FIELDS")
        defaults = {"fields": fields or None,
                    "encoding": settings.get("FEED_EXPORT_ENCODING"),
                    "indent": settings.get("FEED_EXPORT_INDENT", 0)}
        params = _PathParams(spider)
        paths = []
        classes = {}
        for template, options in feeds.items():
            options = _check_options(template, options)
            path = _fill_path(template, params)
            paths.append(_open_writer(path, options, defaults))
            if options.get("item_classes"):
                classes[paths[-1]] = tuple(load_object(c) for c in options["item_classes"])
        exporter = cls(crawler, paths)
        exporter.item_classes = classes
        return exporter

    def item_scraped(self, item, spider, **kwargs):
        stats = self.crawler.stats
        for path in self.paths:
            if self.item_classes and path in self.item_classes \
                    and not isinstance(item, self.item_classes[path]):
                continue
            writer = _OPEN_WRITERS[path][0]
            if getattr(writer, "failed", None) is not None:  # its file is closed for good
                stats.inc_value("feedexport/failed_count")
                self._stop(path, writer.failed, kwargs.get("response"))
                continue
            position = _position(writer)
            try:
                writer.write_item(item)
            except Exception as e:
                stats.inc_value("feedexport/failed_count")
                if isinstance(e, OSError):  # the file, not the item: nothing more goes in
                    _cut_torn_write(writer, position)
                    writer.failed = e
                    self._stop(path, e, kwargs.get("response"))
                elif path not in self._broken:  # once per file, not once per item
                    self._broken.add(path)
                    logger.error("cannot write an item from %s to the feed %s: %s: %s",
                                 getattr(kwargs.get("response"), "url", None), path,
                                 type(e).__name__, e)
                continue
            stats.inc_value("feedexport/items_count")

    def _stop(self, path, error, response):
        """The feed C{path} cannot be written: acknowledge nothing more, stop the crawl
        (logged once per file)."""
        if path not in self._broken:
            self._broken.add(path)
            logger.error("cannot write the feed %s (%s: %s): the crawl stops (feed_error); "
                         "the item from %s and the later ones are not in it, and their "
                         "pages are not acknowledged (a run with the same --jobdir fetches "
                         "them again)", path, type(error).__name__,
                         error.strerror or error, getattr(response, "url", None))
        engine = self.crawler.engine
        if engine is not None:
            engine.stop_for_error("feed_error")

    def close_feeds(self):
        """Close this crawler's feeds (the last user of a file closes it): called before
        the frontier's last write, so nothing is acknowledged that is not in a file."""
        for path in self.paths:
            try:
                _release_writer(path)
            except OSError as e:
                self.crawler.stats.inc_value("feedexport/failed_count")
                self._stop(path, e, None)
        self.paths = []

    def spider_closed(self, spider, reason):
        self.close_feeds()  # already done by the engine's close, unless it was not run


def _position(writer):
    """Where the next item starts in C{writer}'s file, or None (stdout, a pipe)."""
    try:
        return writer.offset()
    except OSError:
        return None


def _cut_torn_write(writer, position):
    """
    An item was written in part: cut the file back to C{position} (before it), and close
    the file at once, so that what its buffer still holds never reaches the disk.
    A feed whose format has a closing mark (C{.json}'s C{]}, C{.xml}'s C{</items>}) gets it
    back, written over bytes the file already has (a full disk has no room for new ones).
    """
    if position is None:
        return
    file = writer.file
    try:
        fd = file.fileno()
        # never past what is on disk: a position counted from a write still in the buffer
        # would grow the file with a zero byte
        position = min(position, os.fstat(fd).st_size)
        tail = getattr(writer, "tail", None)
        if tail and getattr(writer, "seekable", False):
            os.pwrite(fd, tail, position)
            position += len(tail)
        os.ftruncate(fd, position)
    except OSError as e:
        logger.error("feed %s: cannot cut off the item written in part (%s)", writer.path, e)
    finally:
        raw = getattr(file, "raw", None)
        if raw is not None:
            raw.close()  # the buffered file is closed with it, without writing its buffer


def _check_options(path, options):
    """The options of one feed, with its format; warns about options it does not know."""
    if options is not None and not isinstance(options, dict):
        raise UsageError(f"FEEDS[{path!r}]: options must be a dict, got {options!r}")
    options = dict(options or {})
    for key in options:
        if key not in OPTIONS:
            logger.warning("FEEDS[%r]: option %r is not supported (known: %s); ignored",
                           path, key, ", ".join(OPTIONS))
    fmt = options.get("format") or format_for_path(path)
    fmt = ALIASES.get(fmt, fmt)
    if fmt not in WRITERS:
        raise UsageError(f"FEEDS[{path!r}]: unknown format {fmt!r} (known: "
                         + ", ".join(WRITERS) + ")")
    options["format"] = fmt
    return options


class _PathParams(dict):
    """What C{%(...)s} in a feed path names: C{name}, C{time}, or a spider attribute."""

    def __init__(self, spider):
        now = datetime.datetime.now(tz=datetime.timezone.utc).replace(microsecond=0)
        super().__init__(name=spider.name, time=now.isoformat().replace(":", "-"))
        self.spider = spider

    def __missing__(self, key):
        try:
            return getattr(self.spider, key)
        except AttributeError:
            raise UsageError(f"feed path: %({key})s names nothing (the spider has no "
                             f"attribute {key!r})") from None


def _fill_path(template, params):
    if "%(" not in template:
        return template
    try:
        return template % params
    except (TypeError, ValueError) as e:
        raise UsageError(f"feed path {template!r}: {e}") from None


def _open_writer(path, options, defaults):
    """Open the writer of C{path}, or join the one this process already has open.
    @return: the key of the writer in C{_OPEN_WRITERS}."""
    key = path if path == "-" else os.path.abspath(path)
    entry = _OPEN_WRITERS.get(key)
    if entry is None:
        encoding = options.get("encoding") or defaults["encoding"]
        export_kwargs = options.get("item_export_kwargs")
        if encoding is None and options["format"] in ("json", "jsonlines"):
            # no encoding chosen: JSON escapes non-ASCII characters, as Scrapy's does
            export_kwargs = {"ensure_ascii": True, **(export_kwargs or {})}
        writer = WRITERS[options["format"]](
            path, overwrite=bool(options.get("overwrite")),
            fields=options.get("fields") or defaults["fields"],
            encoding=encoding or "utf-8", indent=options.get("indent", defaults["indent"]),
            export_kwargs=export_kwargs)
        entry = _OPEN_WRITERS[key] = [writer, 0]
    elif entry[0].format != options["format"]:
        raise UsageError(f"feed {path!r} is already written as {entry[0].format}, "
                         f"not {options['format']}")
    elif entry[0].format == "csv" and not (options.get("fields") or defaults["fields"]):
        raise UsageError(_shared_csv(path))
    entry[1] += 1
    return key


def check_shared_feeds(settings, spider_count):
    """
    Refuse, before any file is opened, a CSV feed that several spiders would share.

    @raise UsageError: C{spider_count} spiders run and a C{FEEDS} path without
        C{%(name)s} is CSV while no C{fields} / C{FEED_EXPORT_FIELDS} choose its columns.
    """
    if spider_count < 2 or settings.getlist("FEED_EXPORT_FIELDS"):
        return
    for path, options in settings.getdict("FEEDS").items():
        options = options if isinstance(options, dict) else {}
        if "%(" in path or options.get("fields") or path == "-":
            continue
        try:
            fmt = options.get("format") or format_for_path(path)
        except UsageError:
            continue  # said when the feed is opened
        if fmt == "csv":
            raise UsageError(_shared_csv(path))


def _shared_csv(path):
    return (f"feed {path!r}: several spiders cannot share one CSV file, whose columns are "
            f"one spider's (the others' rows would be blank): put %(name)s in the path, "
            f"as -o 'items-%(name)s.csv', set FEED_EXPORT_FIELDS, or write .jsonl")


def _release_writer(key):
    """One crawler is done with C{key}; the last one closes the file.
    @raise OSError: the file could not be closed (its last bytes not written)."""
    entry = _OPEN_WRITERS[key]
    entry[1] -= 1
    if entry[1] == 0:
        writer = entry[0]
        del _OPEN_WRITERS[key]
        if getattr(writer, "failed", None) is not None:
            logger.error("feed %s: %d items written before it failed", writer.path,
                         writer.count)
            return
        writer.close()
        if key != "-":
            logger.info("stored %s feed (%d items) in %s", writer.format, writer.count,
                        writer.path)

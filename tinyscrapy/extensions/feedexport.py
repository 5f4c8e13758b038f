"""
Feed exports, Scrapy's (C{scrapy.extensions.feedexport}): L{FeedExporter} writes each
scraped item to the C{FEEDS} it belongs to, the moment it is scraped.

C{FEEDS} maps a URI to its options, every one Scrapy documents: C{format} (a key of
C{FEED_EXPORTERS}: C{json}, C{jsonlines} (C{jsonl}, C{jl}), C{csv}, C{xml}, C{marshal},
C{pickle}, or one of the project's; from the extension when absent), C{overwrite},
C{store_empty} (C{FEED_STORE_EMPTY}), C{fields} (C{FEED_EXPORT_FIELDS}), C{encoding}
(C{FEED_EXPORT_ENCODING}), C{indent} (C{FEED_EXPORT_INDENT}), C{item_export_kwargs} (the
exporter's own options), C{item_classes} and C{item_filter} (L{ItemFilter}: which items
the feed takes), C{uri_params} (C{FEED_URI_PARAMS}), C{batch_item_count}
(C{FEED_EXPORT_BATCH_ITEM_COUNT}: a new file every so many items, named by
C{%(batch_id)d} or C{%(batch_time)s}) and C{postprocessing}
(L{tinyscrapy.extensions.postprocessing}). The exporters are L{tinyscrapy.exporters}'
(C{FEED_EXPORTERS}), the storages L{FileFeedStorage} (a path or a C{file://} URI) and
L{StdoutFeedStorage} (C{stdout:}, and C{-}) or a project's (C{FEED_STORAGES}, by URI
scheme). The command line fills C{FEEDS} from C{-o URI} (append), C{-O URI} (overwrite)
and C{-o URI:FORMAT}. In a URI, C{%(name)s} is the spider's name, C{%(time)s} the start
time (UTC, C{2026-12-01T09-05-00+00-00}) and any other C{%(attribute)s} the spider's
attribute (a C{-a} argument, say). A substituted value that holds a slash or a backslash
(in a URI, percent-encoded too, since its storage decodes it), or is C{..}, or values side
by side that make a C{..} folder, are refused at the start: a value from a spider never
chooses the folder (the template's own folders stay, so C{%(name)s/%(time)s.csv} works).

Every check happens when the crawler is built, before anything is fetched: a format,
storage or option that is wrong, a path that cannot be written, a C{.json} file to append
to that is not a JSON array stop the start with one line (exit status 2). A file is
written only once the crawl has started (C{spider_opened}): an existing file that C{-O}
replaces is left as it was by a crawl that fails to start.

A plain file is written through a L{FeedFile}: the bytes the exporter writes for one item
reach the file in one write, at once, and a C{.json} or C{.xml} file gets its closing mark
(C{]}, C{</items>}) after every item, which the next item overwrites: the file is valid at
every moment. Appending continues what is there: a JSON array, an XML root, a CSV's
columns (no second header). A post-processed feed (compressed, say), a C{stdout:} feed
and a project's storage are complete once the crawl has closed them.

A feed that cannot be written (a full disk, an I/O error) loses nothing that was scraped:
the part of the item that did reach the file is cut off again (no torn last line), the
crawl stops with the finish reason C{feed_error} (exit status 1), and from then on the
engine acknowledges no request, so a C{--jobdir} frontier keeps every page whose items may
not be in the file, and the next run fetches them again. At the end of a crawl the feeds
are closed (and stored) before the frontier's last write (L{tinyscrapy.core.closing}).

Several spiders of one process that name the same file share one open feed: each item is
one write of whole lines, and the reactor is single-threaded, so two spiders' lines never
interleave (with C{overwrite}, the file is emptied once, by the first). A CSV file is the
exception: its columns come from the first item, so the rows of a spider with other fields
would be blank. Sharing one is refused at the start, with one line, unless
C{FEED_EXPORT_FIELDS} (or the feed's C{fields}) chooses the columns for all.
"""

import datetime
import errno
import io
import logging
import os
import re
import sys
import tempfile
import warnings
from urllib.parse import unquote

from twisted.internet.defer import DeferredList, maybeDeferred, succeed

from tinyscrapy import signals
from tinyscrapy.exceptions import (
    ConfigurationError,
    NotConfigured,
    ScrapyDeprecationWarning,
    UsageError,
)
from tinyscrapy.exporters import (
    CsvItemExporter,
    JsonItemExporter,
    JsonLinesItemExporter,
    XmlItemExporter,
)
from tinyscrapy.extensions.postprocessing import PostProcessingManager
from tinyscrapy.utils.misc import MIN_FREE_BYTES, build_from_crawler, load_object

logger = logging.getLogger(__name__)

# the printf-style placeholders of a feed URI; any other % (%20, say) stays as it is
_PLACEHOLDER = re.compile(r"%\(([^)]+)\)[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[diouxXeEfFgGcrsa]")
_BATCH_PLACEHOLDER = re.compile(r"%\(batch_time\)s|%\(batch_id\)")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")  # a scheme (a drive letter is one letter)
_SEPARATORS = re.compile(r"[/\\]")

# the options of one feed that tinyscrapy reads (a storage or a post-processing plugin of
# the project's may read others)
OPTIONS = ("format", "overwrite", "store_empty", "fields", "encoding", "indent",
           "item_export_kwargs", "item_classes", "item_filter", "uri_params",
           "batch_item_count", "postprocessing")

# path -> _SharedFeed; the feeds open in this process, shared by its crawlers
_OPEN_FEEDS = {}


def apply_uri_params(uri_template, uri_params):
    """
    C{uri_template} with its C{%(...)s} placeholders filled from C{uri_params}; any other
    C{%} (a percent-encoded C{%20}) is kept as it is.

    @raise KeyError: a placeholder names nothing in C{uri_params}.
    """
    parts = []
    last = 0
    for match in _PLACEHOLDER.finditer(uri_template):
        parts.append(uri_template[last:match.start()].replace("%", "%%"))
        parts.append(match.group(0))
        last = match.end()
    parts.append(uri_template[last:].replace("%", "%%"))
    return "".join(parts) % uri_params


def _fill_uri(uri_template, params):
    """
    L{apply_uri_params}, refusing what would let a substituted value choose the folder.

    @raise UsageError: a placeholder names nothing, or its value holds a slash or a
        backslash (percent-encoded too, in a URI, whose storage decodes it), or is
        C{..}, or the values side by side make a C{..} folder.
    """
    uri = _URI.match(uri_template) is not None
    try:
        for match in _PLACEHOLDER.finditer(uri_template):
            value = match.group(0) % params
            if _chooses_folder(unquote(value) if uri else value):
                raise UsageError(f"feed {uri_template!r}: %({match.group(1)})s is {value!r}, "
                                 "which would choose the folder; a substituted value may "
                                 "not hold / or \\ or be '..' (put the folders in the "
                                 "template itself)")
        filled = apply_uri_params(uri_template, params)
    except KeyError as e:
        raise UsageError(f"feed {uri_template!r}: %({e.args[0]})s names nothing (the spider "
                         f"has no attribute {e.args[0]!r})") from None
    except (TypeError, ValueError) as e:
        raise UsageError(f"feed {uri_template!r}: {e}") from None
    if _parent_made(uri_template, filled, uri):
        raise UsageError(f"feed {uri_template!r}: its substituted values make {filled!r}, "
                         "which would choose the folder (a '..' made of values side by "
                         "side)")
    return filled


def _chooses_folder(value):
    return "/" in value or "\\" in value or value == ".."


def _parent_made(template, filled, uri):
    """Whether C{filled} has a C{..} folder where C{template} has a placeholder."""
    if uri:  # its storage reads it decoded
        template, filled = unquote(template), unquote(filled)
    made = _SEPARATORS.split(filled)
    parts = _SEPARATORS.split(template)
    if len(made) != len(parts):  # a value brought a separator: refused before this
        return True
    return any(got == ".." and _PLACEHOLDER.search(part)
               for part, got in zip(parts, made, strict=True))


class ItemFilter:
    """
    Which items a feed takes (its C{item_filter} option names a subclass): by default
    those of its C{item_classes}, or every item.

    @ivar feed_options: the feed's options (None when built without).
    @ivar item_classes: the classes its items must be instances of (empty: any).
    """

    def __init__(self, feed_options):
        """@raise UsageError: a class of C{item_classes} does not import."""
        self.feed_options = feed_options
        classes = (feed_options or {}).get("item_classes") or ()
        self.item_classes = tuple(load_object(each) for each in classes)

    def accepts(self, item):
        """@return: whether the feed takes C{item}."""
        if self.item_classes:
            return isinstance(item, self.item_classes)
        return True


class BlockingFeedStorage:
    """
    The base of a storage that uploads the whole file at the end (Scrapy's; its remote
    storages, S3, GCS and FTP, are not in tinyscrapy: docs/differences.md): items go to a
    temporary file in C{FEED_TEMPDIR}, and L{store} hands it to C{_store_in_thread} in a
    thread.
    """

    def open(self, spider):
        """@return: a temporary file, deleted once closed. @raise OSError: C{FEED_TEMPDIR}
            is not a folder."""
        folder = spider.crawler.settings["FEED_TEMPDIR"]
        if folder and not os.path.isdir(folder):
            raise OSError(f"Not a Directory: {folder}")
        return tempfile.NamedTemporaryFile(prefix="feed-", dir=folder)

    def store(self, file):
        """@return: a Deferred firing once C{_store_in_thread(file)} has returned in a
            thread; it errbacks with what that raised."""
        from twisted.internet.threads import deferToThread
        return deferToThread(self._store_in_thread, file)

    def _store_in_thread(self, file):
        raise NotImplementedError


class _RemoteStorage(BlockingFeedStorage):
    """A storage of Scrapy's that needs a network service tinyscrapy does not test against:
    building it switches the feed off, which stops the start with one line."""

    def __init__(self, uri, *args, feed_options=None, **kwargs):
        """@raise NotConfigured: always."""
        raise NotConfigured(f"{type(self).__name__} is not in tinyscrapy (it needs a network "
                            "service; docs/differences.md): FEED_STORAGES takes a storage of "
                            "your own for this scheme")


class S3FeedStorage(_RemoteStorage):
    """Scrapy's C{s3://} storage: not in tinyscrapy."""


class GCSFeedStorage(_RemoteStorage):
    """Scrapy's C{gs://} storage: not in tinyscrapy."""


class FTPFeedStorage(_RemoteStorage):
    """Scrapy's C{ftp://} and C{ftps://} storage: not in tinyscrapy."""


class _TextToBytes:
    """A text stream (a replaced C{sys.stdout}) that takes bytes."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, data):
        self.stream.write(data.decode("utf-8"))
        return len(data)

    def flush(self):
        self.stream.flush()


class StdoutFeedStorage:
    """C{stdout:} (and C{-}): the items on standard output, flushed after each."""

    def __init__(self, uri, _stdout=None, *, feed_options=None):
        if _stdout is None:
            _stdout = getattr(sys.stdout, "buffer", None) or _TextToBytes(sys.stdout)
        self._stdout = _stdout
        if feed_options and feed_options.get("overwrite", False) is True:
            logger.warning("Standard output (stdout) storage does not support overwriting. "
                           "To suppress this warning, remove the overwrite option from your "
                           "FEEDS setting, or set it to False.")

    def open(self, spider):
        return self._stdout

    def store(self, file):
        """Flush what is left; standard output stays open."""
        file.flush()


class FileFeedStorage:
    """
    A plain path or a C{file://} URI, written through a L{FeedFile}: appended to, or
    replaced with the feed's C{overwrite}.

    @ivar path: the file's path.
    @ivar write_mode: C{"ab"} (append) or C{"wb"} (overwrite), as Scrapy names them.
    """

    def __init__(self, uri, *, feed_options=None):
        if uri.startswith("file:"):
            from w3lib.url import file_uri_to_path
            uri = file_uri_to_path(uri)
        self.path = uri
        self.write_mode = "wb" if (feed_options or {}).get("overwrite", False) else "ab"

    def check(self):
        """
        Make sure the file can be written, changing nothing on disk (no folder is made
        yet): tinyscrapy's, called when the crawler is built.

        @raise UsageError: it cannot be (the message says why).
        """
        path = self.path
        if os.path.isdir(path):
            raise UsageError(f"feed {path}: is a directory, not a file")
        folder = os.path.dirname(os.path.abspath(path))
        while not os.path.exists(folder):  # the nearest folder there is (/ at the least)
            folder = os.path.dirname(folder)
        if not os.path.isdir(folder):
            raise UsageError(f"feed {path}: cannot write it ({folder} is a file)")
        target = path if os.path.exists(path) else folder
        if not os.access(target, os.W_OK):
            raise UsageError(f"feed {path}: cannot write it (permission denied: {target})")
        info = os.statvfs(folder)
        if info.f_blocks == 0:  # no blocks at all: a pseudo-filesystem (/proc, /sys)
            raise UsageError(f"feed {path}: cannot write it ({folder} is on a filesystem "
                             f"that holds no files)")
        free = info.f_bavail * info.f_frsize
        if free < MIN_FREE_BYTES:
            raise UsageError(f"feed {path}: its filesystem is full ({free} bytes free)")

    def open(self, spider):
        """
        @return: the L{FeedFile}, emptied first when overwriting (its folders made).
        @raise OSError: it cannot be opened.
        """
        folder = os.path.dirname(self.path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        return FeedFile(self.path, append=self.write_mode == "ab")

    def store(self, file):
        """Close the file (what is still pending is written first)."""
        file.close()


class FeedFile(io.BufferedIOBase):
    """
    A feed file that takes what an exporter writes for one item and writes it at once,
    where the next item goes: in L{commit}, with the format's closing mark after it,
    which the next item overwrites. What it writes never tears: a write that fails (a
    full disk) is cut off again, the closing mark put back, and the error raised.

    @ivar path: the file's path.
    @ivar name: the same (what gzip writes in its header).
    @ivar offset: where the next item's bytes go.
    @ivar failed: the error that ended writing, or None.
    """

    def __init__(self, path, append=True):
        """@raise OSError: the file cannot be opened."""
        super().__init__()
        self.path = self.name = path
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        self.fd = os.open(path, flags if append else flags | os.O_TRUNC, 0o666)
        self.offset = self._end = os.fstat(self.fd).st_size
        self._mark = b""  # the closing mark on disk at offset
        self._pending = bytearray()
        self.failed = None

    def writable(self):
        return True

    def write(self, data):
        """Keep C{data} for the next L{commit}. @return: its length."""
        self._pending += data
        return len(data)

    def tell(self):
        return self.offset + len(self._pending)

    def flush(self):
        """Nothing: L{commit} writes."""

    def continue_at(self, offset):
        """Write the next item at C{offset} (before the closing mark of what the file
        holds): what follows it is replaced at the next commit, or put back if that fails."""
        self._mark = os.pread(self.fd, self._end - offset, offset)
        self.offset = offset

    def discard(self):
        """Forget what was written since the last commit (an item that failed)."""
        del self._pending[:]

    def commit(self, mark=b""):
        """
        Write what is pending, then C{mark}, at L{offset}, in one write; the next item
        goes where C{mark} starts.

        @raise OSError: the write failed; the file is as it was before it.
        """
        data = bytes(self._pending) + mark if mark else bytes(self._pending)
        try:
            _write_all(self.fd, data, self.offset)
        except OSError as e:
            self.failed = e
            self._cut()
            raise
        self.offset += len(self._pending)
        del self._pending[:]
        end = self.offset + len(mark)
        if self._end > end:  # a continued file: what followed the old mark goes
            os.ftruncate(self.fd, end)
        self._end = end
        self._mark = mark

    def _cut(self):
        """A write failed part-way: cut the file back to the last item, and put its closing
        mark back over bytes the file already has (a full disk has no room for new ones)."""
        try:
            if self._mark:
                _write_all(self.fd, self._mark, self.offset)
            os.ftruncate(self.fd, self.offset + len(self._mark))
        except OSError as e:
            logger.error("feed %s: cannot cut off the item written in part (%s)", self.path, e)

    def close(self):
        """Write what is pending (the exporter's last bytes), cut what follows, close.
        @raise OSError: the last bytes could not be written (the file is closed anyway)."""
        if self.closed:
            return
        try:
            if self.failed is None:
                self.commit()
        finally:
            os.close(self.fd)
            super().close()


def _write_all(fd, data, offset):
    """Write all of C{data} at C{offset}. @raise OSError: the disk is full, say."""
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        if not written:  # no progress (a regular file never does this): never loop
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        offset += written
        view = view[written:]


class _Resume:
    """
    How to continue a file that already holds items, when appending to it.

    @ivar offset: where the next item goes (before a closing mark), or None: at the end.
    @ivar prefix: bytes written first (the newline a cut last line lacks).
    @ivar exporter_kwargs: options for the exporter (a CSV's columns, and no header).
    @ivar drop_start: the exporter's opening bytes are in the file already.
    @ivar first_item: for a JSON array, whether it is empty; else None.
    """

    def __init__(self, offset=None, prefix=b"", exporter_kwargs=None, drop_start=False,
                 first_item=None):
        self.offset = offset
        self.prefix = prefix
        self.exporter_kwargs = exporter_kwargs or {}
        self.drop_start = drop_start
        self.first_item = first_item

    def apply(self, file, exporter):
        """The exporter has started on C{file} (a L{FeedFile}): continue the file instead."""
        if self.drop_start:
            file.discard()
        if self.offset is not None:
            file.continue_at(self.offset)
        if self.first_item is not None:
            exporter.first_item = self.first_item
        file.write(self.prefix)


def _resume_point(path, exporter_cls, options):
    """
    How to append to C{path} with an exporter of C{exporter_cls}, read from the file
    (nothing in it changes).

    @return: a L{_Resume}, or None: the file is empty, missing, or of a format that is
        simply appended to (pickle, marshal, a project's).
    @raise UsageError: it cannot be continued (not a JSON array, not the XML root, other
        CSV columns).
    """
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise UsageError(f"feed {path}: cannot read it to append to it ({e.strerror or e})") \
            from None
    with f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return None
        if issubclass(exporter_cls, JsonItemExporter):
            return _resume_json(f, path, size)
        if issubclass(exporter_cls, XmlItemExporter):
            return _resume_xml(f, path, size, options)
        if issubclass(exporter_cls, CsvItemExporter):
            return _resume_csv(f, path, options)
        if issubclass(exporter_cls, JsonLinesItemExporter):
            return _Resume(prefix=_missing_newline(f, size))
    return None


def _resume_json(f, path, size):
    """Continue a JSON array after its last value."""
    f.seek(0)
    if not f.read(4096).lstrip().startswith(b"["):
        raise UsageError(f"cannot append to {path}: it is not a JSON array")
    closing = _last_non_space(f, size)
    if closing is None or _bytes_at(f, closing, 1) != b"]":
        raise UsageError(f"cannot append to {path}: it is not a JSON array "
                         "(no closing bracket)")
    last = _last_non_space(f, closing)
    return _Resume(offset=last + 1, drop_start=True, first_item=_bytes_at(f, last, 1) == b"[")


def _resume_xml(f, path, size, options):
    """Continue an XML document before its closing root tag."""
    kwargs = options.get("item_export_kwargs") or {}
    mark = f"</{kwargs.get('root_element', 'items')}>".encode(options.get("encoding")
                                                               or "utf-8")
    last = _last_non_space(f, size)
    start = None if last is None else last + 1 - len(mark)
    if start is None or start < 0 or _bytes_at(f, start, len(mark)) != mark:
        raise UsageError(f"cannot append to {path}: it does not end with {mark.decode()}")
    return _Resume(offset=start, drop_start=True)


def _resume_csv(f, path, options):
    """Continue a CSV in the columns of its header (no second header)."""
    kwargs = options.get("item_export_kwargs") or {}
    newline = _missing_newline(f, f.seek(0, os.SEEK_END))
    if not kwargs.get("include_headers_line", True):
        return _Resume(prefix=newline)
    import csv
    f.seek(0)
    line = f.readline(1 << 20).decode(options.get("encoding") or "utf-8", "replace")
    dialect = {key: kwargs[key] for key in ("delimiter", "quotechar") if key in kwargs}
    header = next(csv.reader([line], **dialect), [])
    fields = options.get("fields")
    chosen = list(fields.values()) if isinstance(fields, dict) else fields
    if chosen and list(chosen) != header:
        raise UsageError(f"cannot append to {path}: its columns {header} are not "
                         f"FEED_EXPORT_FIELDS {list(chosen)}")
    return _Resume(prefix=newline, exporter_kwargs={
        "include_headers_line": False, "fields_to_export": fields or header})


def _missing_newline(f, size):
    """C{b"\\n"} when the file's last line lacks its newline (a cut write), else C{b""}."""
    return b"" if _bytes_at(f, size - 1, 1) == b"\n" else b"\n"


def _last_non_space(f, end):
    """The offset of the last byte before C{end} that is not white space, or None."""
    position = end
    while position > 0:
        start = max(0, position - 4096)
        stripped = _bytes_at(f, start, position - start).rstrip()
        if stripped:
            return start + len(stripped) - 1
        position = start
    return None


def _bytes_at(f, offset, length):
    f.seek(offset)
    return f.read(length)


def _closing_mark(exporter):
    """What the exporter's C{finish_exporting} writes (a JSON array's C{]}, the XML root's
    closing tag), kept after each item so that the file is valid between items."""
    if isinstance(exporter, JsonItemExporter):
        return b"\n]" if exporter.indent is not None else b"]"
    if isinstance(exporter, XmlItemExporter):
        return f"</{exporter.root_element}>".encode(exporter.encoding)
    return b""


class FeedSlot:
    """
    One feed file of a crawl (one batch of a batched feed): its storage, its exporter,
    and how many items it holds.

    @ivar file: what the exporter writes to: the storage's file, or the post-processing in
        front of it (None until L{start_exporting}).
    @ivar exporter: the exporter (None until L{start_exporting}).
    @ivar itemcount: the items written.
    @ivar failed: the error that ended writing (a full disk), or None.
    """

    def __init__(self, storage, uri, format, store_empty, batch_id, uri_template,
                 filter, feed_options, spider, exporters, settings, crawler):
        self.storage = storage
        self.uri = uri
        self.format = format
        self.store_empty = store_empty
        self.batch_id = batch_id
        self.uri_template = uri_template
        self.filter = filter
        self.feed_options = feed_options
        self.spider = spider
        self.exporters = exporters
        self.settings = settings
        self.crawler = crawler
        self.file = None
        self.exporter = None
        self.itemcount = 0
        self.failed = None
        self._storage_file = None
        self._mark = b""
        self._resume = None
        self._exporting = False
        self._fileloaded = False

    def check(self):
        """
        The checks at the start (tinyscrapy's): the storage can write (L{FileFeedStorage.check}),
        and a file appended to can be continued.

        @raise UsageError: it cannot.
        """
        check = getattr(self.storage, "check", None)
        if check is not None:
            check()
        if isinstance(self.storage, FileFeedStorage) and self.storage.write_mode == "ab" \
                and not self.feed_options.get("postprocessing"):
            self._resume = _resume_point(self.storage.path, self.exporters[self.format],
                                         self.feed_options)

    def start_exporting(self):
        """
        Open the storage's file, build the exporter and start it (once); what it wrote
        reaches the file.

        @raise OSError: the file cannot be opened or written.
        """
        if not self._fileloaded:
            self._storage_file = self.file = self.storage.open(self.spider)
            if self.feed_options.get("postprocessing"):
                self.file = PostProcessingManager(self.feed_options["postprocessing"],
                                                  self.file, self.feed_options)
            options = self.feed_options
            kwargs = {"fields_to_export": options["fields"], "encoding": options["encoding"],
                      "indent": options["indent"], **options["item_export_kwargs"]}
            if self._resume is not None:
                kwargs.update(self._resume.exporter_kwargs)
            self.exporter = build_from_crawler(self.exporters[self.format], self.crawler,
                                               self.file, **kwargs)
            self._fileloaded = True
        if not self._exporting:
            self.exporter.start_exporting()
            self._exporting = True
            plain = self.file if isinstance(self.file, FeedFile) else None
            if plain is not None:
                if self._resume is not None:
                    self._resume.apply(plain, self.exporter)
                self._mark = _closing_mark(self.exporter)
            self._written()

    def export_item(self, item):
        """
        Write one item (tinyscrapy's: Scrapy's feed exporter calls the exporter itself).

        @raise OSError: the file cannot be written; it is as it was before the item.
        @raise Exception: what the exporter raised (an item it cannot write); nothing of
            the item is in the file.
        """
        self.start_exporting()
        exporter = self.exporter
        header_due = getattr(exporter, "_headers_not_written", False)
        try:
            exporter.export_item(item)
        except Exception:
            if isinstance(self.file, FeedFile):  # (a compressor cannot take bytes back)
                self.file.discard()
                if header_due:  # a CSV header written with the item: again with the next
                    exporter._headers_not_written = True
            raise
        self._written()
        self.itemcount += 1

    def _written(self):
        """What the exporter wrote reaches the file now."""
        file = self._storage_file
        if isinstance(file, FeedFile):
            file.commit(self._mark)
        else:
            flush = getattr(file, "flush", None)
            if flush is not None:
                flush()

    def finish_exporting(self):
        """Let the exporter write its end (once)."""
        if self._exporting:
            self.exporter.finish_exporting()
            self._exporting = False

    def storage_file(self):
        """The storage's own file, for its C{store}: the post-processing is closed first
        (its last bytes written)."""
        if isinstance(self.file, PostProcessingManager):
            self.file.close()
        return self._storage_file


class _SharedFeed:
    """
    A feed open in this process: its current slot (one batch after another) and how many
    crawlers write to it.
    """

    def __init__(self, slot):
        self.slot = slot
        self.users = 0


class FeedExporter:
    """
    The extension that writes scraped items to the C{FEEDS}.

    @ivar feeds: each feed URI template, with its options completed from the settings.
    @ivar filters: each URI template's L{ItemFilter}.
    @ivar storages: C{FEED_STORAGES} over C{FEED_STORAGES_BASE}: URI scheme to class.
    @ivar exporters: C{FEED_EXPORTERS} over C{FEED_EXPORTERS_BASE}: format to class.
    """

    @classmethod
    def from_crawler(cls, crawler):
        exporter = cls(crawler)
        crawler.signals.connect(exporter.open_spider, signals.spider_opened)
        crawler.signals.connect(exporter.close_spider, signals.spider_closed)
        crawler.signals.connect(exporter.item_scraped, signals.item_scraped)
        return exporter

    def __init__(self, crawler):
        """
        Check every feed, and open (or join) its file.

        @raise NotConfigured: no C{FEEDS}.
        @raise UsageError: a feed's format, storage or options are wrong, or its file
            cannot be written (the message says which and why).
        """
        self.crawler = crawler
        self.settings = crawler.settings
        feeds = {}
        if self.settings.get("FEED_URI"):
            warnings.warn("The `FEED_URI` and `FEED_FORMAT` settings have been deprecated in "
                          "favor of the `FEEDS` setting. Please see the `FEEDS` setting docs "
                          "for more details", ScrapyDeprecationWarning, stacklevel=2)
            feeds[str(self.settings.get("FEED_URI"))] = {
                "format": self.settings.get("FEED_FORMAT")}
        feeds.update(self.settings.getdict("FEEDS"))  # FEEDS wins
        if not feeds:
            raise NotConfigured("no FEEDS")
        self.storages = self._load_components("FEED_STORAGES")
        self.exporters = self._load_components("FEED_EXPORTERS")
        self.feeds = {}
        self.filters = {}
        for uri, options in feeds.items():
            uri = str(uri)  # a pathlib.Path too
            self.feeds[uri] = self._complete_options(uri, options)
            self.filters[uri] = self._load_filter(self.feeds[uri])
        self._keys = []  # this crawler's feeds in _OPEN_FEEDS, once its crawl has started
        self._own = {}  # key -> the slot this crawler opens, unless another one has
        self._unchecked = set()  # keys open in another crawler when this one was built
        self._broken = set()
        self._batch_closes = []
        self._closed = None
        self._checked_for = crawler.spider
        if crawler.spider is not None:  # (built as in a crawl; else at open_spider)
            self._open_feeds(crawler.spider)

    @property
    def slots(self):
        """The current L{FeedSlot} of each of this crawler's feeds."""
        return [_OPEN_FEEDS[key].slot for key in self._keys]

    # the checks, when the crawler is built

    def _load_components(self, setting):
        """C{setting} over C{setting_BASE}, each value imported (None switches one off).
        @raise UsageError: a dotted path does not import."""
        merged = {**self.settings.getdict(setting + "_BASE"), **self.settings.getdict(setting)}
        return {key: load_object(value) for key, value in merged.items() if value is not None}

    def _complete_options(self, uri, options):
        """The feed's options, with the settings' defaults and its format.
        @raise UsageError: they are wrong."""
        if options is not None and not isinstance(options, dict):
            raise UsageError(f"FEEDS[{uri!r}]: options must be a dict, got {options!r}")
        settings = self.settings
        out = dict(options or {})
        out["format"] = _format_for(uri, out.get("format"), self.exporters)
        out.setdefault("batch_item_count", settings.getint("FEED_EXPORT_BATCH_ITEM_COUNT"))
        out.setdefault("encoding", settings.get("FEED_EXPORT_ENCODING"))
        fields = settings.get("FEED_EXPORT_FIELDS")
        if isinstance(fields, str) and fields.lstrip().startswith("{"):
            fields = settings.getdict("FEED_EXPORT_FIELDS")  # a dict names the columns
        elif not isinstance(fields, dict):
            fields = settings.getlist("FEED_EXPORT_FIELDS")
        out.setdefault("fields", fields or None)
        out.setdefault("store_empty", settings.getbool("FEED_STORE_EMPTY"))
        out.setdefault("uri_params", settings.get("FEED_URI_PARAMS"))
        out.setdefault("item_export_kwargs", {})
        indent = settings.get("FEED_EXPORT_INDENT")
        out.setdefault("indent", None if indent is None else settings.getint("FEED_EXPORT_INDENT"))
        if out["encoding"] is not None:
            _check_encoding(out["encoding"])
        if out["batch_item_count"] and not _BATCH_PLACEHOLDER.search(uri):
            raise ConfigurationError(f"feed {uri!r}: %(batch_time)s or %(batch_id)d must be "
                                     "in the feed URI if FEED_EXPORT_BATCH_ITEM_COUNT setting "
                                     "or FEEDS.batch_item_count is specified and greater "
                                     "than 0")
        storage = self._storage_class(uri)
        if storage in (FileFeedStorage, StdoutFeedStorage) and not out.get("postprocessing"):
            for key in out:
                if key not in OPTIONS:
                    logger.warning("FEEDS[%r]: option %r is not supported (known: %s); "
                                   "ignored", uri, key, ", ".join(OPTIONS))
        self._check_exporter_options(uri, out)
        return out

    def _storage_class(self, uri):
        """@raise UsageError: no storage takes C{uri}'s scheme."""
        scheme = _scheme(uri)
        if scheme not in self.storages:
            known = ", ".join(f"{s}:" for s in self.storages if s)
            raise ConfigurationError(f"feed {uri!r}: unknown feed storage scheme {scheme!r} "
                                     f"(known: {known} and plain paths; FEED_STORAGES adds one)")
        return self.storages[scheme]

    def _check_exporter_options(self, uri, options):
        """Build one of tinyscrapy's own exporters on a scratch buffer: an option it does not
        take stops the start, not the first item."""
        cls = self.exporters[options["format"]]
        if not cls.__module__.startswith("tinyscrapy."):
            return
        kwargs = options["item_export_kwargs"]
        try:
            cls(io.BytesIO(), fields_to_export=options["fields"], encoding=options["encoding"],
                indent=options["indent"], **kwargs)
        except TypeError as e:
            raise UsageError(f"feed {uri!r}: item_export_kwargs {sorted(kwargs)} are not all "
                             f"options of {cls.__name__} ({e})") from None

    def _load_filter(self, feed_options):
        """The feed's C{item_filter} (a class or dotted path; L{ItemFilter} by default)."""
        return load_object(feed_options.get("item_filter", ItemFilter))(feed_options)

    def _get_storage(self, uri, feed_options):
        """
        Build the storage of C{uri}.

        @raise UsageError: it is switched off (its class raised L{NotConfigured}).
        """
        cls = self._storage_class(uri)
        try:
            return build_from_crawler(cls, self.crawler, "stdout:" if uri == "-" else uri,
                                      feed_options=feed_options)
        except NotConfigured as e:
            raise ConfigurationError(f"feed {uri!r}: disabled feed storage scheme "
                                     f"{_scheme(uri)!r}: {e}") from None

    def _get_uri_params(self, spider, uri_params_function, slot=None):
        """
        What C{%(...)s} in a feed URI names: every attribute of the spider, C{time},
        C{batch_time}, C{batch_id}, then the feed's C{uri_params} function (which may
        change the dict, or return another).
        """
        params = {}
        for name in dir(spider):
            try:
                params[name] = getattr(spider, name)
            except Exception:  # a property that needs a running crawl
                continue
        now = datetime.datetime.now(tz=datetime.timezone.utc)
        params["time"] = now.replace(microsecond=0).isoformat().replace(":", "-")
        params["batch_time"] = now.isoformat().replace(":", "-")
        params["batch_id"] = slot.batch_id + 1 if slot is not None else 1
        if uri_params_function:
            result = load_object(uri_params_function)(params, spider)
            if result is not None:
                params = result
        return params

    def _start_new_batch(self, batch_id, uri, feed_options, spider, uri_template):
        """A L{FeedSlot} for the batch C{batch_id} of a feed, written to C{uri}."""
        return FeedSlot(storage=self._get_storage(uri, feed_options), uri=uri,
                        format=feed_options["format"], store_empty=feed_options["store_empty"],
                        batch_id=batch_id, uri_template=uri_template,
                        filter=self.filters[uri_template], feed_options=feed_options,
                        spider=spider, exporters=self.exporters, settings=self.settings,
                        crawler=self.crawler)

    def _open_feeds(self, spider):
        """Resolve each feed's first URI, and check its file, unless another crawler of this
        process has it open already (then this one joins it when its crawl starts).
        @raise UsageError: see L{__init__}."""
        for template, options in self.feeds.items():
            uri = _fill_uri(template, self._get_uri_params(spider, options["uri_params"]))
            key = _feed_key(uri)
            if key in self._own:
                continue
            slot = self._start_new_batch(1, uri, options, spider, template)
            entry = _OPEN_FEEDS.get(key)
            if entry is not None:
                self._check_joinable(entry, uri, options)
                self._unchecked.add(key)
            else:
                slot.check()
            self._own[key] = slot

    def _check_joinable(self, entry, uri, options):
        """@raise UsageError: this crawler cannot write to C{entry}'s open file too."""
        if entry.slot.format != options["format"]:
            raise UsageError(f"feed {uri!r} is already written as {entry.slot.format}, "
                             f"not {options['format']}")
        if issubclass(self.exporters[options["format"]], CsvItemExporter) \
                and not options["fields"]:
            raise UsageError(_shared_csv(uri))

    # the crawl

    def open_spider(self, spider):
        """
        The crawl has started: open each feed (or join it, when another crawler of this
        process has); a feed that is stored even when empty is written now (an C{-O} file
        replaced only now), the others at their first item.

        @raise UsageError: only when this exporter was built before its spider existed
            (as Scrapy's tests build it), and a feed is wrong for this spider.
        """
        if spider is not self._checked_for:
            self._own, self._unchecked = {}, set()
            self._open_feeds(spider)
        for key, slot in self._own.items():
            entry = _OPEN_FEEDS.get(key)
            try:
                if entry is None:  # the first crawler of this process to write to it
                    if key in self._unchecked:  # another one had it open when this was built
                        slot.check()
                    entry = _OPEN_FEEDS[key] = _SharedFeed(slot)
                else:  # another crawler has it open: this one writes to it too
                    self._check_joinable(entry, slot.uri, slot.feed_options)
            except UsageError as e:
                self._stop(slot.uri, e, None)
                continue
            entry.users += 1
            self._keys.append(key)
            slot = entry.slot
            if slot.store_empty and slot.batch_id == 1 and slot.failed is None \
                    and not slot.itemcount:
                try:
                    slot.start_exporting()
                except OSError as e:
                    self._failed(slot, e, None)
        self._own = {}
        self._unchecked = set()

    def item_scraped(self, item, spider, response=None):
        """Write C{item} to each feed that takes it; start the next batch when one is full."""
        stats = self.crawler.stats
        for key in self._keys:
            entry = _OPEN_FEEDS[key]
            slot = entry.slot
            if not slot.filter.accepts(item):
                continue
            if slot.failed is not None:  # its file is closed for good
                stats.inc_value("feedexport/failed_count")
                self._stop(slot.uri, slot.failed, response)
                continue
            try:
                slot.export_item(item)
            except OSError as e:  # the file, not the item: nothing more goes in
                stats.inc_value("feedexport/failed_count")
                self._failed(slot, e, response)
                continue
            except Exception as e:
                stats.inc_value("feedexport/failed_count")
                if slot.uri not in self._broken:  # once per file, not once per item
                    self._broken.add(slot.uri)
                    logger.error("cannot write an item from %s to the feed %s: %s: %s",
                                 getattr(response, "url", None), slot.uri, type(e).__name__, e)
                continue
            stats.inc_value("feedexport/items_count")
            count = slot.feed_options["batch_item_count"]
            if count and slot.itemcount >= count:
                self._next_batch(entry, spider)

    def _next_batch(self, entry, spider):
        """The slot of C{entry} is full: store it, and write the next items to a new file
        (opened with its first item)."""
        slot = entry.slot
        self._batch_closes.append(self._close_slot(slot))
        try:
            params = self._get_uri_params(spider, slot.feed_options["uri_params"], slot)
            uri = _fill_uri(slot.uri_template, params)
            entry.slot = self._start_new_batch(slot.batch_id + 1, uri, slot.feed_options,
                                               slot.spider, slot.uri_template)
        except UsageError as e:  # a value that would choose the folder: no more batches
            slot.failed = e
            self._stop(slot.uri, e, None)

    def _failed(self, slot, error, response):
        """C{slot}'s file cannot be written: nothing more goes in; the crawl stops."""
        slot.failed = error
        self._stop(slot.uri, error, response)

    def _stop(self, uri, error, response):
        """The feed C{uri} cannot be written: acknowledge nothing more, stop the crawl
        (logged once per file)."""
        if uri not in self._broken:
            self._broken.add(uri)
            logger.error("cannot write the feed %s (%s: %s): the crawl stops (feed_error); "
                         "the item from %s and the later ones are not in it, and their "
                         "pages are not acknowledged (a run with the same --jobdir fetches "
                         "them again)", uri, type(error).__name__,
                         getattr(error, "strerror", None) or error,
                         getattr(response, "url", None))
        engine = self.crawler.engine
        if engine is not None:
            engine.stop_for_error("feed_error")

    # the end

    def close_feeds(self):
        """
        Close (and store) this crawler's feeds; the last crawler writing to a file closes
        it. Called before the frontier's last write, so nothing is acknowledged that is not
        in a file; C{spider_closed} calls it again, which does nothing.

        @return: a Deferred firing once every feed is stored and C{feed_exporter_closed}
            was sent; it never errbacks (each failure is counted and logged).
        """
        if self._closed is None:
            closes = self._batch_closes
            for key in self._keys:
                entry = _OPEN_FEEDS[key]
                entry.users -= 1
                if entry.users == 0:
                    del _OPEN_FEEDS[key]
                    closes.append(self._close_slot(entry.slot))
            self._keys = []
            d = DeferredList(closes)
            d.addCallback(self._cb_feeds_closed)
            self._closed = d
        return self._closed

    def close_spider(self, spider=None):
        """Scrapy's name: L{close_feeds}."""
        return self.close_feeds()

    def _cb_feeds_closed(self, _):
        return self.crawler.signals.send_deferred(signals.feed_exporter_closed)

    def _close_slot(self, slot):
        """
        Finish C{slot}'s file and store it (a feed nothing was written to is stored only if
        C{store_empty}, and only for its first batch).

        @return: a Deferred firing with None once stored; it never errbacks.
        """
        if slot.failed is not None:
            logger.error("feed %s: %d items written before it failed", slot.uri,
                         slot.itemcount)
            return maybeDeferred(_close_failed, slot)
        try:
            if not slot.itemcount and not (slot.store_empty and slot.batch_id == 1):
                return succeed(None)  # nothing was opened
            slot.start_exporting()
            slot.finish_exporting()
            d = maybeDeferred(slot.storage.store, slot.storage_file())
        except Exception as e:
            d = maybeDeferred(_raise, e)
        d.addCallbacks(self._cb_stored, self._eb_store_failed, callbackArgs=(slot,),
                       errbackArgs=(slot,))
        d.addCallback(self._cb_slot_closed, slot)
        return d

    def _cb_stored(self, _, slot):
        logger.info("Stored %s feed (%d items) in: %s", slot.format, slot.itemcount, slot.uri)
        self.crawler.stats.inc_value(f"feedexport/success_count/{type(slot.storage).__name__}")

    def _eb_store_failed(self, failure, slot):
        """The last bytes could not be written or stored: counted, logged once; an OSError
        (a full disk) turns the finish reason into C{feed_error}."""
        self.crawler.stats.inc_value(f"feedexport/failed_count/{type(slot.storage).__name__}")
        logger.error("Error storing %s feed (%d items) in: %s (%s: %s)", slot.format,
                     slot.itemcount, slot.uri, failure.type.__name__, failure.getErrorMessage())
        if failure.check(OSError):
            self._broken.add(slot.uri)
            self._stop(slot.uri, failure.value, None)

    def _cb_slot_closed(self, _, slot):
        d = self.crawler.signals.send_deferred(signals.feed_slot_closed, slot=slot)
        d.addCallback(_nothing)
        return d


def _nothing(_):
    return None


def _raise(error):
    raise error


def _close_failed(slot):
    """Close the file of a slot that failed (a full disk): nothing more is written."""
    if isinstance(slot._storage_file, FeedFile):
        slot._storage_file.close()


def _scheme(uri):
    """The storage scheme of a feed URI: C{stdout} for C{-}, C{""} for a plain path."""
    if uri == "-":
        return "stdout"
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", uri)
    if match is None or len(match.group(1)) == 1:  # a path, or a Windows drive letter
        return ""
    return match.group(1).lower()


def _feed_key(uri):
    """What identifies a feed's file among the crawlers of this process."""
    scheme = _scheme(uri)
    if scheme == "":
        return os.path.abspath(uri)
    if scheme == "file":
        from w3lib.url import file_uri_to_path
        return os.path.abspath(file_uri_to_path(uri))
    return "-" if scheme == "stdout" else uri


def _format_for(uri, fmt, exporters):
    """
    The feed's format: C{fmt}, else from the URI's extension (C{-} and C{stdout:} print
    JSON lines).

    @raise UsageError: no exporter writes it.
    """
    if not fmt:
        if uri in ("-", "stdout:"):
            return "jsonlines"
        path = re.sub(r"[?#].*$", "", uri) if _scheme(uri) not in ("", "file") else uri
        fmt = os.path.splitext(path)[1][1:].lower()
        if fmt not in exporters:
            known = ", ".join("." + name for name in exporters)
            raise ConfigurationError(f"cannot tell the feed format of {uri!r}: use one of "
                                     f"{known}, or name it (the feed's format option, "
                                     "-o FILE:FORMAT)")
    if fmt not in exporters:
        raise ConfigurationError(f"feed {uri!r}: unknown feed format {fmt!r} (known: "
                                 f"{', '.join(exporters)}; FEED_EXPORTERS adds one)")
    return fmt


def _check_encoding(encoding):
    """@raise UsageError: C{encoding} is unknown, or not a superset of ASCII (the brackets
    and commas of the feeds are written as ASCII bytes)."""
    try:
        compatible = "[,]\n".encode(encoding) == b"[,]\n"
    except LookupError:
        raise UsageError(f"unknown feed encoding {encoding!r}") from None
    if not compatible:
        raise UsageError(f"feed encoding {encoding!r} is not ASCII-compatible "
                         "(use utf-8, latin-1, cp1252, ...)")


def check_shared_feeds(settings, spider_count):
    """
    Refuse, before any file is opened, a CSV feed that several spiders would share.

    @raise UsageError: C{spider_count} spiders run and a C{FEEDS} path without
        C{%(name)s} is CSV while no C{fields} / C{FEED_EXPORT_FIELDS} choose its columns.
    """
    if spider_count < 2 or settings.getlist("FEED_EXPORT_FIELDS"):
        return
    for path, options in settings.getdict("FEEDS").items():
        path = str(path)
        options = options if isinstance(options, dict) else {}
        if "%(" in path or options.get("fields") or _scheme(path) not in ("", "file"):
            continue
        fmt = options.get("format") or os.path.splitext(path)[1][1:].lower()
        if fmt == "csv":
            raise UsageError(_shared_csv(path))


def _shared_csv(path):
    return (f"feed {path!r}: several spiders cannot share one CSV file, whose columns are "
            f"one spider's (the others' rows would be blank): put %(name)s in the path, "
            f"as -o 'items-%(name)s.csv', set FEED_EXPORT_FIELDS, or write .jsonl")

"""
The feed file writers: an item (a dict, or a dataclass or attrs item) in, whole lines out,
written and flushed at once. One class per format: L{JsonLinesWriter}, L{JsonWriter},
L{CsvWriter}; L{WRITERS} names them for C{FEEDS}.

A C{.json} feed is a JSON array that is valid after every item: the closing bracket is
written after each item, and the next item overwrites it. Appending to one continues the
array already in the file. Appending to a C{.csv} keeps the columns of its header.

L{tinyscrapy.items.feeds.FeedExporter} opens them and shares one writer per path.
"""

import csv
import io
import json
import logging
import os
import sys

from tinyscrapy.errors import UsageError

# the feeds' log, as before the writers had a module of their own
logger = logging.getLogger("tinyscrapy.items.feeds")


class _Writer:
    """
    A feed file, opened in binary mode; subclasses turn an item (a dict) into text.

    @ivar existing: True when appending to a file that already has content.
    @ivar count: the items written by this process.
    """

    format = None

    def __init__(self, path, overwrite=False, fields=None, encoding="utf-8"):
        self.path = path
        self.fields = list(fields) if fields else None
        self.encoding = _check_encoding(encoding)
        self.count = 0
        if path == "-":
            self.file = getattr(sys.stdout, "buffer", None) or _TextToBytes(sys.stdout)
            self.existing = False
        else:
            self.existing = not overwrite and os.path.isfile(path) \
                and os.path.getsize(path) > 0
            try:
                folder = os.path.dirname(path)
                if folder:
                    os.makedirs(folder, exist_ok=True)
                self.file = open(path, "r+b" if self.existing else "wb")
            except OSError as e:
                raise UsageError(f"cannot open the feed {path}: {e.strerror or e}") from None
            if self.existing:
                self.file.seek(0, os.SEEK_END)
        try:
            self.start()
        except Exception:  # refused (not a JSON array, other columns): let the file go
            if path != "-":
                self.file.close()
            raise

    def start(self):
        """Called once after opening."""

    def write_item(self, item):
        """Write one item and flush it to the operating system."""
        self.file.write(self.serialize(_as_dict(item)).encode(
            self.encoding, self.encoding_errors))
        self.file.flush()
        self.count += 1

    encoding_errors = "strict"

    def _select(self, item):
        """Only C{fields}, in their order, when they are set."""
        if self.fields is None:
            return item
        return {field: item[field] for field in self.fields if field in item}

    def _end_line(self):
        """Appending to a file whose last line has no newline: add it first."""
        if self.existing:
            self.file.seek(-1, os.SEEK_END)
            last = self.file.read(1)
            if last != b"\n":
                self.file.write(b"\n")

    def close(self):
        self.finish()
        self.file.flush()
        if self.path != "-":
            self.file.close()

    def finish(self):
        """Called once before closing."""


class JsonLinesWriter(_Writer):
    """One JSON object per line."""

    format = "jsonlines"

    def start(self):
        self._end_line()

    def serialize(self, item):
        return json.dumps(self._select(item), ensure_ascii=_ascii_only(self.encoding),
                          default=str) + "\n"


class JsonWriter(_Writer):
    """A JSON array, valid after every item. Appending reopens the array."""

    format = "json"
    TAIL = b"\n]\n"

    def start(self):
        self.seekable = self.path != "-" and self.file.seekable()
        if self.existing:
            self.first = self._reopen_array()
        else:
            self.file.write(b"[")
            self.first = True
        self._write_tail()

    def _reopen_array(self):
        """
        Position the file just after the last value of its array, before the C{]}.

        @return: True if the array is empty.
        @raise UsageError: the file is not a JSON array.
        """
        f = self.file
        f.seek(0)
        if not f.read(4096).lstrip().startswith(b"["):
            raise UsageError(f"cannot append to {self.path}: it is not a JSON array")
        end = f.seek(0, os.SEEK_END)
        closing = _last_non_space(f, end)
        if closing is None or _byte_at(f, closing) != b"]":
            raise UsageError(f"cannot append to {self.path}: it is not a JSON array "
                             "(no closing bracket)")
        last = _last_non_space(f, closing)
        f.seek(last + 1)
        f.truncate()
        return _byte_at(f, last) == b"["

    def _write_tail(self):
        """Write the closing bracket, then step back so the next item overwrites it."""
        if not self.seekable:
            return
        self.file.write(self.TAIL)
        self.file.flush()
        self.file.seek(-len(self.TAIL), os.SEEK_CUR)

    def serialize(self, item):
        prefix = "\n" if self.first else ",\n"
        self.first = False
        text = json.dumps(self._select(item), ensure_ascii=_ascii_only(self.encoding),
                          default=str)
        return prefix + text

    def write_item(self, item):
        """Write the item and the closing bracket in one write; step back before the
        bracket, so the next item overwrites it."""
        data = self.serialize(_as_dict(item)).encode(self.encoding, self.encoding_errors)
        if self.seekable:
            data += self.TAIL
        self.file.write(data)
        self.file.flush()
        if self.seekable:
            self.file.seek(-len(self.TAIL), os.SEEK_CUR)
        self.count += 1

    def finish(self):
        if self.seekable:
            # the tail is on disk already; an item is never shorter than it, so nothing
            # of an older tail is left behind it
            self.file.seek(len(self.TAIL), os.SEEK_CUR)
            self.file.truncate()
        else:
            self.file.write(self.TAIL)


class CsvWriter(_Writer):
    """
    CSV with a header; columns from C{FEED_EXPORT_FIELDS}, else from the first item (or,
    when appending, from the header already in the file).
    """

    format = "csv"
    encoding_errors = "replace"

    def start(self):
        self.header_written = self.existing
        self._ignored = set()
        self._guessed = False  # columns taken from an item or a header, not chosen
        if self.existing:
            header = self._read_header()
            if self.fields is None:
                self.fields = header
                self._guessed = True
            elif self.fields != header:
                raise UsageError(f"cannot append to {self.path}: its columns {header} are "
                                 f"not FEED_EXPORT_FIELDS {self.fields}")
            self._end_line()

    def _read_header(self):
        self.file.seek(0)
        line = self.file.readline().decode(self.encoding, "replace")
        self.file.seek(0, os.SEEK_END)
        return next(csv.reader([line]), [])

    def serialize(self, item):
        buffer = io.StringIO()
        if self.fields is None:
            self.fields = list(item)
            self._guessed = True
        if self._guessed:
            self._warn_ignored(item)
        writer = csv.DictWriter(buffer, self.fields, extrasaction="ignore",
                                lineterminator="\n")
        if not self.header_written:
            writer.writeheader()
            self.header_written = True
        writer.writerow({k: _csv_value(v) for k, v in item.items()})
        return buffer.getvalue()

    def _warn_ignored(self, item):
        """A field that is not a column is left out: say so once per field (unless the
        columns are the user's choice)."""
        for field in item:
            if field not in self.fields and field not in self._ignored:
                self._ignored.add(field)
                logger.warning("feed %s: field %r is not one of the CSV columns %s; "
                               "set FEED_EXPORT_FIELDS to keep it", self.path, field,
                               self.fields)


def _as_dict(item):
    """A dict item as it is; a dataclass or attrs item as a dict, through itemadapter
    (imported on first need, as in the scraper: it costs a fifth of a second)."""
    if type(item) is dict:
        return item
    from itemadapter import ItemAdapter
    return ItemAdapter(item).asdict()


def _csv_value(value):
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return value


def _check_encoding(encoding):
    """@raise UsageError: C{encoding} is unknown, or not a superset of ASCII (the
    brackets and commas of the feeds are written as ASCII bytes)."""
    try:
        compatible = "[,]\n".encode(encoding) == b"[,]\n"
    except LookupError:
        raise UsageError(f"unknown feed encoding {encoding!r}") from None
    if not compatible:
        raise UsageError(f"feed encoding {encoding!r} is not ASCII-compatible "
                         "(use utf-8, latin-1, cp1252, ...)")
    return encoding


def _ascii_only(encoding):
    """JSON escapes non-ASCII characters unless the file's encoding is a UTF."""
    return not encoding.lower().replace("-", "").replace("_", "").startswith("utf")


def _last_non_space(f, end):
    """The offset of the last byte before C{end} that is not white space, or None."""
    position = end
    while position > 0:
        start = max(0, position - 4096)
        f.seek(start)
        chunk = f.read(position - start)
        stripped = chunk.rstrip()
        if stripped:
            return start + len(stripped) - 1
        position = start
    return None


def _byte_at(f, offset):
    f.seek(offset)
    return f.read(1)


class _TextToBytes:
    """A text stream (a replaced C{sys.stdout}) that accepts bytes."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, data):
        self.stream.write(data.decode("utf-8"))

    def flush(self):
        self.stream.flush()

    def seekable(self):
        return False


WRITERS = {"jsonlines": JsonLinesWriter, "json": JsonWriter, "csv": CsvWriter}

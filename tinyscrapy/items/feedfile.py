"""
L{FeedFile}: a feed file that L{tinyscrapy.items.writers} writes one format into: opened
(or appended to), each item turned into a dict of what is written (through itemadapter,
with each field's C{serializer}), selected C{fields}, flushed after each item. And
L{ClosedAfterEachItem}, for formats that end with a closing mark (JSON, XML).
"""

import os
import sys

from tinyscrapy.errors import UsageError


class FeedFile:
    """
    A feed file, opened in binary mode; subclasses (one per format, in
    L{tinyscrapy.items.writers}) turn an item, as a dict, into text.

    @ivar existing: True when appending to a file that already has content.
    @ivar count: the items written by this process.
    """

    format = None
    OPTIONS = ()  # the item_export_kwargs of this format, beside export_empty_fields

    def __init__(self, path, overwrite=False, fields=None, encoding="utf-8", indent=0,
                 export_kwargs=None):
        self.path = path
        kwargs = dict(export_kwargs or {})
        fields = kwargs.pop("fields_to_export", fields)
        self.names = dict(fields) if isinstance(fields, dict) else None  # output names
        self.fields = list(fields) if fields else None
        self.encoding = _check_encoding(kwargs.pop("encoding", encoding))
        self.indent = kwargs.pop("indent", indent)
        self.export_empty = bool(kwargs.pop("export_empty_fields", False))
        unknown = sorted(set(kwargs) - set(self.OPTIONS))
        if unknown:
            raise UsageError(f"feed {path}: item_export_kwargs {', '.join(unknown)} not "
                             f"supported for {self.format} (known: "
                             + ", ".join(("export_empty_fields",) + self.OPTIONS) + ")")
        self.kwargs = kwargs
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
        except Exception as e:  # refused (not a JSON array, other columns): let the file go
            if path != "-":
                _close_dropping_buffer(self.file)
            if isinstance(e, OSError):  # a full disk at the start: one line, exit 2
                raise UsageError(f"cannot write the feed {path}: {e.strerror or e}") from None
            raise

    def start(self):
        """Called once after opening."""

    def write_item(self, item):
        """Write one item and flush it to the operating system."""
        data = self.serialize(self._as_dict(item)).encode(self.encoding, self.encoding_errors)
        self.file.write(data)
        self.file.flush()
        if self._offset is not None:
            self._offset += len(data)
        self.count += 1

    _offset = None  # where the next item starts, once known (see offset)

    def offset(self):
        """
        Where the next item starts in the file, or None (stdout, a pipe): what a torn
        write is cut back to. Asked of the file once, then counted by L{write_item}, which
        saves a system call a page.
        """
        if self._offset is None:
            if self.path == "-" or not self.file.seekable():
                return None
            self._offset = self.file.tell()
        return self._offset

    encoding_errors = "strict"

    def _as_dict(self, item):
        """
        The item as a dict of what is written: a plain dict as it is; any other item
        through itemadapter (imported on first need, as in the scraper: it costs a
        fifth of a second), each value through its field's C{serializer}. With
        C{export_empty_fields}, a declared field without a value is written as None.
        The fields come in their declared order, as in Scrapy's exporters.
        """
        if type(item) is dict and not self.export_empty:
            return item
        from itemadapter import ItemAdapter
        adapter = ItemAdapter(item)
        names = adapter.field_names() if self.export_empty else _populated(adapter)
        values = {}
        for name in names:
            value = adapter.get(name)
            serializer = _serializer(adapter, name)
            values[name] = serializer(value) if serializer is not None else value
        return values

    def _select(self, item):
        """Only C{fields}, in their order, when they are set (and renamed, when
        C{fields} is a dict)."""
        if self.fields is None:
            return item
        names = self.names
        if names is None:
            return {field: item[field] for field in self.fields if field in item}
        return {names[field]: item[field] for field in self.fields if field in item}

    def _end_line(self):
        """Appending to a file whose last line has no newline: add it first."""
        if self.existing:
            self._offset = None
            self.file.seek(-1, os.SEEK_END)
            last = self.file.read(1)
            if last != b"\n":
                self.file.write(b"\n")
                self.file.flush()  # on disk before any item (or the full disk said now)

    def close(self):
        self.finish()
        self.file.flush()
        if self.path != "-":
            self.file.close()

    def finish(self):
        """Called once before closing."""


class ClosedAfterEachItem(FeedFile):
    """
    A feed whose format ends with a closing mark (C{]}, C{</items>}): it is written after
    every item, and the next item overwrites it, so the file is valid between items.

    @ivar tail: the closing mark, as bytes (set by the subclass's C{start}).
    """

    tail = b""

    def _write_tail(self):
        """Write the closing mark, then step back so the next item overwrites it."""
        self.seekable = self.path != "-" and self.file.seekable()
        if not self.seekable:
            return
        self._offset = None
        self.file.write(self.tail)
        self.file.flush()
        self.file.seek(-len(self.tail), os.SEEK_CUR)

    def write_item(self, item):
        """Write the item and the closing mark in one write; step back before the mark,
        so the next item overwrites it."""
        data = self.serialize(self._as_dict(item)).encode(self.encoding,
                                                           self.encoding_errors)
        if self.seekable:
            data += self.tail
        self.file.write(data)
        self.file.flush()
        if self.seekable:
            self.file.seek(-len(self.tail), os.SEEK_CUR)
        if self._offset is not None:  # the next item starts where the mark does
            self._offset += len(data) - (len(self.tail) if self.seekable else 0)
        self.count += 1

    def finish(self):
        if self.seekable:
            # the mark is on disk already, right after the last item: keep it, cut the rest
            self.file.seek(len(self.tail), os.SEEK_CUR)
            self.file.truncate()
        else:
            self.file.write(self.tail)


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


def ascii_only(encoding):
    """JSON escapes non-ASCII characters unless the file's encoding is a UTF."""
    return not encoding.lower().replace("-", "").replace("_", "").startswith("utf")


def last_non_space(f, end):
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


def byte_at(f, offset):
    f.seek(offset)
    return f.read(1)


def bytes_at(f, offset, length):
    f.seek(offset)
    return f.read(length)


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


def _serializer(adapter, name):
    """The C{serializer} in a field's metadata, or None."""
    try:
        return adapter.get_field_meta(name).get("serializer")
    except (KeyError, TypeError, AttributeError):
        return None


def _populated(adapter):
    """The names of C{adapter}'s fields that have a value, in declaration order (those an
    item holds without declaring them last), as Scrapy's exporters write them."""
    keys = list(adapter.keys())
    present = set(keys)
    return dict.fromkeys([*(name for name in adapter.field_names() if name in present),
                          *keys])


def _close_dropping_buffer(file):
    """Close C{file}; if what its buffer holds cannot be written (a full disk), close it
    without writing it."""
    try:
        file.close()
    except OSError:
        raw = getattr(file, "raw", None)
        if raw is not None:
            raw.close()


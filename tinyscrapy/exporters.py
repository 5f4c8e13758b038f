"""
The feed writers, at Scrapy's C{scrapy.exporters}: an item (a dict, an
L{tinyscrapy.item.Item}, a dataclass or attrs item) in, whole lines out, written and
flushed at once. One class per format: L{JsonLinesWriter}, L{JsonWriter}, L{CsvWriter},
L{XmlWriter}; L{WRITERS} names them for C{FEEDS}. They write what Scrapy's item exporters
write, with the same options: C{fields} (a list, or a dict of field to column name),
C{indent}, C{encoding} and C{item_export_kwargs} (C{export_empty_fields}; for CSV
C{include_headers_line}, C{join_multivalued}, C{delimiter} and the other C{csv} options;
for XML C{item_element} and C{root_element}; for JSON C{sort_keys} and C{ensure_ascii}). A
field's C{serializer} (C{Field(serializer=...)}) turns its value into what is written.

Each writes into a L{FeedFile}: opened (or appended to), each item turned into a dict of
what is written (through itemadapter, with each field's C{serializer}), selected
C{fields}, flushed after each item; L{ClosedAfterEachItem} is the kind for formats that
end with a closing mark. A C{.json} feed is a JSON array, and a C{.xml} feed an XML
document, that is valid after every item: the closing bracket (or tag) is written after
each item, and the next item overwrites it. Appending to one continues the array (or the
root element) already in the file. Appending to a C{.csv} keeps the columns of its header.

L{tinyscrapy.extensions.feedexport.FeedExporter} opens them and shares one writer per path.
"""

import csv
import datetime
import decimal
import io
import json
import logging
import os
import sys
from xml.sax.saxutils import escape

from tinyscrapy.exceptions import UsageError

# the feeds' log, as before the writers had a module of their own
logger = logging.getLogger("tinyscrapy.extensions.feedexport")  # the feeds' lines, all in one place


class FeedFile:
    """
    A feed file, opened in binary mode; subclasses (one per format, in
    L{tinyscrapy.exporters}) turn an item, as a dict, into text.

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


class JsonLinesWriter(FeedFile):
    """One JSON object per line (C{indent} does not apply, as in Scrapy)."""

    format = "jsonlines"
    OPTIONS = ("sort_keys", "ensure_ascii")

    def start(self):
        self._end_line()
        self.json_options = _json_options(self, indented=False)

    def serialize(self, item):
        return json.dumps(self._select(item), **self.json_options) + "\n"


def _json_options(writer, indented):
    """The C{json.dumps} keywords of a JSON feed."""
    options = {"ensure_ascii": ascii_only(writer.encoding), "default": _json_default}
    options.update(writer.kwargs)
    if indented and writer.indent:
        options["indent"] = writer.indent
    return options


class JsonWriter(ClosedAfterEachItem):
    """A JSON array, valid after every item. Appending reopens the array."""

    format = "json"
    OPTIONS = JsonLinesWriter.OPTIONS
    tail = b"\n]\n"

    def start(self):
        self.json_options = _json_options(self, indented=True)
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
        closing = last_non_space(f, end)
        if closing is None or byte_at(f, closing) != b"]":
            raise UsageError(f"cannot append to {self.path}: it is not a JSON array "
                             "(no closing bracket)")
        last = last_non_space(f, closing)
        f.seek(last + 1)
        f.truncate()
        return byte_at(f, last) == b"["

    def serialize(self, item):
        prefix = "\n" if self.first else ",\n"  # first is cleared once an item is written
        return prefix + json.dumps(self._select(item), **self.json_options)

    def write_item(self, item):
        super().write_item(item)
        self.first = False


class CsvWriter(FeedFile):
    """
    CSV with a header; columns from C{FEED_EXPORT_FIELDS}, else from the first item (every
    declared field of an L{Item}, as in Scrapy), or, when appending, from the header
    already in the file.
    """

    format = "csv"
    encoding_errors = "replace"
    OPTIONS = ("include_headers_line", "join_multivalued", "delimiter", "quotechar",
               "escapechar", "doublequote", "skipinitialspace", "lineterminator",
               "quoting", "strict")

    def start(self):
        self.include_header = self.kwargs.pop("include_headers_line", True)
        self.join = self.kwargs.pop("join_multivalued", ",")
        self.csv_options = {"lineterminator": "\r\n", **self.kwargs}  # as Scrapy, RFC 4180
        self.header_written = self.existing or not self.include_header
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
        delimiter = self.csv_options.get("delimiter", ",")
        return next(csv.reader([line], delimiter=delimiter), [])

    def write_item(self, item):
        if self.fields is None:
            self.fields = _declared_fields(item) or list(self._as_dict(item))
            self._guessed = True
        super().write_item(item)

    def serialize(self, item):
        buffer = io.StringIO()
        if self._guessed:
            self._warn_ignored(item)
        writer = csv.writer(buffer, **self.csv_options)
        if not self.header_written:
            writer.writerow([self.names[f] for f in self.fields] if self.names
                            else self.fields)
            self.header_written = True
        writer.writerow([_csv_value(item.get(field), self.join) for field in self.fields])
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


class XmlWriter(ClosedAfterEachItem):
    """
    An XML document, as Scrapy's: C{<items>} holding one C{<item>} per item, a field per
    element, a list as C{<value>} elements, a dict as elements named by its keys. With
    C{indent} 0 (the default) each item is one line; with more, every element is.
    """

    format = "xml"
    OPTIONS = ("item_element", "root_element")
    encoding_errors = "xmlcharrefreplace"

    def start(self):
        self.item_element = self.kwargs.get("item_element", "item")
        root = self.kwargs.get("root_element", "items")
        self.tail = f"</{root}>".encode("ascii")
        if self.existing:
            self._reopen_root()
        else:
            head = f'<?xml version="1.0" encoding="{self.encoding}"?>\n<{root}>'
            self.file.write(head.encode("ascii"))
            if self.indent is not None:
                self.file.write(b"\n")
        self._write_tail()

    def _reopen_root(self):
        """Position the file before its closing root tag. @raise UsageError: none."""
        f = self.file
        end = f.seek(0, os.SEEK_END)
        last = last_non_space(f, end)
        start = None if last is None else last + 1 - len(self.tail)
        if start is None or start < 0 or bytes_at(f, start, len(self.tail)) != self.tail:
            raise UsageError(f"cannot append to {self.path}: it does not end with "
                             f"{self.tail.decode()}")
        f.seek(start)
        f.truncate()

    def serialize(self, item):
        lines = []
        self._element(lines, self.item_element, self._select(item), 1)
        if self.indent is not None and not self.indent:
            lines.append("\n")
        return "".join(lines)

    def _element(self, out, name, value, depth):
        """Append the element C{name} holding C{value} to C{out}."""
        indent = self.indent
        pad, newline = (" " * (indent * depth), "\n") if indent else ("", "")
        if hasattr(value, "items") or isinstance(value, (list, tuple)):
            children = value.items() if hasattr(value, "items") else \
                (("value", each) for each in value)
            out.append(f"{pad}<{name}>{newline}")
            for child, each in children:
                self._element(out, child, each, depth + 1)
            out.append(f"{pad}</{name}>{newline}")
        else:
            text = value if isinstance(value, str) else str(value)
            out.append(f"{pad}<{name}>{escape(text)}</{name}>{newline}")


def _declared_fields(item):
    """Every declared field of an item that declares them (an L{Item}, a dataclass),
    else None (a dict: its keys are the fields)."""
    if isinstance(item, dict):
        return None
    from itemadapter import ItemAdapter
    names = ItemAdapter.get_field_names_from_class(type(item))
    return list(names) if names else None


def _json_default(value):
    """What Scrapy's JSON encoder makes of values JSON has no type for."""
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, datetime.date):
        return value.strftime("%Y-%m-%d")
    if isinstance(value, datetime.time):
        return value.strftime("%H:%M:%S")
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    from itemadapter import ItemAdapter, is_item
    if is_item(value):
        return ItemAdapter(value).asdict()
    return str(value)


def _csv_value(value, join=","):
    """A list of strings joined with C{join}; None as an empty cell."""
    if isinstance(value, (list, tuple)):
        try:
            return join.join(value)
        except TypeError:  # not all strings: written as Python shows it, as in Scrapy
            return str(list(value)) if isinstance(value, list) else str(value)
    return "" if value is None else value


WRITERS = {"jsonlines": JsonLinesWriter, "json": JsonWriter, "csv": CsvWriter,
           "xml": XmlWriter}

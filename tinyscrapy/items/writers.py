"""
The feed file writers: an item (a dict, an L{tinyscrapy.item.Item}, a dataclass or attrs
item) in, whole lines out, written and flushed at once. One class per format:
L{JsonLinesWriter}, L{JsonWriter}, L{CsvWriter}, L{XmlWriter}; L{WRITERS} names them for
C{FEEDS}. They write what Scrapy's item exporters write, with the same options: C{fields}
(a list, or a dict of field to column name), C{indent}, C{encoding} and
C{item_export_kwargs} (C{export_empty_fields}; for CSV C{include_headers_line},
C{join_multivalued}, C{delimiter} and the other C{csv} options; for XML C{item_element}
and C{root_element}; for JSON C{sort_keys} and C{ensure_ascii}). A field's
C{serializer} (C{Field(serializer=...)}) turns its value into what is written.

A C{.json} feed is a JSON array, and a C{.xml} feed an XML document, that is valid after
every item: the closing bracket (or tag) is written after each item, and the next item
overwrites it. Appending to one continues the array (or the root element) already in the
file. Appending to a C{.csv} keeps the columns of its header.

L{tinyscrapy.items.feeds.FeedExporter} opens them and shares one writer per path.
"""

import csv
import datetime
import decimal
import io
import json
import logging
import os
from xml.sax.saxutils import escape

from tinyscrapy.errors import UsageError
from tinyscrapy.items.feedfile import (
    ClosedAfterEachItem,
    FeedFile,
    ascii_only,
    byte_at,
    bytes_at,
    last_non_space,
)

# the feeds' log, as before the writers had a module of their own
logger = logging.getLogger("tinyscrapy.items.feeds")


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

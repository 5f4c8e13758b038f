"""
Item exporters, Scrapy's (C{scrapy.exporters}): an item (a dict, an
L{tinyscrapy.item.Item}, a dataclass or attrs object) in, the bytes of one format out,
written to a binary file object.

    exporter = CsvItemExporter(file, fields_to_export=["name", "price"])
    exporter.start_exporting()
    exporter.export_item(item)           # as many times as there are items
    exporter.finish_exporting()

One class per format, with Scrapy's names and options: L{JsonItemExporter},
L{JsonLinesItemExporter}, L{CsvItemExporter}, L{XmlItemExporter}, L{PprintItemExporter},
L{MarshalItemExporter}, L{PickleItemExporter} (written only: nothing in tinyscrapy reads
a pickle back), and L{PythonItemExporter} (items as plain Python values, for a format of
your own). Every one takes L{BaseItemExporter}'s options: C{fields_to_export} (a list, or
a dict of field to output name), C{export_empty_fields}, C{encoding}, C{indent} and
C{dont_fail}; a field's C{serializer} (C{Field(serializer=...)}) turns its value into what
is written (L{BaseItemExporter.serialize_field}). After C{finish_exporting()}, each has
written the bytes Scrapy's writes.

These are the only writers of the feeds: L{tinyscrapy.extensions.feedexport.FeedExporter}
builds the one its C{FEEDS} format names (C{FEED_EXPORTERS}) over a file that takes each
item's bytes at once, and keeps a C{.json} or C{.xml} feed valid between items.
"""

import csv
import io
import logging
import marshal
import pickle
import pprint
from collections.abc import Mapping
from types import MappingProxyType
from xml.sax.saxutils import XMLGenerator
from xml.sax.xmlreader import AttributesImpl

from tinyscrapy.utils.python import to_bytes, to_unicode
from tinyscrapy.utils.serialize import ScrapyJSONEncoder

logger = logging.getLogger(__name__)

__all__ = ["BaseItemExporter", "CsvItemExporter", "JsonItemExporter", "JsonLinesItemExporter",
           "MarshalItemExporter", "PickleItemExporter", "PprintItemExporter",
           "PythonItemExporter", "XmlItemExporter"]

_NO_META = MappingProxyType({})  # the field metadata of a dict's keys: none


def _identity(value):
    return value


class BaseItemExporter:
    """
    What every exporter shares: its options, and the fields of an item to write.

    @ivar fields_to_export: None (every field), a list of field names, or a dict of field
        name to output name (which renames them).
    @ivar export_empty_fields: write declared fields that have no value (as the default
        value of the format).
    @ivar encoding: the text encoding, None for the format's default.
    @ivar indent: None or a number of spaces a level (formats that indent).
    """

    def __init__(self, *, dont_fail=False, **kwargs):
        """
        @param dont_fail: keep options this class does not know (in C{_kwargs}, for a
            subclass to read) instead of raising.
        @raise TypeError: an option no exporter knows, unless C{dont_fail}.
        """
        self._kwargs = kwargs
        self._configure(kwargs, dont_fail=dont_fail)

    def _configure(self, options, dont_fail=False):
        """Take the common options out of C{options}."""
        self.encoding = options.pop("encoding", None)
        self.fields_to_export = options.pop("fields_to_export", None)
        self.export_empty_fields = options.pop("export_empty_fields", False)
        self.indent = options.pop("indent", None)
        if not dont_fail and options:
            raise TypeError(f"Unexpected options: {', '.join(options)}")

    def export_item(self, item):
        """Write one item. @raise NotImplementedError: in this base class."""
        raise NotImplementedError

    def serialize_field(self, field, name, value):
        """
        The value written for one field: through the field's C{serializer}, if it has one.

        @param field: the field's metadata (a L{tinyscrapy.item.Field}, or an empty mapping).
        @param name: the output name of the field.
        """
        return field.get("serializer", _identity)(value)

    def start_exporting(self):
        """Write what comes before the first item."""

    def finish_exporting(self):
        """Write what comes after the last item."""

    @staticmethod
    def _get_populated_field_names(adapter):
        """The names of the fields that have a value, in declaration order (fields that
        an item holds without declaring them last, in the item's order)."""
        keys = list(adapter.keys())
        present = set(keys)
        return dict.fromkeys([*(name for name in adapter.field_names() if name in present),
                              *keys])

    def get_serialized_fields(self, item, default_value=None, include_empty=None):
        """
        C{(output name, serialized value)} of each field to write, in order: C{fields_to_export}
        applied, each value through L{serialize_field}.

        @param default_value: what a field in C{fields_to_export} (or a declared one, with
            C{include_empty}) that has no value is written as.
        @param include_empty: overrides C{export_empty_fields}.
        """
        if include_empty is None:
            include_empty = self.export_empty_fields
        fields = self.fields_to_export
        if fields is None and type(item) is dict:  # the common case, without itemadapter
            if type(self).serialize_field is BaseItemExporter.serialize_field:
                yield from item.items()  # a dict's keys have no serializer: as they are
                return
            serialize = self.serialize_field
            for name, value in item.items():
                yield name, serialize(_NO_META, name, value)
            return
        from itemadapter import ItemAdapter  # imported once an item is not a plain dict
        adapter = ItemAdapter(item)
        if fields is None:
            pairs = ((name, name) for name in (adapter.field_names() if include_empty
                                               else self._get_populated_field_names(adapter)))
        elif isinstance(fields, Mapping):
            pairs = ((name, output) for name, output in fields.items()
                     if include_empty or name in adapter)
        else:
            pairs = ((name, name) for name in fields if include_empty or name in adapter)
        for name, output in pairs:
            if name in adapter:
                yield output, self.serialize_field(adapter.get_field_meta(name), output,
                                                   adapter[name])
            else:
                yield output, default_value


class JsonLinesItemExporter(BaseItemExporter):
    """
    One JSON object a line. Options the exporter does not know go to the JSON encoder
    (C{sort_keys}, C{ensure_ascii}, ...); without an C{encoding}, non-ASCII characters
    are escaped.
    """

    def __init__(self, file, **kwargs):
        super().__init__(dont_fail=True, **kwargs)
        self.file = file
        self._kwargs.setdefault("ensure_ascii", not self.encoding)
        self.encoder = ScrapyJSONEncoder(**self._kwargs)

    def export_item(self, item):
        line = self.encoder.encode(dict(self.get_serialized_fields(item))) + "\n"
        self.file.write(to_bytes(line, self.encoding))


class JsonItemExporter(BaseItemExporter):
    """
    One JSON array of objects. C{indent} None writes it on one line; 0 puts each item on
    a line of its own; more indents inside each item too.
    """

    def __init__(self, file, **kwargs):
        super().__init__(dont_fail=True, **kwargs)
        self.file = file
        # the encoder's indent=0 would add newlines everywhere: only a positive one indents
        indent = self.indent if self.indent is not None and self.indent > 0 else None
        self._kwargs.setdefault("indent", indent)
        self._kwargs.setdefault("ensure_ascii", not self.encoding)
        self.encoder = ScrapyJSONEncoder(**self._kwargs)
        self.first_item = True

    def _beautify_newline(self):
        if self.indent is not None:
            self.file.write(b"\n")

    def _add_comma_after_first(self):
        if self.first_item:
            self.first_item = False
        else:
            self.file.write(b",")
            self._beautify_newline()

    def start_exporting(self):
        self.file.write(b"[")
        self._beautify_newline()

    def finish_exporting(self):
        self._beautify_newline()
        self.file.write(b"]")

    def export_item(self, item):
        # encoded before anything is written: an item that cannot be encoded leaves the
        # array as it was
        data = to_bytes(self.encoder.encode(dict(self.get_serialized_fields(item))),
                        self.encoding)
        self._add_comma_after_first()
        self.file.write(data)


def _text_stream(file, encoding, errors, newline):
    """A text layer over the binary C{file} that passes each write straight through."""
    return io.TextIOWrapper(file, encoding=encoding, errors=errors, newline=newline,
                            write_through=True)


class XmlItemExporter(BaseItemExporter):
    """
    An XML document: C{root_element} (C{items}) holding one C{item_element} (C{item}) per
    item, an element per field; a list is C{<value>} elements, a dict elements named by
    its keys. With C{indent} None everything is on one line, with 0 each item is, with
    more every element is.
    """

    def __init__(self, file, **kwargs):
        self.item_element = kwargs.pop("item_element", "item")
        self.root_element = kwargs.pop("root_element", "items")
        super().__init__(**kwargs)
        if not self.encoding:
            self.encoding = "utf-8"
        self.stream = _text_stream(file, self.encoding, "xmlcharrefreplace", "\n")
        self.xg = XMLGenerator(self.stream, encoding=self.encoding)

    def _beautify_newline(self, new_item=False):
        if self.indent is not None and (self.indent > 0 or new_item):
            self.xg.characters("\n")

    def _beautify_indent(self, depth=1):
        if self.indent:
            self.xg.characters(" " * self.indent * depth)

    def start_exporting(self):
        self.xg.startDocument()
        self.xg.startElement(self.root_element, AttributesImpl({}))
        self._beautify_newline(new_item=True)

    def export_item(self, item):
        self._beautify_indent(depth=1)
        self.xg.startElement(self.item_element, AttributesImpl({}))
        self._beautify_newline()
        for name, value in self.get_serialized_fields(item, default_value=""):
            self._export_xml_field(name, value, depth=2)
        self._beautify_indent(depth=1)
        self.xg.endElement(self.item_element)
        self._beautify_newline(new_item=True)

    def finish_exporting(self):
        self.xg.endElement(self.root_element)
        self.xg.endDocument()
        self.stream.detach()  # the file stays open: it is the storage's to close

    def _export_xml_field(self, name, serialized_value, depth):
        self._beautify_indent(depth=depth)
        self.xg.startElement(name, AttributesImpl({}))
        if hasattr(serialized_value, "items"):
            self._beautify_newline()
            for subname, value in serialized_value.items():
                self._export_xml_field(subname, value, depth=depth + 1)
            self._beautify_indent(depth=depth)
        elif _is_listlike(serialized_value):
            self._beautify_newline()
            for value in serialized_value:
                self._export_xml_field("value", value, depth=depth + 1)
            self._beautify_indent(depth=depth)
        else:
            self.xg.characters(serialized_value if isinstance(serialized_value, str)
                               else str(serialized_value))
        self.xg.endElement(name)
        self._beautify_newline()


def _is_listlike(value):
    """Iterable and not text (Scrapy's C{is_listlike})."""
    return hasattr(value, "__iter__") and not isinstance(value, (str, bytes))


class CsvItemExporter(BaseItemExporter):
    """
    CSV with a header line (C{include_headers_line}). The columns are C{fields_to_export},
    else the first item's fields (every declared field of an L{tinyscrapy.item.Item}); a
    list of strings is joined with C{join_multivalued}. Other options go to C{csv.writer}
    (C{delimiter}, C{quotechar}, C{quoting}, C{lineterminator}, ...); lines end in CRLF, as
    the C{csv} module writes them.
    """

    def __init__(self, file, include_headers_line=True, join_multivalued=",", errors=None,
                 **kwargs):
        """@param errors: how characters the encoding cannot hold are handled (C{str.encode}'s
            C{errors}; strict by default)."""
        super().__init__(dont_fail=True, **kwargs)
        if not self.encoding:
            self.encoding = "utf-8"
        self.include_headers_line = include_headers_line
        self.stream = _text_stream(file, self.encoding, errors, "")
        self.csv_writer = csv.writer(self.stream, **self._kwargs)
        self._headers_not_written = True
        self._join_multivalued = join_multivalued
        self._autodetected_fields = False
        self._data_loss_warned = False

    def serialize_field(self, field, name, value):
        return field.get("serializer", self._join_if_needed)(value)

    def _join_if_needed(self, value):
        if isinstance(value, (list, tuple)):
            try:
                return self._join_multivalued.join(value)
            except TypeError:  # not all strings: written as Python shows it
                pass
        return value

    def export_item(self, item):
        if self._headers_not_written:
            self._headers_not_written = False
            self._write_headers_and_set_fields_to_export(item)
        if self._autodetected_fields and not self._data_loss_warned:
            self._warn_dropped_fields(item)
        fields = self.get_serialized_fields(item, default_value="", include_empty=True)
        self.csv_writer.writerow(list(self._build_row(value for _, value in fields)))

    def _warn_dropped_fields(self, item):
        """Columns guessed from the first item: say once that a later item's other fields
        are not written."""
        from itemadapter import ItemAdapter
        dropped = set(ItemAdapter(item).field_names()) - set(self.fields_to_export)
        if dropped:
            logger.warning("CSVExporter dropped fields %s. To avoid this, fully configure "
                           "your FEED_EXPORT_FIELDS setting. See: https://docs.scrapy.org/"
                           "en/latest/topics/feed-exports.html#feed-export-fields",
                           sorted(dropped))
            self._data_loss_warned = True

    def finish_exporting(self):
        self.stream.detach()  # the file stays open: it is the storage's to close

    def _build_row(self, values):
        for value in values:
            try:
                yield to_unicode(value, self.encoding)
            except TypeError:
                yield value

    def _write_headers_and_set_fields_to_export(self, item):
        if not self.include_headers_line:
            return
        if not self.fields_to_export:
            from itemadapter import ItemAdapter
            self.fields_to_export = ItemAdapter(item).field_names()  # declared, or the keys
            self._autodetected_fields = True
        fields = self.fields_to_export
        names = fields.values() if isinstance(fields, Mapping) else fields
        self.csv_writer.writerow(list(self._build_row(names)))


class PickleItemExporter(BaseItemExporter):
    """Each item a pickled dict (C{protocol} 4 by default). Written only: never load a
    pickle you did not write yourself."""

    def __init__(self, file, protocol=4, **kwargs):
        super().__init__(**kwargs)
        self.file = file
        self.protocol = protocol

    def export_item(self, item):
        pickle.dump(dict(self.get_serialized_fields(item)), self.file, self.protocol)


class MarshalItemExporter(BaseItemExporter):
    """Each item a dict in Python's C{marshal} format."""

    def __init__(self, file, **kwargs):
        super().__init__(**kwargs)
        self.file = file

    def export_item(self, item):
        marshal.dump(dict(self.get_serialized_fields(item)), self.file)


class PprintItemExporter(BaseItemExporter):
    """Each item as C{pprint} shows a dict, a line (or more) each."""

    def __init__(self, file, **kwargs):
        super().__init__(**kwargs)
        self.file = file

    def export_item(self, item):
        self.file.write(to_bytes(pprint.pformat(dict(self.get_serialized_fields(item)))
                                 + "\n"))


class PythonItemExporter(BaseItemExporter):
    """
    Items as plain Python values (dicts, lists, strings), nested items included, for a
    serialization library of your own: L{export_item} returns the dict and writes nothing.
    """

    def _configure(self, options, dont_fail=False):
        super()._configure(options, dont_fail)
        if not self.encoding:
            self.encoding = "utf-8"

    def serialize_field(self, field, name, value):
        return field.get("serializer", self._serialize_value)(value)

    def _serialize_value(self, value):
        from itemadapter import ItemAdapter, is_item

        from tinyscrapy.item import Item
        if isinstance(value, Item):
            return self.export_item(value)
        if isinstance(value, (str, bytes)):
            return to_unicode(value, encoding=self.encoding)
        if is_item(value):
            return {key: self._serialize_value(each)
                    for key, each in ItemAdapter(value).items()}
        if _is_listlike(value):
            return [self._serialize_value(each) for each in value]
        return value

    def export_item(self, item):
        """@return: the item as a dict of plain values."""
        return dict(self.get_serialized_fields(item))

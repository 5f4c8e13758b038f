"""
Feed exports: each format parses back, append versus overwrite, flushing per item, two
spiders into one file, %(name)s, CSV columns, and the errors that stop a start; the xml
format, Scrapy's exporter options, %(time)s and item_classes.
"""

import csv
import json
import os
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import UsageError
from tinyscrapy.extensions import feedexport as feeds
from tinyscrapy.extensions.feedexport import FeedExporter
from tinyscrapy.item import Field, Item
from tinyscrapy.settings import Settings

from .helpers import crawl, run_command, serve
from .logs import capture_logs


def open_feed(path, settings=None, spidercls=None, **options):
    """The feed exporter of a crawler that never runs, with one feed (C{path}, C{options})
    open and started, as at the start of a crawl."""
    crawler = Crawler(spidercls or ItemsSpider, Settings({"FEEDS": {path: options},
                                                          **(settings or {})}))
    exporter = FeedExporter.from_crawler(crawler)
    exporter.open_spider(crawler.spidercls)
    return exporter


def write_feed(path, items, settings=None, **options):
    """Write C{items} to the feed C{path} as a crawl does, and close it."""
    exporter = open_feed(path, settings, **options)
    for item in items:
        exporter.item_scraped(item, exporter.crawler.spidercls)
    exporter.close_feeds()
    return path


def read_items(path):
    """The items of a feed file, parsed by the reader of its format."""
    with open(path, encoding="utf-8", newline="") as f:
        if path.endswith(".jsonl"):
            return [json.loads(line) for line in f]
        if path.endswith(".json"):
            return json.load(f)
        return list(csv.DictReader(f))


@dataclass
class Page:
    """A dataclass item."""

    url: str
    n: int
    note: str = "é, \"quoted\"\nline"


class ItemsSpider(Spider):
    """Fetches C{start}; yields C{count} items (dicts, or dataclasses with C{kind=dc})."""

    name = "items"
    count = 3
    kind = "dict"
    pause = 0

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        for n in range(int(self.count)):
            if self.kind == "dc":
                yield Page(response.url, n)
            else:
                yield {"url": response.url, "n": n, "tags": ["a", "b"]}


class FormatTests(unittest.TestCase):
    """Each format, written by a real crawl, parses back."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    def path(self, name):
        return os.path.join(self.tmp, name)

    @defer.inlineCallbacks
    def test_each_format_parses_back(self):
        """jsonl, json and csv of the same crawl hold the same items."""
        paths = [self.path(name) for name in ("o.jsonl", "o.json", "o.csv")]
        yield crawl(ItemsSpider, {"FEEDS": {path: {} for path in paths}}, start=self.start,
                    kind="dc")
        jsonl, json_, csv_ = (read_items(path) for path in paths)
        self.assertEqual(jsonl, json_)
        self.assertEqual([item["n"] for item in jsonl], [0, 1, 2])
        self.assertEqual(jsonl[0]["note"], "é, \"quoted\"\nline")
        self.assertEqual([row["n"] for row in csv_], ["0", "1", "2"])
        self.assertEqual(csv_[0]["note"], "é, \"quoted\"\nline")
        self.assertEqual(list(csv_[0]), ["url", "n", "note"])

    @defer.inlineCallbacks
    def test_json_escapes_unless_an_encoding_is_chosen(self):
        """Without FEED_EXPORT_ENCODING, JSON feeds escape non-ASCII (Scrapy's bytes); with
        utf-8, characters are written as they are; CSV is UTF-8 either way."""
        plain = [self.path(name) for name in ("d.jsonl", "d.json", "d.csv")]
        yield crawl(ItemsSpider, {"FEEDS": {path: {} for path in plain}}, start=self.start,
                    kind="dc")
        chosen = self.path("u.jsonl")
        yield crawl(ItemsSpider, {"FEEDS": {chosen: {}}, "FEED_EXPORT_ENCODING": "utf-8"},
                    start=self.start, kind="dc")
        for path in plain[:2]:
            with open(path, "rb") as f:
                data = f.read()
            self.assertIn(b"\\u00e9", data, path)
            self.assertTrue(data.isascii(), path)
        with open(plain[2], "rb") as f:
            self.assertIn("é".encode(), f.read())
        with open(chosen, "rb") as f:
            self.assertIn("é".encode(), f.read())
        self.assertEqual(read_items(plain[0]), read_items(chosen))

    @defer.inlineCallbacks
    def test_items_are_in_the_file_when_scraped(self):
        """While the crawl runs, the file holds every item scraped so far, and a .json
        file is a valid array at every moment."""
        paths = [self.path(name) for name in ("live.jsonl", "live.json", "live.csv")]
        seen = []

        class Peek:
            """A pipeline: before each item, count the items already in each file."""

            def process_item(self, item, spider):
                seen.append([len(read_items(path)) for path in paths])
                return item

        yield crawl(ItemsSpider, {"FEEDS": {path: {} for path in paths},
                                  "ITEM_PIPELINES": {Peek: 1}}, start=self.start, count=4)
        self.assertEqual(seen, [[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3]])

    @defer.inlineCallbacks
    def test_csv_columns_from_the_setting(self):
        """FEED_EXPORT_FIELDS picks and orders the CSV columns, and the JSON fields."""
        csv_path, json_path = self.path("f.csv"), self.path("f.json")
        yield crawl(ItemsSpider, {"FEEDS": {csv_path: {}, json_path: {}},
                                  "FEED_EXPORT_FIELDS": ["n", "url"]}, start=self.start)
        with open(csv_path) as f:
            self.assertEqual(f.readline().strip(), "n,url")
        self.assertEqual(list(read_items(json_path)[0]), ["n", "url"])

    @defer.inlineCallbacks
    def test_csv_extra_fields_warned_once(self):
        """A field missing from the first item's columns is left out with one warning
        (Scrapy's)."""

        class Growing(ItemsSpider):
            def parse(self, response):
                yield {"a": 1}
                yield {"a": 2, "b": 2}
                yield {"a": 3, "b": 3}

        logs = capture_logs(self, "tinyscrapy.exporters")
        path = self.path("g.csv")
        yield crawl(Growing, {"FEEDS": {path: {}}}, start=self.start)
        self.assertEqual(read_items(path), [{"a": "1"}, {"a": "2"}, {"a": "3"}])
        self.assertEqual(len([m for m in logs.messages() if "dropped fields ['b']" in m]), 1)

    @defer.inlineCallbacks
    def test_name_in_path_splits_per_spider(self):
        """%(name)s gives each spider its own file."""

        class Other(ItemsSpider):
            name = "other"

        template = self.path("%(name)s.jsonl")
        settings = Settings({"FEEDS": {template: {}}, "LOG_LEVEL": "WARNING"})
        yield defer.gatherResults([
            Crawler(ItemsSpider, settings).crawl(start=self.start, count=2),
            Crawler(Other, settings).crawl(start=self.start, count=3)])
        self.assertEqual(len(read_items(self.path("items.jsonl"))), 2)
        self.assertEqual(len(read_items(self.path("other.jsonl"))), 3)

    @defer.inlineCallbacks
    def test_two_spiders_one_file_never_interleave(self):
        """Two crawls at once into one file: every line is one whole item."""
        pages = [f"/{i}" for i in range(10)]
        for path in pages:
            self.server.add_page(path, links=[])

        class Many(Spider):
            name = "many"

            def start_requests(self):
                for path in pages:
                    yield Request(self.base + path)

            def parse(self, response):
                for n in range(20):
                    yield {"spider": self.name, "url": response.url, "n": n, "pad": "x" * 3000}

        class Second(Many):
            name = "second"

        out = self.path("shared.jsonl")
        base = self.start.rstrip("/")
        settings = Settings({"FEEDS": {out: {}}, "LOG_LEVEL": "WARNING"})
        yield defer.gatherResults([Crawler(Many, settings).crawl(base=base),
                                   Crawler(Second, settings).crawl(base=base)])
        items = read_items(out)  # json.loads fails on any interleaved line
        self.assertEqual(len(items), 400)
        self.assertEqual(sorted({item["spider"] for item in items}), ["many", "second"])
        self.assertEqual(feeds._OPEN_FEEDS, {})


class AppendTests(unittest.TestCase):
    """Appending continues a file; overwriting replaces it (the feeds without a crawl)."""

    def setUp(self):
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    def write(self, name, items, **options):
        return write_feed(os.path.join(self.tmp, name), items, **options)

    def test_json_append_continues_the_array(self):
        """Appending to a .json array gives one array with all the items."""
        self.write("a.json", [{"n": 1}, {"n": 2}])
        path = self.write("a.json", [{"n": 3}])
        self.assertEqual(read_items(path), [{"n": 1}, {"n": 2}, {"n": 3}])

    def test_json_append_to_empty_array(self):
        """An empty array (a crawl with no items) is continued without a stray comma."""
        self.write("e.json", [])
        path = self.write("e.json", [{"n": 1}])
        self.assertEqual(read_items(path), [{"n": 1}])

    def test_json_append_to_a_hand_written_array(self):
        """An array written by another tool (compact, trailing spaces) is continued."""
        path = os.path.join(self.tmp, "h.json")
        with open(path, "w") as f:
            f.write('[{"n": 0}]   \n\n')
        self.write("h.json", [{"n": 1}])
        self.assertEqual(read_items(path), [{"n": 0}, {"n": 1}])

    def test_json_overwrite(self):
        """overwrite replaces what was there."""
        self.write("o.json", [{"n": 1}])
        path = self.write("o.json", [{"n": 2}], overwrite=True)
        self.assertEqual(read_items(path), [{"n": 2}])

    def test_json_not_an_array_refused(self):
        """Appending to a JSON object, or a truncated array, is a usage error."""
        for name, text in (("obj.json", '{"a": 1}'), ("cut.json", '[{"a": 1},\n{"a"')):
            path = os.path.join(self.tmp, name)
            with open(path, "w") as f:
                f.write(text)
            error = self.assertRaises(UsageError, open_feed, path)
            self.assertIn("not a JSON array", str(error))
            with open(path) as f:
                self.assertEqual(f.read(), text)

    def test_json_valid_before_close(self):
        """Without a close (a crash), the file is still a valid array of what was written,
        and the next run continues it."""
        path = os.path.join(self.tmp, "crash.json")
        exporter = open_feed(path)
        for n in (1, 2):
            exporter.item_scraped({"n": n}, ItemsSpider)
        self.assertEqual(read_items(path), [{"n": 1}, {"n": 2}])
        [slot] = exporter.slots
        os.close(slot.file.fd)  # the process dies: nothing more is written
        feeds._OPEN_FEEDS.clear()
        self.write("crash.json", [{"n": 3}])
        self.assertEqual([item["n"] for item in read_items(path)], [1, 2, 3])

    def test_csv_append_writes_no_second_header_and_keeps_columns(self):
        """Appending to a CSV: no second header; the file's columns, in its order."""
        self.write("c.csv", [{"a": 1, "b": 2}])
        path = self.write("c.csv", [{"b": 4, "a": 3}])
        with open(path, newline="") as f:
            self.assertEqual(f.read(), "a,b\r\n1,2\r\n3,4\r\n")

    def test_csv_append_with_other_fields_refused(self):
        """FEED_EXPORT_FIELDS that differ from the existing header: a usage error."""
        self.write("d.csv", [{"a": 1, "b": 2}])
        self.assertRaises(UsageError, open_feed, os.path.join(self.tmp, "d.csv"),
                          fields=["b", "a"])

    def test_jsonl_append_after_a_cut_line(self):
        """A file whose last line lacks its newline gets one before the new items."""
        path = os.path.join(self.tmp, "l.jsonl")
        with open(path, "w") as f:
            f.write('{"n": 1}')
        self.write("l.jsonl", [{"n": 2}])
        self.assertEqual(read_items(path), [{"n": 1}, {"n": 2}])

    def test_encoding(self):
        """An encoding writes the characters it holds as they are (Scrapy's exporters); an
        item it cannot hold is left out; one that is not a superset of ASCII, or unknown,
        stops the start."""
        json_path = self.write("x.jsonl", [{"t": "é€"}])
        latin = self.write("l1.jsonl", [{"t": "€"}, {"t": "é"}], encoding="latin-1")
        with open(latin, "rb") as f:
            self.assertEqual(f.read(), b'{"t": "\xe9"}\n')
        with open(json_path, "rb") as f:
            self.assertEqual(f.read(), b'{"t": "\\u00e9\\u20ac"}\n')
        for encoding in ("utf-16", "klingon"):
            self.assertRaises(UsageError, open_feed, os.path.join(self.tmp, "u.jsonl"),
                              encoding=encoding)


class FeedSettingsTests(unittest.TestCase):
    """FEEDS mistakes stop the start."""

    def test_unknown_format(self):
        """A format nobody writes, or an extension that names none: UsageError."""
        for feeds_setting in ({"x.parquet": {}}, {"x.out": {"format": "parquet"}}):
            crawler = Crawler(ItemsSpider, Settings({"FEEDS": feeds_setting}))
            self.failureResultOf(crawler.crawl(start="http://127.0.0.1:1/"), UsageError)

    def test_unsupported_option_warned(self):
        """An option no part of the feed reads is warned about, and ignored."""
        logs = capture_logs(self, "tinyscrapy.extensions.feedexport")
        path = os.path.abspath(self.mktemp()) + ".jsonl"
        exporter = open_feed(path, batch_items=4)
        self.assertEqual(exporter.feeds[path]["format"], "jsonl")
        self.assertIn("option 'batch_items' is not supported", logs.text())
        exporter.close_feeds()


SPIDER_FILE = """
from tinyscrapy import Request, Spider


class Pages(Spider):
    name = "pages"

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        yield {"url": response.url}
"""


class CommandFeedTests(unittest.TestCase):
    """-o appends and -O overwrites, as in Scrapy; custom_settings FEEDS are kept; -o
    FILE:FORMAT and -o -:FORMAT; a format of the project's from the extension."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)
        self.spider = os.path.join(self.tmp, "pages.py")
        with open(self.spider, "w") as f:
            f.write(textwrap.dedent(SPIDER_FILE))

    def runspider(self, *args):
        return run_command(reactor, ["runspider", self.spider, "-a", f"start={self.start}",
                                     *args], cwd=self.tmp)

    @defer.inlineCallbacks
    def test_append_then_overwrite(self):
        """-o twice gives two items in one valid file; -O then leaves one (each format)."""
        outs = [os.path.join(self.tmp, "out" + suffix) for suffix in (".json", ".jsonl", ".csv")]
        for flag, expected in (("-o", 1), ("-o", 2), ("-O", 1)):
            args = [arg for out in outs for arg in (flag, out)]
            code, _, err = yield self.runspider(*args)
            self.assertEqual(code, 0, err)
            for out in outs:
                self.assertEqual(len(read_items(out)), expected, (flag, out))

    @defer.inlineCallbacks
    def test_custom_settings_feeds_not_replaced_by_stdout(self):
        """Without -o, a spider's own FEEDS are written (and nothing goes to stdout)."""
        out = os.path.join(self.tmp, "mine.jsonl")
        with open(self.spider, "a") as f:
            f.write(f"    custom_settings = {{'FEEDS': {{{out!r}: {{}}}}}}\n")
        code, stdout, err = yield self.runspider()
        self.assertEqual(code, 0, err)
        self.assertEqual(len(read_items(out)), 1)
        self.assertEqual(stdout, "")

    @defer.inlineCallbacks
    def test_feed_that_cannot_be_appended_stops_the_start(self):
        """-o to a .json file that is not an array: one line, exit 2, nothing fetched."""
        out = os.path.join(self.tmp, "object.json")
        with open(out, "w") as f:
            f.write('{"a": 1}')
        code, _, err = yield self.runspider("-o", out)
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("not a JSON array", err)
        self.assertEqual(self.server.hits["/"], 0)

    @defer.inlineCallbacks
    def test_format_after_a_colon_and_stdout(self):
        """-o items.txt:jsonlines writes JSON lines to items.txt; -O -:json prints one
        JSON array on stdout."""
        code, out, err = yield self.runspider("-o", "items.txt:jsonlines")
        self.assertEqual(code, 0, err)
        with open(os.path.join(self.tmp, "items.txt")) as f:
            self.assertEqual([json.loads(line) for line in f], [{"url": self.start}])
        code, out, err = yield self.runspider("-o", "-:json")
        self.assertEqual(code, 0, err)
        self.assertEqual(len(json.loads(out)), 1)

    @defer.inlineCallbacks
    def test_a_format_of_the_project_from_its_extension(self):
        """-O products.tsv with FEED_EXPORTERS naming the format: written by it (the
        'cannot tell the feed format' refusal is only for formats nobody writes)."""
        exporters = json.dumps({"tsv": "tests.test_feedexport.TsvItemExporter"})
        code, _out, err = yield self.runspider("-O", "products.tsv",
                                               "-s", f"FEED_EXPORTERS={exporters}")
        self.assertEqual(code, 0, err)
        with open(os.path.join(self.tmp, "products.tsv")) as f:
            self.assertEqual(f.readline(), "# tsv\n")
        code, _out, err = yield self.runspider("-O", "products.xlsx")
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("cannot tell the feed format of 'products.xlsx'", err)


class Product(Item):
    name = Field()
    price = Field(serializer=lambda value: f"{value:.2f} EUR")
    tags = Field()


class ExporterOptionTests(unittest.TestCase):
    """The xml format and Scrapy's exporter options, through the feeds."""

    def setUp(self):
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    def write(self, name, items, **options):
        with open(write_feed(os.path.join(self.tmp, name), items, **options), "rb") as f:
            return f.read()

    def test_xml_one_item_a_line(self):
        """xml: a declaration, <items>, one <item> a line, lists as <value>, escaped."""
        data = self.write("a.xml", [{"a": "x & <y>", "l": ["1", 2]}, {"n": None}])
        self.assertEqual(data, b'<?xml version="1.0" encoding="utf-8"?>\n<items>\n'
                               b"<item><a>x &amp; &lt;y&gt;</a><l><value>1</value>"
                               b"<value>2</value></l></item>\n"
                               b"<item><n>None</n></item>\n</items>")

    def test_xml_indented_with_nested_dict(self):
        """indent 2: every element on its own line; a dict holds elements by key."""
        data = self.write("i.xml", [{"d": {"k": "v"}}], indent=2)
        self.assertEqual(data.decode(), '<?xml version="1.0" encoding="utf-8"?>\n<items>\n'
                                        "  <item>\n    <d>\n      <k>v</k>\n    </d>\n"
                                        "  </item>\n</items>")

    def test_xml_element_names_and_append(self):
        """item_element and root_element name the elements; appending continues the root;
        the file parses after every item."""
        kwargs = {"item_element": "product", "root_element": "products"}
        self.write("p.xml", [{"n": 1}], item_export_kwargs=kwargs)
        path = os.path.join(self.tmp, "p.xml")
        exporter = open_feed(path, item_export_kwargs=kwargs)
        exporter.item_scraped({"n": 2}, ItemsSpider)
        root = ET.parse(path).getroot()  # before close
        exporter.close_feeds()
        self.assertEqual((root.tag, [e.tag for e in root], [e.findtext("n") for e in root]),
                         ("products", ["product", "product"], ["1", "2"]))
        with open(path, "w") as f:
            f.write("<other/>")
        self.assertRaises(UsageError, open_feed, path, item_export_kwargs=kwargs)

    def test_csv_options(self):
        """delimiter, include_headers_line and join_multivalued, as Scrapy's CSV options."""
        data = self.write("c.csv", [{"a": 1, "t": ["x", "y"]}], item_export_kwargs={
            "delimiter": ";", "include_headers_line": False, "join_multivalued": "|"})
        self.assertEqual(data, b"1;x|y\r\n")

    def test_unknown_export_kwarg_refused(self):
        """An item_export_kwargs key the format does not take: one-line UsageError."""
        error = self.assertRaises(UsageError, open_feed, os.path.join(self.tmp, "u.xml"),
                                  item_export_kwargs={"delimiter": ";"})
        self.assertIn("item_export_kwargs ['delimiter'] are not all options of "
                      "XmlItemExporter", str(error))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "u.xml")))

    def test_json_indent_and_renamed_fields(self):
        """indent pretty-prints each JSON item; fields as a dict renames the columns."""
        data = self.write("j.json", [{"a": 1, "b": 2}], indent=2, fields={"b": "B"})
        self.assertEqual(data, b'[\n{\n  "B": 2\n}\n]')

    def test_declared_item_serializer_and_columns(self):
        """An Item: every declared field is a CSV column, in order; serializers apply."""
        items = [Product(name="pen", price=2), Product(name="ink", tags=["blue", "dark"])]
        data = self.write("p.csv", items)
        self.assertEqual(data.decode(), "name,price,tags\r\npen,2.00 EUR,\r\nink,,"
                                        "\"blue,dark\"\r\n")
        data = self.write("p.jsonl", items[:1],
                          item_export_kwargs={"export_empty_fields": True})
        self.assertEqual(json.loads(data), {"name": "pen", "price": "2.00 EUR", "tags": None})

    def test_declared_item_fields_in_declaration_order(self):
        """An Item's fields are written in the order declared, not the order set."""
        item = Product()
        item["tags"] = ["a"]
        item["name"] = "pen"
        data = self.write("o.jsonl", [item])
        self.assertEqual(data, b'{"name": "pen", "tags": ["a"]}\n')


class KindsSpider(Spider):
    """Yields one Product and one dict; has a C{category} attribute."""

    name = "kinds"
    category = "pens"

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        yield Product(name="pen", price=1)
        yield {"name": "plain"}


class FeedPathAndFilterTests(unittest.TestCase):
    """%(time)s and spider attributes in paths; item_classes; the .xml extension."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    @defer.inlineCallbacks
    def test_time_and_attribute_in_path_and_item_classes(self):
        """%(time)s is the UTC start time, %(category)s the spider's attribute; a feed
        with item_classes takes only those items."""
        template = os.path.join(self.tmp, "%(name)s-%(category)s-%(time)s.xml")
        only = os.path.join(self.tmp, "only.jsonl")
        yield crawl(KindsSpider, {"FEEDS": {
            template: {}, only: {"item_classes": [f"{__name__}.Product"]}}},
            start=self.start)
        [name] = [n for n in os.listdir(self.tmp) if n.endswith(".xml")]
        self.assertRegex(name, r"^kinds-pens-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\+00-00\.xml$")
        root = ET.parse(os.path.join(self.tmp, name)).getroot()
        self.assertEqual([e.findtext("name") for e in root], ["pen", "plain"])
        self.assertEqual(read_items(only), [{"name": "pen", "price": "1.00 EUR"}])

    def test_path_naming_nothing_refused(self):
        """A %(...)s that names no spider attribute: a one-line UsageError."""
        crawler = Crawler(KindsSpider, Settings({"FEEDS": {
            os.path.join(self.tmp, "%(nope)s.jsonl"): {}}}))
        failure = self.failureResultOf(crawler.crawl(start=self.start), UsageError)
        self.assertIn("%(nope)s names nothing", str(failure.value))


class OnDiskTests(unittest.TestCase):
    """After each item, the file on disk is the items so far and the format's closing mark,
    nothing more: what a torn write is cut back to, and what a reader sees."""

    def test_file_after_each_item(self):
        """For each format, new and appended to: the file is what the exporter has written
        plus its end, item after item, and exactly that once closed."""
        folder = os.path.abspath(self.mktemp())
        os.makedirs(folder)
        ends = {"o.jsonl": b"", "o.json": b"\n]", "o.csv": b"", "o.xml": b"</items>"}
        for name, end in ends.items():
            path = os.path.join(folder, name)
            for _round in range(2):  # written, then appended to
                exporter = open_feed(path)
                [slot] = exporter.slots
                for n in range(3):
                    exporter.item_scraped({"n": n, "text": "é" * n}, ItemsSpider)
                    with open(path, "rb") as f:
                        data = f.read()
                    self.assertEqual(len(data), slot.file.offset + len(end), (name, n))
                    self.assertTrue(data.endswith(end), (name, n))
                exporter.close_feeds()
                with open(path, "rb") as f:
                    self.assertTrue(f.read().endswith(end or b"\n"), name)
            self.assertEqual(len(read_items(path)) if not name.endswith(".xml")
                             else len(ET.parse(path).getroot()), 6, name)

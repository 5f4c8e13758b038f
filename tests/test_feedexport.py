"""
The FEEDS options Scrapy documents, read back from real crawls of a local site: batches,
post-processing, a format and a storage of the project's named by dotted path,
uri_params, store_empty, item_filter, the refusal of a substituted value that would
choose the folder, an -O file left alone by a crawl that fails to start, and the feed
signals and stats. (The command line's -o FILE:FORMAT is in test_feeds.)
"""

import bz2
import gzip
import json
import lzma
import marshal
import os
import pickle

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider, signals
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import UsageError
from tinyscrapy.exporters import BaseItemExporter
from tinyscrapy.extensions import feedexport
from tinyscrapy.extensions.feedexport import FileFeedStorage, ItemFilter
from tinyscrapy.settings import Settings

from .helpers import crawl, serve


class NumbersSpider(Spider):
    """Fetches C{start}; yields C{count} items C{{"n": n}} (plus C{kind} every third)."""

    name = "numbers"
    count = 5
    folder = "out"

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        for n in range(int(self.count)):
            yield {"n": n, "kind": "third"} if n % 3 == 2 else {"n": n}


class TsvItemExporter(BaseItemExporter):
    """A format of the project's, as a plugin writes one: tab-separated, a line an item."""

    def __init__(self, file, **kwargs):
        super().__init__(dont_fail=True, **kwargs)
        self.file = file

    def start_exporting(self):
        self.file.write(b"# tsv\n")

    def export_item(self, item):
        line = "\t".join(f"{name}={value}" for name, value in self.get_serialized_fields(item))
        self.file.write(line.encode() + b"\n")


class UpperStorage(FileFeedStorage):
    """A storage of the project's (scheme C{upper:}): a file whose name is upper-cased."""

    def __init__(self, uri, *, feed_options=None):
        super().__init__(uri.removeprefix("upper:"), feed_options=feed_options)
        folder, name = os.path.split(self.path)
        self.path = os.path.join(folder, name.upper())


class ThirdsOnly(ItemFilter):
    """An item_filter: only the items whose C{kind} is C{third}."""

    def accepts(self, item):
        return item.get("kind") == "third"


def add_folder(params, spider):
    """A uri_params function: C{%(folder_name)s} from the spider's C{folder}."""
    params["folder_name"] = "f-" + spider.folder


def read_lines(path, opener=open):
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


class FeedOptionTests(unittest.TestCase):
    """Each option, written by a real crawl and read back."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    def path(self, *names):
        return os.path.join(self.tmp, *names)

    def crawl(self, feeds, **settings):
        return crawl(NumbersSpider, {"FEEDS": feeds, **settings}, start=self.start)

    @defer.inlineCallbacks
    def test_batches(self):
        """batch_item_count: a file every 2 items, numbered by %(batch_id)02d, each valid
        JSON; FEED_EXPORT_BATCH_ITEM_COUNT does the same for every feed."""
        yield self.crawl({self.path("b-%(batch_id)02d.json"): {"batch_item_count": 2},
                          self.path("s-%(batch_id)d.jsonl"): {}},
                         FEED_EXPORT_BATCH_ITEM_COUNT=3)
        names = sorted(os.listdir(self.tmp))
        self.assertEqual(names, ["b-01.json", "b-02.json", "b-03.json", "s-1.jsonl",
                                 "s-2.jsonl"])
        batches = []
        for name in names[:3]:
            with open(self.path(name)) as f:
                batches.append([item["n"] for item in json.load(f)])
        self.assertEqual(batches, [[0, 1], [2, 3], [4]])
        self.assertEqual([len(read_lines(self.path(n))) for n in names[3:]], [3, 2])

    def test_batches_need_a_batch_placeholder(self):
        """A batched feed whose URI cannot tell the batches apart stops the start."""
        crawler = Crawler(NumbersSpider, Settings({"FEEDS": {
            self.path("one.jsonl"): {"batch_item_count": 2}}}))
        failure = self.failureResultOf(crawler.crawl(start=self.start), UsageError)
        self.assertIn("%(batch_time)s or %(batch_id)d must be in the feed URI",
                      str(failure.value))

    @defer.inlineCallbacks
    def test_postprocessing(self):
        """gzip, bz2 and lzma plugins (with their options), and a plugin of the project's
        before gzip, read back; a plain file beside them is untouched by them."""
        plugins = "tinyscrapy.extensions.postprocessing."
        yield self.crawl({
            self.path("o.jsonl.gz"): {"format": "jsonlines", "gzip_compresslevel": 1,
                                      "postprocessing": [plugins + "GzipPlugin"]},
            self.path("o.jsonl.bz2"): {"format": "jsonlines",
                                       "postprocessing": [plugins + "Bz2Plugin"]},
            self.path("o.json.xz"): {"format": "json",
                                     "postprocessing": [plugins + "LZMAPlugin"]},
            self.path("o.csv.gz"): {"format": "csv", "postprocessing": [
                f"{__name__}.Shouting", plugins + "GzipPlugin"]},
            self.path("o.jsonl"): {}})
        expected = read_lines(self.path("o.jsonl"))
        self.assertEqual(len(expected), 5)
        self.assertEqual(read_lines(self.path("o.jsonl.gz"), gzip.open), expected)
        self.assertEqual(read_lines(self.path("o.jsonl.bz2"), bz2.open), expected)
        with lzma.open(self.path("o.json.xz")) as f:
            self.assertEqual(json.load(f), expected)
        with gzip.open(self.path("o.csv.gz")) as f:
            self.assertEqual(f.read().splitlines()[:2], [b"N", b"0"])

    @defer.inlineCallbacks
    def test_format_and_storage_of_the_project(self):
        """FEED_EXPORTERS and FEED_STORAGES name a format and a storage by dotted path: a
        .tsv feed, and an upper: URI, are written by them."""
        yield self.crawl({self.path("o.tsv"): {}, "upper:" + self.path("low.jsonl"): {}},
                         FEED_EXPORTERS={"tsv": f"{__name__}.TsvItemExporter"},
                         FEED_STORAGES={"upper": f"{__name__}.UpperStorage"})
        with open(self.path("o.tsv")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[:3], ["# tsv", "n=0", "n=1"])
        self.assertEqual(lines[3], "n=2\tkind=third")
        self.assertEqual(len(read_lines(self.path("LOW.JSONL"))), 5)

    @defer.inlineCallbacks
    def test_uri_params_and_folders_of_the_template(self):
        """A uri_params function adds a name; %(name)s/%(time)s.csv makes a folder per
        spider, as the template says."""
        yield self.crawl({
            self.path("%(folder_name)s.jsonl"): {"uri_params": f"{__name__}.add_folder"},
            self.path("%(name)s", "%(time)s.csv"): {}})
        self.assertEqual(len(read_lines(self.path("f-out.jsonl"))), 5)
        [name] = os.listdir(self.path("numbers"))
        self.assertRegex(name, r"^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\+00-00\.csv$")

    def test_a_substituted_value_never_chooses_the_folder(self):
        """A spider attribute holding a slash, a backslash or '..' in a feed URI stops the
        start with one line, and nothing is written."""
        for value in ("../elsewhere", "a/b", "a\\b", ".."):
            crawler = Crawler(NumbersSpider, Settings({"FEEDS": {
                self.path("%(folder)s.jsonl"): {}}}))
            failure = self.failureResultOf(crawler.crawl(start=self.start, folder=value),
                                           UsageError)
            self.assertIn("would choose the folder", str(failure.value))
            self.assertEqual(len(str(failure.value).splitlines()), 1)
        self.assertEqual(os.listdir(self.tmp), [])
        self.assertEqual(self.server.hits.get("/", 0), 0)

    def test_no_value_leaves_the_folder_another_way(self):
        """A spider named ../../evil in %(name)s, a file:// URI's percent-encoded slash or
        backslash, and two values that make '..' side by side all stop the start with one
        line; nothing is written or fetched."""
        deep = self.path("a", "b")
        cases = [
            (os.path.join(deep, "%(name)s.jsonl"), {"name": "../../evil"}),
            ("file://" + os.path.join(deep, "%(folder)s.jsonl"), {"folder": "%2e%2e%2fevil"}),
            ("file://" + os.path.join(deep, "%(folder)s.jsonl"), {"folder": "..%5Cevil"}),
            ("file://" + os.path.join(deep, "%(folder)s", "x.jsonl"), {"folder": "%2E%2E"}),
            (os.path.join(deep, "%(folder)s%(count)s", "x.jsonl"),
             {"folder": ".", "count": "."}),
        ]
        for uri, arguments in cases:
            crawler = Crawler(NumbersSpider, Settings({"FEEDS": {uri: {}}}))
            failure = self.failureResultOf(crawler.crawl(start=self.start, **arguments),
                                           UsageError)
            self.assertIn("would choose the folder", str(failure.value))
            self.assertEqual(len(str(failure.value).splitlines()), 1)
        self.assertEqual(os.listdir(self.tmp), [])
        self.assertEqual(self.server.hits.get("/", 0), 0)

    @defer.inlineCallbacks
    def test_a_value_with_dots_and_escapes_stays_in_the_folder(self):
        """A value with dots that is not '..' (v1.2, ...) and a plain path's literal %2f
        are file names in the template's folder."""
        yield crawl(NumbersSpider, {"FEEDS": {
            self.path("%(folder)s.jsonl"): {}, self.path("%(name)s.jsonl"): {}}},
            start=self.start, folder="v1.2...", name="odd%2fname")
        self.assertEqual(sorted(os.listdir(self.tmp)), ["odd%2fname.jsonl", "v1.2....jsonl"])
        self.assertEqual(len(read_lines(self.path("v1.2....jsonl"))), 5)

    @defer.inlineCallbacks
    def test_store_empty(self):
        """A feed no item reaches is written with store_empty (an empty JSON array,
        Scrapy's bytes) and not without it; item_filter chooses what a feed takes."""
        yield self.crawl({
            self.path("empty.json"): {"item_filter": f"{__name__}.Nothing"},
            self.path("none.json"): {"item_filter": f"{__name__}.Nothing",
                                     "store_empty": False},
            self.path("thirds.jsonl"): {"item_filter": f"{__name__}.ThirdsOnly"}})
        with open(self.path("empty.json"), "rb") as f:
            self.assertEqual(f.read(), b"[\n\n]")
        self.assertFalse(os.path.exists(self.path("none.json")))
        self.assertEqual(read_lines(self.path("thirds.jsonl")),
                         [{"n": 2, "kind": "third"}])

    @defer.inlineCallbacks
    def test_marshal_and_pickle(self):
        """The marshal and pickle formats hold the items (pickle compared as bytes: a
        pickle is never loaded)."""
        yield self.crawl({self.path("o.marshal"): {}, self.path("o.pickle"): {}})
        with open(self.path("o.marshal"), "rb") as f:
            self.assertEqual([marshal.load(f) for _ in range(5)][4], {"n": 4})
        with open(self.path("o.pickle"), "rb") as f:
            data = f.read()
        self.assertTrue(data.startswith(pickle.dumps({"n": 0}, protocol=4)))
        self.assertEqual(len(data.split(b"\x80\x04")), 6)

    @defer.inlineCallbacks
    def test_signals_and_stats(self):
        """feed_slot_closed once a file (each batch) is stored, feed_exporter_closed once
        all are; the stats count the stored files by storage, as Scrapy's."""
        events = []
        crawler = Crawler(NumbersSpider, Settings({
            "LOG_LEVEL": "WARNING",
            "FEEDS": {self.path("%(batch_id)d.jsonl"): {"batch_item_count": 3}}}))
        crawler.signals.connect(lambda slot: events.append(("slot", slot.batch_id)),
                                signals.feed_slot_closed)
        crawler.signals.connect(lambda: events.append(("exporter",)),
                                signals.feed_exporter_closed)
        yield crawler.crawl(start=self.start)
        self.assertEqual(events, [("slot", 1), ("slot", 2), ("exporter",)])
        stats = crawler.stats.get_stats()
        self.assertEqual(stats["feedexport/success_count/FileFeedStorage"], 2)
        self.assertEqual(stats["feedexport/items_count"], 5)


class Shouting:
    """A post-processing plugin of the project's: upper-cases what passes through."""

    def __init__(self, file, feed_options):
        self.file = file

    def write(self, data):
        return self.file.write(data.upper())

    def close(self):
        self.file.close()


class Nothing(ItemFilter):
    """An item_filter that takes no item."""

    def accepts(self, item):
        return False


class BrokenPipeline:
    """A pipeline whose open_spider raises: the crawl fails to start."""

    def open_spider(self, spider):
        raise RuntimeError("no database")

    def process_item(self, item, spider):
        return item


class OverwriteTests(unittest.TestCase):
    """An -O (overwrite) feed is replaced only once the crawl has started."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")
        self.out = os.path.abspath(self.mktemp()) + ".json"
        with open(self.out, "w") as f:
            f.write('[{"old": 1}]')

    @defer.inlineCallbacks
    def test_a_crawl_that_fails_to_start_leaves_the_file(self):
        """A pipeline's open_spider raises: the crawl fails, the old file is as it was."""
        crawler = Crawler(NumbersSpider, Settings({
            "LOG_LEVEL": "CRITICAL", "FEEDS": {self.out: {"overwrite": True}},
            "ITEM_PIPELINES": {BrokenPipeline: 1}}))
        yield self.assertFailure(crawler.crawl(start=self.start), Exception)
        with open(self.out) as f:
            self.assertEqual(f.read(), '[{"old": 1}]')
        self.assertNotIn(self.out, feedexport._OPEN_FEEDS)  # nothing held open for it

    @defer.inlineCallbacks
    def test_a_crawl_that_starts_replaces_it(self):
        """Once the crawl has started, the file holds only this crawl's items."""
        yield crawl(NumbersSpider, {"FEEDS": {self.out: {"overwrite": True}}},
                    start=self.start, count=2)
        with open(self.out) as f:
            self.assertEqual(json.load(f), [{"n": 0}, {"n": 1}])


class PseudoFilesystemTests(unittest.TestCase):
    """A feed on a filesystem that holds no files."""

    def test_proc_is_not_called_full(self):
        """-O /proc/nope/x.json is refused as a place that holds no files, not as a full
        disk."""
        from tinyscrapy.exceptions import UsageError
        from tinyscrapy.extensions.feedexport import FileFeedStorage
        if not os.path.isdir("/proc") or os.statvfs("/proc").f_blocks != 0:
            raise unittest.SkipTest("no /proc pseudo-filesystem here")
        error = self.assertRaises(UsageError, FileFeedStorage("/proc/nope/x.json").check)
        self.assertIn("holds no files", str(error))


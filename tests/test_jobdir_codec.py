"""
The safe codec of stored requests (L{tinyscrapy.frontier.codec}): data only, so that
nothing read back from a C{--jobdir} (or a Redis queue) can run code; and the privacy of
the job directory's files.
"""

import dataclasses
import json
import os
import pickle
import sqlite3
import stat
from datetime import date, datetime, timedelta, timezone

from twisted.internet import task
from twisted.trial import unittest

from tests.logs import capture_logs
from tinyscrapy.exceptions import UnserializableRequest, UsageError
from tinyscrapy.frontier import codec
from tinyscrapy.frontier.codec import (
    MAGIC,
    StoredRequestError,
    register_item_class,
    request_from_bytes,
    request_to_bytes,
)
from tinyscrapy.frontier.disk import FILENAME, DiskScheduler
from tinyscrapy.frontier.jobdir import save_demo_port
from tinyscrapy.http import Request
from tinyscrapy.spiders import Spider
from tinyscrapy.statscollectors import StatsCollector


class ShopSpider(Spider):
    name = "shop"

    def parse(self, response):
        pass

    def parse_item(self, response, **kwargs):
        pass


class ProjectRequest(Request):
    """A project's own request class (a subclass registers itself)."""

    __slots__ = ()


@register_item_class
@dataclasses.dataclass
class Product:
    name: str
    price: float = 0.0


@dataclasses.dataclass
class Unregistered:
    name: str


class _Touch:
    """A pickle that creates a file when it is loaded."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


class CodecTests(unittest.TestCase):
    def setUp(self):
        self.spider = ShopSpider()

    def _round_trip(self, request):
        return request_from_bytes(request_to_bytes(request, self.spider), self.spider)

    def test_tagged_values_round_trip(self):
        """bytes, tuples, sets, frozensets, datetimes, dates and odd dict keys come back
        as they were, nested too."""
        when = datetime(2026, 12, 1, 9, 30, tzinfo=timezone(timedelta(hours=2)))
        meta = {"raw": b"\x00\xff", "pair": (1, ("a", b"b")), "tags": {"x", "y"},
                "frozen": frozenset({1}), "when": when, "naive": datetime(2026, 1, 2),
                "day": date(2026, 2, 3), "by_id": {1: "one", (2, 3): "pair"},
                "tag_like": {"$b": "not a tag"}, "deep": [{"k": [None, True, 1.5]}],
                "nested": {"inner": {"x": (1,)}}}
        request = Request("http://example.com/", meta=meta, cb_kwargs={"n": (1, 2)})
        loaded = self._round_trip(request)
        self.assertEqual(loaded.meta, meta)
        self.assertIsInstance(loaded.meta["pair"][1], tuple)
        self.assertIsInstance(loaded.meta["frozen"], frozenset)
        self.assertEqual(loaded.meta["when"].utcoffset(), timedelta(hours=2))
        self.assertEqual(loaded.cb_kwargs, {"n": (1, 2)})

    def test_stored_as_json_not_pickle(self):
        """The stored bytes are a marker and one JSON object: readable, no pickle opcode."""
        data = request_to_bytes(Request("http://example.com/j", callback=self.spider.parse_item),
                                self.spider)
        self.assertTrue(data.startswith(MAGIC))
        fields = json.loads(data[len(MAGIC):])
        self.assertEqual(fields["callback"], "parse_item")
        self.assertEqual(fields["class"], "tinyscrapy.http.request.Request")

    def test_subclass_and_registered_items_round_trip(self):
        """A Request subclass comes back as itself; a registered dataclass item in meta too."""
        request = ProjectRequest("http://example.com/p",
                                 meta={"item": Product("pen", 1.5)},
                                 cb_kwargs={"items": [Product("cap")]})
        loaded = self._round_trip(request)
        self.assertIs(type(loaded), ProjectRequest)
        self.assertEqual(loaded.meta["item"], Product("pen", 1.5))
        self.assertEqual(loaded.cb_kwargs["items"], [Product("cap")])

    def test_meta_with_an_object_is_refused_naming_url_and_key(self):
        """Anything but plain data or a registered item: one error naming the URL and key."""
        for value in (object(), Unregistered("x"), [1, {"deep": self}], print):
            request = Request("http://example.com/obj", meta={"thing": value})
            e = self.assertRaises(UnserializableRequest, request_to_bytes, request,
                                  self.spider)
            self.assertIn("http://example.com/obj", str(e))
            self.assertIn("meta['thing']", str(e))
        request = Request("http://example.com/kw", cb_kwargs={"session": object()})
        e = self.assertRaises(UnserializableRequest, request_to_bytes, request, self.spider)
        self.assertIn("cb_kwargs['session']", str(e))

    def test_pickled_entry_is_refused_and_not_run(self):
        """An older tinyscrapy's pickle (here a crafted one) is refused: nothing runs."""
        target = self.mktemp()
        data = pickle.dumps(_Touch(target))
        self.assertTrue(codec.is_old_format(data))
        e = self.assertRaises(StoredRequestError, request_from_bytes, data, self.spider)
        self.assertIn("older tinyscrapy", str(e))
        self.assertFalse(os.path.exists(target))

    def test_crafted_entries_are_refused(self):
        """Unknown classes, tags, dunder callbacks and wrong kinds: refused, never called."""
        good = json.loads(request_to_bytes(Request("http://e.com/"), self.spider)[4:])
        crafted = [
            {**good, "class": "os.system"},
            {**good, "callback": "__init__"},
            {**good, "callback": "no_such_method"},
            {**good, "meta": {"x": {"$item": ["os.system", {"command": "touch x"}]}}},
            {**good, "meta": {"x": {"$reduce": ["os.system", "id"]}}},
            {**good, "meta": {"x": {"$b": 12}}},
            {**good, "headers": [["a", [1]]]},
            {**good, "priority": "1"},
            {key: value for key, value in good.items() if key != "url"},
            [good],
        ]
        for fields in crafted:
            data = MAGIC + json.dumps(fields).encode()
            self.assertRaises(StoredRequestError, request_from_bytes, data, self.spider)
        self.assertRaises(StoredRequestError, request_from_bytes, MAGIC + b"{", self.spider)
        self.assertRaises(StoredRequestError, request_from_bytes, b"junk", self.spider)


class StoredCodeTests(unittest.TestCase):
    """What a job directory on disk can and cannot make a crawl do."""

    def setUp(self):
        self.root = self.mktemp()
        self.jobdir = os.path.join(self.root, "shop")
        self.spider = ShopSpider()

    def _open(self):
        scheduler = DiskScheduler(self.jobdir, stats=StatsCollector(), clock=task.Clock())
        scheduler.open(self.spider)
        self.addCleanup(scheduler.close, "test")
        return scheduler

    def _db(self):
        db = sqlite3.connect(os.path.join(self.jobdir, FILENAME))
        self.addCleanup(db.close)
        return db

    def test_crafted_pickle_row_does_not_run(self):
        """A pickle row that would create a file, among good rows: refused and counted; the
        good requests still load."""
        first = self._open()
        first.enqueue_request(Request("http://example.com/a", callback=self.spider.parse))
        first.enqueue_request(Request("http://example.com/b", callback=self.spider.parse))
        first.close("shutdown")
        target = os.path.join(self.root, "pwned")
        with self._db() as db:
            db.execute("INSERT INTO requests VALUES (?, 'example.com', 9, ?)",
                       (100, pickle.dumps(_Touch(target))))
        logs = capture_logs(self)
        second = self._open()
        self.assertFalse(os.path.exists(target))
        self.assertEqual(second.size(), 2)
        self.assertEqual(second.stats.get_value("scheduler/unloadable"), 1)
        self.assertIn("dropping stored request 100", logs.text())
        self.assertIn("older tinyscrapy", logs.text())

    def test_crafted_row_moves_to_the_dead_table(self):
        """A row that does not load leaves the queue for the dead table, with its bytes
        and the reason: the next run does not meet it again."""
        first = self._open()
        first.enqueue_request(Request("http://example.com/a", callback=self.spider.parse))
        first.close("shutdown")
        with self._db() as db:
            db.execute("INSERT INTO requests VALUES (?, 'example.com', 9, ?)",
                       (100, b"TSJ1{not json"))
        second = self._open()
        self.assertEqual(second.size(), 1)
        second.close("shutdown")
        db = self._db()
        self.assertEqual(db.execute("SELECT id, data FROM dead").fetchall(),
                         [(100, b"TSJ1{not json")])
        self.assertIn("not a stored request",
                      db.execute("SELECT reason FROM dead").fetchone()[0])
        self.assertEqual(db.execute("SELECT COUNT(*) FROM requests WHERE id = 100").fetchone(),
                         (0,))
        third = self._open()
        self.assertIsNone(third.stats.get_value("scheduler/unloadable"))

    def test_rows_a_changed_spider_cannot_load_are_kept(self):
        """Resumed by a spider that lost the stored callback: nothing is deleted, the rows
        stay for a spider that has it, said once; the right spider then gets them all."""
        from tinyscrapy.frontier import disk

        self.patch(disk, "HEAD", 2)

        class Items(Spider):
            name = "shop"

            def parse_item(self, response):
                pass

        class Renamed(Spider):
            name = "shop"

            def parse_product(self, response):
                pass

        self.spider = Items()
        first = self._open()
        for n in range(6):
            first.enqueue_request(Request(f"http://example.com/{n}",
                                          callback=self.spider.parse_item))
        first.close("shutdown")

        logs = capture_logs(self)
        changed = DiskScheduler(self.jobdir, stats=StatsCollector(), clock=task.Clock())
        changed.open(Renamed())
        self.assertIsNone(changed.next_request())
        self.assertIsNone(changed.next_request())
        self.assertEqual(changed.stats.get_value("scheduler/unloadable_kept"), 1)
        self.assertIsNone(changed.stats.get_value("scheduler/unloadable"))
        self.assertEqual(logs.text().count("cannot load stored request"), 1)
        self.assertIn("no method 'parse_item'", logs.text())
        changed.close("jobdir_error")
        with self._db() as db:
            self.assertEqual(db.execute("SELECT count(*) FROM requests").fetchone()[0], 6)
        again = self._open()
        urls = []
        for _ in range(20):  # bounded
            request = again.next_request()
            if request is None:
                break
            urls.append(request.url)
            again.request_done(request)
        self.assertEqual(sorted(urls), [f"http://example.com/{n}" for n in range(6)])

    def test_crafted_seen_values_are_ignored(self):
        """Text, real and blob values in the seen table: ignored, counted, said once; the
        waiting requests and the integer fingerprints still load."""
        first = self._open()
        first.enqueue_request(Request("http://example.com/a", callback=self.spider.parse))
        first.close("shutdown")
        with self._db() as db:
            db.executemany("INSERT INTO seen VALUES (?)", [("abc",), (1.5,), (b"\x00",)])
        logs = capture_logs(self)
        second = self._open()
        self.assertEqual(second.size(), 1)
        self.assertEqual(len(second.seen), 1)
        self.assertEqual(second.stats.get_value("scheduler/unloadable"), 3)
        self.assertEqual(logs.text().count("not integers"), 1)

    def test_old_format_directory_is_refused_with_how_to_start_over(self):
        """A directory an older tinyscrapy wrote (pickled rows, no format): one line."""
        os.makedirs(self.jobdir)
        with self._db() as db:
            db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute("CREATE TABLE requests (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
            db.execute("INSERT INTO meta VALUES ('spider', 'shop')")
            db.execute("INSERT INTO requests VALUES (1, ?)",
                       (pickle.dumps({"v": 1, "url": "http://example.com/"}),))
        e = self.assertRaises(UsageError, self._open)
        self.assertIn("older tinyscrapy", str(e))
        self.assertIn("start the crawl again", str(e))
        self.assertNotIn("\n", str(e))

    def test_files_and_directories_are_private(self):
        """The job directory and the spider's directory 0700; database, WAL, lock, 0600."""
        scheduler = self._open()
        scheduler.enqueue_request(Request("http://example.com/a"))
        scheduler.flush()
        save_demo_port(self.root, 8080)
        for directory in (self.root, self.jobdir):
            self.assertEqual(stat.S_IMODE(os.stat(directory).st_mode), 0o700, directory)
        names = os.listdir(self.jobdir)
        self.assertIn(FILENAME + "-wal", names)
        for name in names:
            path = os.path.join(self.jobdir, name)
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600, path)
        mode = os.stat(os.path.join(self.root, "demo_port")).st_mode
        self.assertEqual(stat.S_IMODE(mode), 0o600)

    def test_folders_made_above_it_are_private_too(self):
        """--jobdir a/b/c with a permissive umask: every folder made for it is 0700."""
        from tinyscrapy.frontier.jobdir import make_private_dir
        old = os.umask(0)
        self.addCleanup(os.umask, old)
        base = os.path.abspath(self.mktemp())
        make_private_dir(os.path.join(base, "a", "b"), parent_too=True)
        for folder in (base, os.path.join(base, "a"), os.path.join(base, "a", "b")):
            self.assertEqual(stat.S_IMODE(os.stat(folder).st_mode), 0o700, folder)

    def test_existing_open_directory_is_made_private(self):
        """A directory made 0755 by an older run is restricted when it is used."""
        os.makedirs(self.jobdir, mode=0o755)
        os.chmod(self.root, 0o755)
        os.chmod(self.jobdir, 0o755)
        self._open()
        self.assertEqual(stat.S_IMODE(os.stat(self.root).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(self.jobdir).st_mode), 0o700)

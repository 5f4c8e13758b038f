"""
The media pipelines against a local site: FilesPipeline and ImagesPipeline download what
items list, store it under a name from the URL's hash, atomically, and give the items
their results; thumbnails, an expired and a fresh file, a 404 and a redirect, one file
for two items, a refused request, the ledger; without Pillow or a store, the start stops;
kill -9 while files are written; a full disk under FILES_STORE.
"""

import hashlib
import io
import json
import os
import signal
import sys
import textwrap
import time

from PIL import Image
from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import NotConfigured, UsageError
from tinyscrapy.item import Field, Item
from tinyscrapy.settings import Settings

from .helpers import crawl_and_collect, run_command, run_python, serve
from .servers import Page, Redirect
from .test_full_disk import fill, mount_tmpfs, when

FILES = {"tinyscrapy.pipelines.files.FilesPipeline": 1}
IMAGES = {"tinyscrapy.pipelines.images.ImagesPipeline": 1}


def sha1(url):
    return hashlib.sha1(url.encode()).hexdigest()


def image_bytes(size, mode="RGB", fmt="PNG", color=(200, 30, 30)):
    """An image of C{size} in C{mode}, encoded as C{fmt}."""
    buf = io.BytesIO()
    Image.new(mode, size, color if mode != "P" else 3).save(buf, fmt)
    return buf.getvalue()


class Listing(Item):
    """A declared item with the pipelines' fields."""

    name = Field()
    file_urls = Field()
    files = Field()


class MediaSpider(Spider):
    """Fetches C{start}; yields C{items} (dicts, or L{Listing}s with C{declared})."""

    name = "media"
    items = ()
    declared = False

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        for item in self.items:
            yield Listing(item) if self.declared else dict(item)


class MediaTests(unittest.TestCase):
    """What the pipelines store, and what the items get."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")
        self.store = os.path.abspath(self.mktemp())
        self.pdf = self.server.add("/doc.pdf", Page(b"%PDF-1.4 a document",
                                                    content_type="application/pdf"))
        self.missing = self.server.url("/missing.pdf")  # a 404

    def crawl(self, items, pipelines=FILES, **settings):
        base = {"ITEM_PIPELINES": pipelines, "FILES_STORE": self.store,
                "IMAGES_STORE": self.store, **settings}
        return crawl_and_collect(MediaSpider, base, start=self.start, items=items,
                                 declared=settings.pop("declared", False))

    def stored(self, path):
        with open(os.path.join(self.store, path), "rb") as f:
            return f.read()

    @defer.inlineCallbacks
    def test_files_and_their_results(self):
        """A file is stored under the SHA-1 of its URL with its extension, its info is in
        the item; a 404 is left out (logged); the ledger has an entry for each download."""
        crawler, [item] = yield self.crawl([{"name": "a",
                                             "file_urls": [self.pdf, self.missing]}])
        path = f"full/{sha1(self.pdf)}.pdf"
        self.assertEqual(item["files"], [{
            "url": self.pdf, "path": path, "status": "downloaded",
            "checksum": hashlib.md5(b"%PDF-1.4 a document").hexdigest()}])
        self.assertEqual(self.stored(path), b"%PDF-1.4 a document")
        stats = crawler.stats.get_stats()
        self.assertEqual(stats["file_count"], 1)
        self.assertEqual(stats["file_status_count/downloaded"], 1)
        self.assertEqual((stats["ledger/opened"], stats["ledger/missing"]), (3, 0))
        self.assertEqual(stats["finish_reason"], "finished")
        umask = os.umask(0)
        os.umask(umask)
        mode = os.stat(os.path.join(self.store, path)).st_mode & 0o777
        self.assertEqual(mode, 0o666 & ~umask)
        self.assertEqual([name for name in os.listdir(os.path.join(self.store, "full"))
                          if name.endswith(".part")], [])

    @defer.inlineCallbacks
    def test_one_download_for_many_items(self):
        """Two items (and one item twice) that want the same URL: downloaded once, both
        items get it; a declared Item gets its files field too."""
        items = [{"name": "a", "file_urls": [self.pdf, self.pdf]},
                 {"name": "b", "file_urls": [self.pdf]}]
        _, got = yield self.crawl(items, declared=True)
        self.assertEqual(self.server.hits["/doc.pdf"], 1)
        self.assertEqual([[f["path"] for f in item["files"]] for item in got],
                         [[f"full/{sha1(self.pdf)}.pdf"] * 2, [f"full/{sha1(self.pdf)}.pdf"]])
        self.assertTrue(all(isinstance(item, Listing) for item in got))

    @defer.inlineCallbacks
    def test_redirects(self):
        """A redirect is a failed file unless MEDIA_ALLOW_REDIRECTS, which follows it."""
        moved = self.server.add("/moved.pdf", Redirect("/doc.pdf"))
        _, [item] = yield self.crawl([{"file_urls": [moved]}])
        self.assertEqual(item["files"], [])
        _, [item] = yield self.crawl([{"file_urls": [moved]}], MEDIA_ALLOW_REDIRECTS=True)
        self.assertEqual([(f["url"], f["path"]) for f in item["files"]],
                         [(moved, f"full/{sha1(moved)}.pdf")])

    @defer.inlineCallbacks
    def test_fresh_and_expired_files(self):
        """A stored file younger than FILES_EXPIRES days is up to date (not downloaded);
        an older one is downloaded again."""
        fresh = self.server.add("/fresh.pdf", Page(b"new fresh"))
        old = self.server.add("/old.pdf", Page(b"new old"))
        full = os.path.join(self.store, "full")
        os.makedirs(full)
        for url, age_days in ((fresh, 1), (old, 100)):
            path = os.path.join(full, f"{sha1(url)}.pdf")
            with open(path, "wb") as f:
                f.write(b"stored")
            then = time.time() - age_days * 86400
            os.utime(path, (then, then))
        crawler, [item] = yield self.crawl([{"file_urls": [fresh, old]}], FILES_EXPIRES=30)
        self.assertEqual([f["status"] for f in item["files"]], ["uptodate", "downloaded"])
        self.assertEqual(item["files"][0]["checksum"], hashlib.md5(b"stored").hexdigest())
        self.assertEqual((self.server.hits["/fresh.pdf"], self.server.hits["/old.pdf"]), (0, 1))
        self.assertEqual(self.stored(f"full/{sha1(old)}.pdf"), b"new old")
        self.assertEqual(crawler.stats.get_value("file_status_count/uptodate"), 1)

    @defer.inlineCallbacks
    def test_a_refused_request_is_not_an_error(self):
        """A file off the spider's allowed_domains is filtered: not downloaded, not in the
        results, logged at DEBUG only; the ledger counts it as dropped."""
        MediaSpider.allowed_domains = ["127.0.0.1"]
        self.addCleanup(delattr, MediaSpider, "allowed_domains")
        crawler, [item] = yield self.crawl([{"file_urls": ["http://localhost:1/x.pdf"]}])
        self.assertEqual(item["files"], [])
        self.assertEqual(crawler.stats.get_value("ledger/dropped/OffsiteRequest"), 1)
        self.assertIsNone(crawler.stats.get_value("log_count/ERROR"))

    @defer.inlineCallbacks
    def test_images_thumbnails_and_conversion(self):
        """Images are stored as JPEG (a JPEG as it came), with thumbnails that fit their
        box; one smaller than IMAGES_MIN_WIDTH is refused."""
        png = self.server.add("/a.png", Page(image_bytes((100, 80), "RGBA", color=(0, 0, 0, 0)),
                                             content_type="image/png"))
        jpeg_bytes = image_bytes((60, 40), fmt="JPEG")
        jpeg = self.server.add("/b.jpg", Page(jpeg_bytes, content_type="image/jpeg"))
        gif = self.server.add("/c.gif", Page(image_bytes((64, 64), "P", fmt="GIF"),
                                             content_type="image/gif"))
        tiny = self.server.add("/tiny.png", Page(image_bytes((10, 10)), content_type="image/png"))
        _, [item] = yield self.crawl([{"image_urls": [png, jpeg, gif, tiny]}], IMAGES,
                                     IMAGES_THUMBS={"small": (50, 50)}, IMAGES_MIN_WIDTH=20)
        self.assertEqual([i["url"] for i in item["images"]], [png, jpeg, gif])
        self.assertEqual(self.stored(f"full/{sha1(jpeg)}.jpg"), jpeg_bytes)  # kept as it came
        stored_png = Image.open(io.BytesIO(self.stored(f"full/{sha1(png)}.jpg")))
        self.assertEqual((stored_png.format, stored_png.size), ("JPEG", (100, 80)))
        stored_gif = Image.open(io.BytesIO(self.stored(f"full/{sha1(gif)}.jpg")))
        self.assertEqual((stored_gif.format, stored_gif.mode), ("JPEG", "RGB"))
        thumb = Image.open(io.BytesIO(self.stored(f"thumbs/small/{sha1(png)}.jpg")))
        self.assertEqual((thumb.format, thumb.size), ("JPEG", (50, 40)))
        self.assertFalse(os.path.exists(os.path.join(self.store, f"full/{sha1(tiny)}.jpg")))

    def test_without_a_store_the_start_stops(self):
        """FilesPipeline without FILES_STORE: a one-line usage error (also Scrapy's
        NotConfigured), nothing fetched."""
        crawler = Crawler(MediaSpider, Settings({"ITEM_PIPELINES": FILES}))
        failure = self.failureResultOf(crawler.crawl(start=self.start), UsageError)
        self.assertIsInstance(failure.value, NotConfigured)
        self.assertIn("FILES_STORE setting must be set", str(failure.value))
        self.assertEqual(self.server.hits["/"], 0)

    def test_without_pillow_the_start_stops(self):
        """ImagesPipeline without Pillow: a one-line usage error naming tinyscrapy[images]."""
        saved = {name: module for name, module in sys.modules.items()
                 if name == "PIL" or name.startswith("PIL.")}
        for name in saved:
            del sys.modules[name]
        sys.modules["PIL"] = None
        self.addCleanup(sys.modules.update, saved)
        crawler = Crawler(MediaSpider, Settings({"ITEM_PIPELINES": IMAGES,
                                                 "IMAGES_STORE": self.store}))
        failure = self.failureResultOf(crawler.crawl(start=self.start), UsageError)
        self.assertIn("requires installing Pillow", str(failure.value))
        self.assertIn("pip install 'tinyscrapy[images]'", str(failure.value))


NO_PILLOW = """
import sys
sys.modules["PIL"] = None
from tinyscrapy.cmdline import main
main(sys.argv[1:])
"""


class MediaCommandTests(unittest.TestCase):
    """The media pipelines' refusals on the command line."""

    @defer.inlineCallbacks
    def test_without_pillow_one_line_exit_2(self):
        """A crawl asking for ImagesPipeline where Pillow is missing: one line, exit 2."""
        server = serve(self)
        url = server.add_page("/")
        store = os.path.abspath(self.mktemp())
        code, _out, err = yield run_python(reactor, [
            "-c", NO_PILLOW, "crawl", url, "-s", f"IMAGES_STORE={store}",
            "-s", f"ITEM_PIPELINES={json.dumps(IMAGES)}"])
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("tinyscrapy[images]", err)
        self.assertEqual(server.hits["/"], 0)


SPIDER_FILE = """
from tinyscrapy import Request, Spider


class Files(Spider):
    name = "files"
    custom_settings = {{"ITEM_PIPELINES": {{"tinyscrapy.pipelines.files.FilesPipeline": 1}},
                       "CONCURRENT_REQUESTS_PER_DOMAIN": 2}}

    def start_requests(self):
        for page in range({pages}):
            yield Request(self.base + f"/p{{page}}")

    def parse(self, response):
        page = response.url.rsplit("p", 1)[1]
        yield {{"page": page, "file_urls": [self.base + f"/f{{page}}-{{n}}.bin"
                                            for n in range({files})]}}
"""


def file_body(path, size):
    """The C{size} bytes served at C{path}."""
    return (path.encode() * (size // len(path) + 1))[:size]


class _FilesSite:
    """A site of C{pages} pages, each with C{files} files of C{size} bytes, and a spider
    file that stores them all with FilesPipeline; run as a process."""

    timeout = 120
    pages, files = 12, 4
    size = 1 << 20

    def setUp(self):
        self.server = serve(self)
        for page in range(self.pages):
            self.server.add_page(f"/p{page}")
            for n in range(self.files):
                path = f"/f{page}-{n}.bin"
                self.server.add(path, Page(self.file_body(path),
                                           content_type="application/x-bin"))
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)
        self.spider = os.path.join(self.tmp, "files.py")
        with open(self.spider, "w") as f:
            f.write(textwrap.dedent(SPIDER_FILE.format(pages=self.pages, files=self.files)))

    def file_body(self, path):
        return file_body(path, self.size)

    def args(self, store, jobdir, feed):
        return ["runspider", self.spider, "-a", f"base={self.server.url('/').rstrip('/')}",
                "-s", f"FILES_STORE={store}", "--jobdir", jobdir, "-o", feed, "-L", "WARNING"]

    def stored_files(self, store):
        full = os.path.join(store, "full")
        if not os.path.isdir(full):
            return []
        return [name for name in os.listdir(full) if not name.endswith(".part")]

    def check_complete(self, store):
        """Every file in the store is whole: its bytes are what was served.
        @return: how many there are."""
        served = {f"{sha1(self.server.url(p))}.bin": p for p in self.server.hits}
        names = self.stored_files(store)
        for name in names:
            with open(os.path.join(store, "full", name), "rb") as f:
                self.assertEqual(f.read(), self.file_body(served[name]), name)
        return len(names)

    def check_feed(self, feed):
        """Every page's item is in the feed (some twice: pages fetched again on resume)."""
        with open(feed) as f:
            pages = {json.loads(line)["page"] for line in f}
        self.assertEqual(pages, {str(page) for page in range(self.pages)})


class MediaKillTests(_FilesSite, unittest.TestCase):
    """kill -9 while files are written (files of a MiB each)."""

    @defer.inlineCallbacks
    def test_kill_while_writing_then_resume(self):
        """kill -9 mid-crawl: every stored file is whole; the next run with the same
        --jobdir stores the rest, and every page's item is in the feed."""
        store, jobdir = os.path.join(self.tmp, "store"), os.path.join(self.tmp, "job")
        feed = os.path.join(self.tmp, "items.jsonl")
        transports = []
        run = run_command(reactor, self.args(store, jobdir, feed), started=transports.append)
        yield when(lambda: len(self.stored_files(store)) >= 6)
        transports[0].signalProcess(signal.SIGKILL)
        code, _out, err = yield run
        self.assertNotEqual(code, 0)
        self.assertLess(self.check_complete(store), self.pages * self.files)
        code, _out, err = yield run_command(reactor, self.args(store, jobdir, feed))
        self.assertEqual(code, 0, err)
        self.assertEqual(self.check_complete(store), self.pages * self.files)
        self.check_feed(feed)


class MediaFullDiskTests(_FilesSite, unittest.TestCase):
    """A full disk under FILES_STORE (a tmpfs that holds every file once freed)."""

    size = 100 * 1024

    @defer.inlineCallbacks
    def test_full_disk_under_the_store(self):
        """The store's disk fills mid-crawl: files_error, exit 1, no partial file; the next
        run with the same --jobdir, with room again, stores every file."""
        disk = mount_tmpfs(self, "8m")
        store, jobdir = os.path.join(disk, "store"), os.path.join(self.tmp, "job")
        feed = os.path.join(self.tmp, "items.jsonl")
        run = run_command(reactor, self.args(store, jobdir, feed))
        yield when(lambda: sum(self.server.hits.values()) >= 8)
        filler = fill(disk)
        code, _out, err = yield run
        self.assertEqual(code, 1, err)
        self.assertIn("(files_error)", err)
        self.check_complete(store)
        os.unlink(filler)
        code, _out, err = yield run_command(reactor, self.args(store, jobdir, feed))
        self.assertEqual(code, 0, err)
        self.assertEqual(self.check_complete(store), self.pages * self.files)
        self.check_feed(feed)

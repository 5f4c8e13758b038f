"""
Full disks: feeds, job directories, C{--trace} and C{STATS_FILE} on a small tmpfs that the
test fills (mounting needs root, as in CI; without it these tests are skipped), and paths
that cannot be written at all.
"""

import errno
import json
import os
import subprocess

from twisted.internet import defer, reactor, task
from twisted.trial import unittest

from tests.helpers import crawl, run_command
from tests.servers import Delay
from tinyscrapy.extensions import feedexport as feeds
from tinyscrapy.frontier.disk import DiskScheduler
from tinyscrapy.spiders import Spider

from .helpers import needs_processes, serve

PAGES = 40


def mount_tmpfs(testcase, size="1m"):
    """A fresh tmpfs of C{size} on a new directory, unmounted at the test's end.
    @raise unittest.SkipTest: not root, or mounting failed."""
    needs_processes("mount")
    if os.geteuid() != 0:
        raise unittest.SkipTest("mounting a small tmpfs needs root (CI runs as root)")
    path = os.path.abspath(testcase.mktemp())
    os.makedirs(path)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                             path], capture_output=True, text=True, timeout=10)
    if result.returncode != 0:
        raise unittest.SkipTest(f"cannot mount a tmpfs: {result.stderr.strip()}")
    testcase.addCleanup(subprocess.run, ["umount", "-l", path], timeout=10)
    return path


def fill(directory):
    """Write a file in C{directory} until its filesystem is full. @return: its path."""
    path = os.path.join(directory, "filler")
    chunk = b"\0" * 4096
    with open(path, "wb", buffering=0) as f:
        for _ in range(1 << 20):  # bounded: 4 GiB
            try:
                f.write(chunk)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
    return path


def when(condition, interval=0.02, limit=30):
    """@return: a Deferred fired once C{condition()} is true (checked every C{interval}
    seconds, at most C{limit} seconds)."""
    d = defer.Deferred()
    state = {"left": int(limit / interval)}

    def check():
        state["left"] -= 1
        if condition() or state["left"] <= 0:
            loop.stop()
            d.callback(None)

    loop = task.LoopingCall(check)
    loop.clock = reactor
    loop.start(interval)
    return d


class FullDiskTests(unittest.TestCase):
    """Crawls as processes against a slow local site, with a disk filled half-way."""

    timeout = 60

    delay = 0.1  # seconds a page

    def setUp(self):
        self.server = serve(self)
        home = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(PAGES))
        self.server.add("/", Delay(0, f"<title>home</title>{home}".encode()))
        for i in range(PAGES):  # long titles: an item crosses a page of the tmpfs
            title = f"p{i} " + "x" * 1500
            self.server.add(f"/p{i}", Delay(self.delay, f"<title>{title}</title>".encode()))
        self.url = self.server.url("/")

    def _args(self, jobdir, feed, stats, *extra):
        return ["crawl", self.url, "--jobdir", jobdir, "-o", feed,
                "-s", "CONCURRENT_REQUESTS=2", "-s", "ROBOTSTXT_OBEY=False",
                "-s", f"STATS_FILE={stats}", *extra]

    def _hits(self):
        return sum(self.server.hits.values())

    @staticmethod
    def _lines(feed):
        with open(feed, "rb") as f:
            data = f.read()
        if data:
            assert data.endswith(b"\n"), f"a torn last line: {data[-60:]!r}"
        return [json.loads(line) for line in data.splitlines()]

    @staticmethod
    def _stats(path):
        with open(path) as f:
            return json.load(f)

    @defer.inlineCallbacks
    def test_feed_on_a_full_disk_loses_nothing(self):
        """The feed's disk fills: feed_error, exit 1, no torn line; the next run with the
        same --jobdir fetches the pages whose items were not written."""
        disk = mount_tmpfs(self)
        feed = os.path.join(disk, "items.jsonl")
        jobdir, stats = os.path.abspath(self.mktemp()), os.path.abspath(self.mktemp())
        run = run_command(reactor, self._args(jobdir, feed, stats))
        yield when(lambda: self._hits() >= 8)
        filler = fill(disk)
        code, _out, err = yield run
        self.assertEqual(code, 1, err)
        self.assertEqual(self._stats(stats)["finish_reason"], "feed_error")
        self.assertIn("cannot write the feed", err)
        first = self._lines(feed)
        self.assertLess(len(first), PAGES + 1)

        os.unlink(filler)
        code, _out, err = yield run_command(reactor, self._args(jobdir, feed, stats))
        self.assertEqual(code, 0, err)
        urls = {item["url"] for item in self._lines(feed)}
        self.assertEqual(urls, {self.url} | {self.server.url(f"/p{i}") for i in range(PAGES)})

    @defer.inlineCallbacks
    def test_json_feed_on_a_full_disk_stays_an_array(self):
        """A .json feed whose disk fills is still a valid JSON array, and the next run
        appends the missing pages to it."""
        disk = mount_tmpfs(self)
        feed = os.path.join(disk, "items.json")
        jobdir, stats = os.path.abspath(self.mktemp()), os.path.abspath(self.mktemp())
        run = run_command(reactor, self._args(jobdir, feed, stats))
        yield when(lambda: self._hits() >= 8)
        filler = fill(disk)
        code, _out, err = yield run
        self.assertEqual(code, 1, err)
        with open(feed) as f:
            first = json.load(f)
        self.assertLess(len(first), PAGES + 1)
        os.unlink(filler)
        code, _out, err = yield run_command(reactor, self._args(jobdir, feed, stats))
        self.assertEqual(code, 0, err)
        with open(feed) as f:
            urls = {item["url"] for item in json.load(f)}
        self.assertEqual(urls, {self.url} | {self.server.url(f"/p{i}") for i in range(PAGES)})

    @defer.inlineCallbacks
    def test_jobdir_that_fills_stops_with_jobdir_error(self):
        """The job directory's disk fills mid-crawl: jobdir_error, exit 1, after a few
        failed writes (not an error every half second until the end)."""
        disk = mount_tmpfs(self, "2m")
        jobdir = os.path.join(disk, "job")
        feed, stats = os.path.abspath(self.mktemp() + ".jl"), os.path.abspath(self.mktemp())
        run = run_command(reactor, self._args(jobdir, feed, stats))
        yield when(lambda: self._hits() >= 6)
        fill(disk)
        code, _out, err = yield run
        self.assertEqual(code, 1, err)
        saved = self._stats(stats)
        self.assertEqual(saved["finish_reason"], "jobdir_error")
        self.assertLessEqual(saved["scheduler/flush_errors"], 3)
        self.assertIn("no more writes, the crawl stops", err)
        self.assertLess(self._hits(), PAGES + 1)

    @defer.inlineCallbacks
    def test_jobdir_on_a_full_disk_is_one_line(self):
        """A --jobdir on a full filesystem: one line, exit 2, nothing fetched."""
        disk = mount_tmpfs(self, "64k")
        fill(disk)
        feed, stats = os.path.abspath(self.mktemp() + ".jl"), os.path.abspath(self.mktemp())
        code, _out, err = yield run_command(
            reactor, self._args(os.path.join(disk, "job"), feed, stats))
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("full", err)
        self.assertEqual(self._hits(), 0)

    @defer.inlineCallbacks
    def test_trace_and_stats_file_on_a_full_disk(self):
        """--trace and STATS_FILE on a full filesystem are refused at the start."""
        disk = mount_tmpfs(self, "64k")
        fill(disk)
        jobdir, feed = os.path.abspath(self.mktemp()), os.path.abspath(self.mktemp() + ".jl")
        for extra in (["--trace", os.path.join(disk, "t.html")], []):
            stats = os.path.join(disk, "stats.json") if not extra else self.mktemp()
            code, _out, err = yield run_command(
                reactor, self._args(jobdir, feed, os.path.abspath(stats), *extra))
            self.assertEqual(code, 2, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn("filesystem is full", err)
        self.assertEqual(self._hits(), 0)


class UnwritablePathTests(unittest.TestCase):
    """Paths that cannot be written at all (no root needed)."""

    timeout = 30

    @defer.inlineCallbacks
    def test_trace_and_stats_file_that_cannot_be_written(self):
        """A --trace or STATS_FILE under a file: one line at the start, exit 2."""
        blocker = os.path.abspath(self.mktemp())
        with open(blocker, "w") as f:
            f.write("a file, not a folder")
        server = serve(self)
        server.add_page("/")
        for extra in (["--trace", os.path.join(blocker, "t.html")],
                      ["-s", f"STATS_FILE={os.path.join(blocker, 's.json')}"]):
            code, _out, err = yield run_command(
                reactor, ["crawl", server.url("/"), "-O", os.path.abspath(self.mktemp() + ".jl"),
                          *extra])
            self.assertEqual(code, 2, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn("cannot write it", err)
        self.assertEqual(sum(server.hits.values()), 0)

    @defer.inlineCallbacks
    def test_trace_dash_is_not_a_file(self):
        """--trace - prints the trace on stderr: no file named '-', items still on stdout."""
        server = serve(self)
        server.add_page("/")
        cwd = os.path.abspath(self.mktemp())
        os.makedirs(cwd)
        code, out, err = yield run_command(reactor, ["crawl", server.url("/"), "--trace", "-"],
                                           cwd=cwd)
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads(out.splitlines()[0])["url"], server.url("/"))
        self.assertNotIn("<html", out)
        self.assertFalse(os.path.exists(os.path.join(cwd, "-")))


class _RecordingDisk(DiskScheduler):
    """Records, at close, whether the feeds were still open."""

    feeds_open_at_close = []

    def close(self, reason):
        _RecordingDisk.feeds_open_at_close.append(dict(feeds._OPEN_FEEDS))
        return super().close(reason)


class _OnePage(Spider):
    name = "one"

    def parse(self, response):
        yield {"url": response.url}


class CloseOrderTests(unittest.TestCase):
    timeout = 20

    @defer.inlineCallbacks
    def test_feeds_close_before_the_frontier_commits(self):
        """At the end of a crawl the feed files are closed before the frontier's last
        write (a page is never acknowledged with its items still in a buffer)."""
        server = serve(self)
        server.add_page("/")
        feed = os.path.abspath(self.mktemp() + ".jsonl")
        _RecordingDisk.feeds_open_at_close.clear()
        crawler = yield crawl(_OnePage, {
            "JOBDIR": self.mktemp(), "FEEDS": {feed: {"format": "jsonlines"}},
            "SCHEDULER": f"{__name__}._RecordingDisk"}, start_urls=[server.url("/")])
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        self.assertEqual(_RecordingDisk.feeds_open_at_close, [{}])
        with open(feed) as f:
            self.assertEqual(len(f.readlines()), 1)


class FeedEdgeTests(unittest.TestCase):
    """Feed files at their edges: a disk full before the first item, a write cut on a
    full disk, a first JSON item that cannot be encoded."""

    def test_json_and_xml_feed_on_a_disk_full_at_start_is_one_line(self):
        """A feed on a full filesystem is refused when the crawler is built: a usage error
        naming the feed (exit 2 from the command line), no traceback."""
        from tinyscrapy.exceptions import UsageError

        from .test_feeds import open_feed
        disk = mount_tmpfs(self, "64k")
        fill(disk)
        for name in ("o.json", "o.xml"):
            path = os.path.join(disk, name)
            with self.assertRaises(UsageError) as caught:
                open_feed(path)
            self.assertIn(f"feed {path}: its filesystem is full", str(caught.exception))

    def test_a_write_that_fails_is_cut_off(self):
        """A write that fails part-way (the disk fills) leaves the file as it was before the
        item: the old items, the JSON array's closing bracket, no byte of the new one."""
        from tinyscrapy.extensions.feedexport import FeedFile
        disk = mount_tmpfs(self, "64k")
        path = os.path.join(disk, "o.json")
        with open(path, "wb") as f:
            f.write(b'[\n{"old": 1}\n]')
        feed = FeedFile(path)
        feed.continue_at(len(b'[\n{"old": 1}'))
        filler = fill(disk)
        feed.write(b',\n{"new": "' + b"x" * 200000 + b'"}')
        with self.assertRaises(OSError):
            feed.commit(b"\n]")
        feed.close()
        os.unlink(filler)
        with open(path, "rb") as f:
            self.assertEqual(json.loads(f.read()), [{"old": 1}])

    def test_json_first_item_that_cannot_be_encoded(self):
        """A first item the encoding cannot hold is refused; the next one is the array's
        first: the file stays valid JSON."""
        from .test_feeds import write_feed
        path = os.path.abspath(self.mktemp()) + ".json"
        write_feed(path, [{"price": "€"}, {"price": "£"}], encoding="latin-1")
        with open(path, encoding="latin-1") as f:
            self.assertEqual(json.load(f), [{"price": "£"}])

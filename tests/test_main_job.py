"""
The main job as a new user meets it: C{run} with no arguments, C{crawl}, C{demo},
C{list} and C{version}, each in a child process.
"""

import json
import os
import re

from twisted.internet import defer, reactor
from twisted.trial import unittest

import tinyscrapy
from tinyscrapy.demo import BOOK_COUNT, QUOTE_COUNT

from .helpers import ROOT, run_command
from .servers import TestServer


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


class RunDemoTests(unittest.TestCase):
    """C{python -m tinyscrapy run} from the repository root."""

    @defer.inlineCallbacks
    def test_run_without_arguments(self):
        """Both example spiders crawl the embedded site in one process; exit 0."""
        out = os.path.abspath(self.mktemp()) + ".jsonl"
        code, _, err = yield run_command(reactor, ["run", "-o", out, "-L", "INFO"], cwd=ROOT)
        self.assertEqual(code, 0, err)
        items = read_jsonl(out)
        books = [i for i in items if "price" in i]
        quotes = [i for i in items if "author" in i]
        self.assertEqual(len(books), BOOK_COUNT)
        self.assertEqual(len(quotes), QUOTE_COUNT)
        self.assertEqual(err.count("closed (finished)"), 2)
        self.assertIn("serving the demo site on http://127.0.0.1:", err)

    @defer.inlineCallbacks
    def test_run_from_an_empty_folder(self):
        """From a folder with no project and no spiders/, run crawls the demo site with the
        spiders the package ships, and list names them."""
        folder = os.path.abspath(self.mktemp())
        os.makedirs(folder)
        out = os.path.join(folder, "items.jsonl")
        code, _, err = yield run_command(reactor, ["run", "-O", out, "-L", "INFO"],
                                         cwd=folder)
        self.assertEqual(code, 0, err)
        items = read_jsonl(out)
        self.assertEqual(len([i for i in items if "price" in i]), BOOK_COUNT)
        self.assertEqual(len([i for i in items if "author" in i]), QUOTE_COUNT)
        self.assertEqual(sorted(os.listdir(folder)), ["items.jsonl"])
        code, listed, err = yield run_command(reactor, ["list"], cwd=folder)
        self.assertEqual((code, listed.split()), (0, [
            "tinyscrapy.demo.spiders.books.BooksSpider",
            "tinyscrapy.demo.spiders.quotes.QuotesSpider"]), err)

    @defer.inlineCallbacks
    def test_list_and_version(self):
        """list names the example spiders; version prints the version."""
        code, out, err = yield run_command(reactor, ["list"], cwd=ROOT)
        self.assertEqual(code, 0, err)
        self.assertIn("spiders.books.BooksSpider", out.split())
        self.assertIn("spiders.quotes.QuotesSpider", out.split())
        code, out, _ = yield run_command(reactor, ["version"], cwd=ROOT)
        self.assertEqual((code, out.strip()), (0, f"tinyscrapy {tinyscrapy.__version__}"))


class CrawlCommandTests(unittest.TestCase):
    """C{python -m tinyscrapy crawl URL ...}: no code, same-host links, one item a page."""

    def setUp(self):
        self.one = TestServer("127.0.0.1").start()
        self.two = TestServer("127.0.0.2").start()
        self.addCleanup(self.one.stop)
        self.addCleanup(self.two.stop)

    @defer.inlineCallbacks
    def test_two_hosts_each_page_once_nothing_offhost(self):
        """Two start URLs on two hosts: every page of each once, no cross-host link."""
        one, two = self.one, self.two
        one.add_page("/", links=["/a", "a#frag", two.url("/x"), "mailto:x@y.z",
                                 "http://offsite.invalid/"], title="one home")
        one.add_page("/a", links=["/", "/b?q=1", "/b?q=1#x"], title="one a")
        one.add_page("/b", links=["/a"], title="one b")
        two.add_page("/", links=["/x", one.url("/b")], title="two home")
        two.add_page("/x", links=["/"], title="two x")
        out = os.path.abspath(self.mktemp()) + ".jsonl"
        code, _, err = yield run_command(
            reactor, ["crawl", one.url("/"), two.url("/"), "-O", out,
                      "-s", "ROBOTSTXT_OBEY=false"])
        self.assertEqual(code, 0, err)
        items = read_jsonl(out)
        urls = sorted(i["url"] for i in items)
        self.assertEqual(urls, sorted([one.url("/"), one.url("/a"), one.url("/b?q=1"),
                                       two.url("/"), two.url("/x")]))
        self.assertEqual(dict(one.hits), {"/": 1, "/a": 1, "/b?q=1": 1})
        self.assertEqual(dict(two.hits), {"/": 1, "/x": 1})
        home = next(i for i in items if i["url"] == one.url("/"))
        self.assertEqual((home["status"], home["title"], home["depth"]), (200, "one home", 0))


class DemoCommandTests(unittest.TestCase):
    """C{python -m tinyscrapy demo} serves the site until stopped."""

    @defer.inlineCallbacks
    def test_demo_serves_and_stops(self):
        """demo --port 0 prints its URL, answers, and exits 0 on SIGTERM."""
        import treq
        from twisted.internet import protocol
        from twisted.web.client import HTTPConnectionPool

        class Child(protocol.ProcessProtocol):
            def __init__(self):
                self.url = defer.Deferred()
                self.ended = defer.Deferred()
                self.out = b""

            def outReceived(self, data):
                self.out += data
                match = re.search(rb"(http://127\.0\.0\.1:\d+/)", self.out)
                if match and not self.url.called:
                    self.url.callback(match.group(1).decode())

            def processEnded(self, reason):
                self.ended.callback(reason.value.exitCode)

        import sys

        from .helpers import needs_processes, subprocess_env
        needs_processes("the demo command")
        child = Child()
        transport = reactor.spawnProcess(
            child, sys.executable, [sys.executable, "-m", "tinyscrapy", "demo", "--port", "0"],
            env=subprocess_env(), path=ROOT)
        guard = reactor.callLater(30, transport.signalProcess, "KILL")
        url = yield child.url
        pool = HTTPConnectionPool(reactor, persistent=False)
        response = yield treq.get(url + "books/", pool=pool)
        body = yield response.text()
        self.assertEqual(response.code, 200)
        self.assertIn("product_pod", body)
        transport.signalProcess("TERM")
        code = yield child.ended
        if guard.active():
            guard.cancel()
        self.assertEqual(code, 0)


class BenchCommandTests(unittest.TestCase):
    """C{python -m tinyscrapy bench}: a self-contained speed check."""

    @defer.inlineCallbacks
    def test_bench_crawls_every_page(self):
        """bench --pages 60 crawls all 60 pages, prints pages/s and a balanced ledger."""
        code, out, err = yield run_command(reactor, ["bench", "--pages", "60"], cwd=ROOT)
        self.assertEqual(code, 0, err)
        self.assertRegex(out, r"bench: 60 pages in [\d.]+ s: \d+ pages/s")
        self.assertIn("handled=60", out)
        self.assertIn("missing=0", out)


class ReadmeTests(unittest.TestCase):
    """The README tells a new user the truth."""

    def test_settings_table_is_current(self):
        """The README's settings table is `python -m tinyscrapy settings`, every setting."""
        from tinyscrapy.settings import DEFAULTS, defaults_table
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        self.assertIn(defaults_table(), readme)
        for name in DEFAULTS:
            self.assertIn(f"`{name}`", readme)

    def test_test_command_is_the_ci_command(self):
        """.ci/run runs the test command the README gives."""
        with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
            ci = f.read()
        self.assertIn("python -m twisted.trial", ci)
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            self.assertIn("python -m twisted.trial tests", f.read())

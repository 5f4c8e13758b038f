"""
C{run --jobdir DIR} as a real process: the demo spiders each in C{DIR/<name>/}, paused with
SIGINT and resumed on the demo site's saved port; and a second process on a directory in
use, refused.
"""

import json
import os
import re

from twisted.internet import defer, reactor, task
from twisted.trial import unittest

from tests.helpers import run_and_interrupt, run_command
from tests.servers import Delay
from tinyscrapy.demo import BOOK_COUNT, QUOTE_COUNT

from .helpers import serve

_SERVING = re.compile(r"serving the demo site on http://127\.0\.0\.1:(\d+)")


def _lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.endswith("\n")]


class DemoResumeTests(unittest.TestCase):
    """`run [SPIDER] --jobdir DIR` on the embedded demo site: pause, then resume."""

    timeout = 120

    def setUp(self):
        self.jobdir = os.path.abspath(self.mktemp())
        self.feeds = os.path.abspath(self.mktemp())
        os.makedirs(self.feeds)

    def _run_spiders(self, spiders, run, interrupt_after=None):
        """Run the spiders, slowed down; SIGINT once the books feed has
        C{interrupt_after} items. @return: a Deferred firing with (status, stderr)."""
        feed = os.path.join(self.feeds, f"{run}-%(name)s.jsonl")
        args = ["run", *spiders, "--jobdir", self.jobdir, "-O", feed,
                "-s", "DOWNLOAD_DELAY=0.02", "-s", "RANDOMIZE_DOWNLOAD_DELAY=False",
                "-s", "CONCURRENT_REQUESTS=2"]
        books = feed % {"name": "books"}
        conditions = [] if interrupt_after is None else [
            lambda: len(_lines(books)) >= interrupt_after]
        d = run_and_interrupt(reactor, args, conditions)
        d.addCallback(_status_and_err)
        return d

    def _items(self, run, name):
        return _lines(os.path.join(self.feeds, f"{run}-{name}.jsonl"))

    def _port(self, err):
        ports = _SERVING.findall(err)
        self.assertEqual(len(ports), 1, err)
        return int(ports[0])

    def _assert_every_item_once(self, name, key, count):
        items = self._items("first", name) + self._items("second", name)
        self.assertEqual(len({item[key] for item in items}), count)
        self.assertEqual(len(items), count, f"{name}: an item was scraped twice")

    @defer.inlineCallbacks
    def test_default_spiders_pause_and_resume(self):
        """`run --jobdir DIR`: books and quotes each keep DIR/<name>/; paused, then resumed,
        every book and quote is scraped once."""
        code, err = yield self._run_spiders([], "first", interrupt_after=20)
        self.assertEqual(code, 0, err)
        self.assertLess(len(self._items("first", "books")), BOOK_COUNT)
        for name in ("books", "quotes"):
            self.assertTrue(os.path.isfile(os.path.join(self.jobdir, name, "frontier.sqlite")))
        code, err2 = yield self._run_spiders([], "second")
        self.assertEqual(code, 0, err2)
        self.assertRegex(err2, rf"resuming: [1-9]\d* requests waiting, \d+ seen "
                               rf"\(--jobdir {re.escape(self.jobdir)}/books\)")
        self.assertEqual(self._port(err2), self._port(err))
        self._assert_every_item_once("books", "url", BOOK_COUNT)
        self._assert_every_item_once("quotes", "text", QUOTE_COUNT)

    @defer.inlineCallbacks
    def test_books_resume_on_the_saved_demo_port(self):
        """`run spiders.books.BooksSpider --jobdir DIR`, paused: the resumed run serves the
        demo site on the port saved in DIR/demo_port, and every book comes once."""
        books = ["spiders.books.BooksSpider"]
        code, err = yield self._run_spiders(books, "first", interrupt_after=30)
        self.assertEqual(code, 0, err)
        self.assertIn("requests kept for the next run", err)
        first = self._port(err)
        with open(os.path.join(self.jobdir, "demo_port")) as f:
            self.assertEqual(int(f.read()), first)
        code, err = yield self._run_spiders(books, "second")
        self.assertEqual(code, 0, err)
        self.assertIn("resuming:", err)
        self.assertEqual(self._port(err), first)
        self._assert_every_item_once("books", "url", BOOK_COUNT)

    @defer.inlineCallbacks
    def test_saved_demo_port_taken(self):
        """The saved port is in use: one line naming it, exit 2, nothing crawled."""
        server = serve(self)
        os.makedirs(self.jobdir)
        with open(os.path.join(self.jobdir, "demo_port"), "w") as f:
            f.write(f"{server.port}\n")
        code, err = yield self._run_spiders(["spiders.books.BooksSpider"], "first")
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(f"the demo site must listen on port {server.port} again", err)


class SecondProcessTests(unittest.TestCase):
    """Two processes on one --jobdir: the second is refused, the first is unharmed."""

    timeout = 60

    @defer.inlineCallbacks
    def test_second_process_refused(self):
        """While a crawl runs with DIR, another gets one line naming DIR and the pid, and
        exits 2; the first pauses as usual."""
        server = serve(self)
        links = "".join(f'<a href="/p{i}">p</a>' for i in range(20))
        server.add("/", Delay(0, f"<title>home</title>{links}".encode()))
        for i in range(20):
            server.add(f"/p{i}", Delay(1.0, b"<title>p</title>"))  # a 10 s window
        jobdir = os.path.abspath(self.mktemp())
        args = ["crawl", server.url("/"), "--jobdir", jobdir, "-O",
                os.path.abspath(self.mktemp() + ".jsonl"), "-s", "ROBOTSTXT_OBEY=False",
                "-s", "CONCURRENT_REQUESTS=2"]
        transports = []
        first = run_command(reactor, args, started=transports.append)
        while sum(server.hits.values()) < 2:
            yield task.deferLater(reactor, 0.02, _nothing)
        code, _out, err = yield run_command(reactor, args)
        self.assertEqual(code, 2, err)
        self.assertEqual(err.strip(), f"tinyscrapy: error: another crawl is using --jobdir "
                                      f"{jobdir}/crawl (pid {transports[0].pid})")
        transports[0].signalProcess("INT")
        code, _out, err = yield first
        self.assertEqual(code, 0, err)
        self.assertIn("requests kept for the next run", err)
        self.assertNotIn("ERROR", err)


def _status_and_err(result):
    code, _out, err = result
    return code, err


def _nothing():
    return None

"""
The command line end to end, in child processes (C{python -m tinyscrapy ...}).
"""

import json
import os
import textwrap

from twisted.internet import defer, reactor
from twisted.trial import unittest

from .helpers import run_command, serve

SPIDER_FILE = """
from tinyscrapy import Spider


class PagesSpider(Spider):
    name = "pages"

    def start_requests(self):
        from tinyscrapy import Request
        yield Request(self.start)

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
"""


class CommandTests(unittest.TestCase):
    """C{run} and C{runspider} against a local server, and the exit status 2 paths."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/", links=["/a", "/b"], title="home")
        self.server.add_page("/a", links=["/b"], title="a")
        self.server.add_page("/b", title="b")
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    @defer.inlineCallbacks
    def test_runspider_writes_items(self):
        """runspider FILE -a start=URL -O out.jsonl: one item per page, exit 0."""
        spider = self.write("pages.py", SPIDER_FILE)
        out = os.path.join(self.tmp, "out.jsonl")
        code, _, err = yield run_command(
            reactor, ["runspider", spider, "-a", f"start={self.start}", "-O", out])
        self.assertEqual(code, 0, err)
        with open(out) as f:
            items = [json.loads(line) for line in f]
        self.assertEqual(sorted(i["title"] for i in items), ["a", "b", "home"])

    @defer.inlineCallbacks
    def test_run_two_spiders_in_one_process(self):
        """run A B: both crawlers finish before the reactor stops (one DeferredList)."""
        self.write("myspiders.py", SPIDER_FILE + textwrap.dedent("""
            class OtherSpider(PagesSpider):
                name = "other"
        """))
        out = os.path.join(self.tmp, "out.jsonl")
        code, _, err = yield run_command(
            reactor, ["run", "myspiders.PagesSpider", "myspiders.OtherSpider",
                      "-a", f"start={self.start}", "-o", out], cwd=self.tmp)
        self.assertEqual(code, 0, err)
        with open(out) as f:
            items = [json.loads(line) for line in f]
        self.assertEqual(len(items), 6)
        self.assertIn("closed (finished)", err)
        self.assertEqual(err.count("closed (finished)"), 2)

    @defer.inlineCallbacks
    def test_items_to_stdout_by_default(self):
        """Without -o the items are printed as JSON lines; logs go to stderr."""
        spider = self.write("pages.py", SPIDER_FILE)
        code, out, err = yield run_command(reactor, ["runspider", spider, "-a",
                                                     f"start={self.start}"])
        self.assertEqual(code, 0, err)
        self.assertEqual(len([json.loads(line) for line in out.splitlines()]), 3)

    @defer.inlineCallbacks
    def assertUsageError(self, args, message, cwd=None):
        code, out, err = yield run_command(reactor, args, cwd=cwd or self.tmp)
        self.assertEqual(code, 2, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(message, err)

    def test_unknown_command(self):
        """An unknown command: one line, exit 2."""
        return self.assertUsageError(["fly"], "Unknown command: fly")

    def test_unknown_option(self):
        """An unknown option: one line, exit 2."""
        return self.assertUsageError(["run", "--frobnicate"], "unrecognized arguments")

    def test_spider_does_not_import(self):
        """A spider path that does not import: one line, exit 2."""
        return self.assertUsageError(["run", "nosuch.module.Spider"], "cannot import")

    def test_not_a_spider(self):
        """A dotted path to something that is not a Spider: one line, exit 2."""
        return self.assertUsageError(["run", "os.path.join"], "not a Spider subclass")

    def test_file_without_spider(self):
        """runspider on a file that defines no Spider: one line, exit 2."""
        path = self.write("empty.py", "x = 1\n")
        return self.assertUsageError(["runspider", path], "no Spider subclass")

    def test_file_that_raises(self):
        """runspider on a file that fails to import: one line, exit 2."""
        path = self.write("bad.py", "raise RuntimeError('nope')\n")
        return self.assertUsageError(["runspider", path], "RuntimeError: nope")

    def test_bad_setting_value(self):
        """A word where a number belongs: one line naming the setting, exit 2."""
        spider = self.write("pages.py", SPIDER_FILE)
        return self.assertUsageError(
            ["runspider", spider, "-s", "CONCURRENT_REQUESTS=many"], "CONCURRENT_REQUESTS")

    def test_cache_directory_is_a_file(self):
        """HTTPCACHE_DIR naming a regular file: one line naming the setting, exit 2."""
        spider = self.write("pages.py", SPIDER_FILE)
        path = self.write("afile", "not a directory\n")
        return self.assertUsageError(
            ["runspider", spider, "-s", "HTTPCACHE_ENABLED=true", "-s", f"HTTPCACHE_DIR={path}"],
            "HTTPCACHE_DIR")

    def test_misspelled_rule_callback(self):
        """A CrawlSpider rule naming a method the spider does not have: one line naming
        the rule, the spider and the name, exit 2."""
        spider = self.write("typo.py", """
            from tinyscrapy import CrawlSpider, Rule


            class Typo(CrawlSpider):
                name = "x"
                start_urls = ["http://127.0.0.1:1/"]
                rules = (Rule(callback="parse_itme"),)

                def parse_item(self, response):
                    return None
        """)
        return self.assertUsageError(
            ["runspider", spider],
            "rule 0 of spider 'x': callback 'parse_itme' is not a method of the spider")

    def test_bad_feed_extension(self):
        """An output file whose format cannot be told: one line, exit 2."""
        spider = self.write("pages.py", SPIDER_FILE)
        return self.assertUsageError(["runspider", spider, "-o", "items.xls"], "feed format")

    def test_run_in_an_empty_spiders_folder(self):
        """run with no spider in a spiders/ package that holds none says so, one line."""
        os.makedirs(os.path.join(self.tmp, "spiders"))
        self.write(os.path.join("spiders", "__init__.py"), "")
        return self.assertUsageError(["run"], "no spiders found here to run")

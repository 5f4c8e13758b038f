"""
What a crawl says: Scrapy's DEBUG line per page and per item, a short start, one summary
line per spider at the end, stats without duplicate or malformed keys, off-site drops that
name the origin, and a CSV feed that two spiders cannot silently share.
"""

import logging
import os
import re
import textwrap

from twisted.internet import defer, reactor
from twisted.trial import unittest

from .helpers import ROOT, LinkSpider, crawl, run_command, serve
from .logs import capture_logs
from .servers import TestServer


class Marker:
    """An item pipeline of the user's own (named by its dotted path in the start lines)."""

    def process_item(self, item, spider):
        return item


class PageLogTests(unittest.TestCase):
    """The DEBUG lines of each response and item, and their absence above DEBUG."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/", links=["/a"])
        self.a = self.server.add_page("/a")

    @defer.inlineCallbacks
    def test_crawled_and_scraped_lines_at_debug(self):
        """`Crawled (200) <GET url> (referer: ...)` and `Scraped from <200 url>` + item."""
        logs = capture_logs(self, level=logging.DEBUG)
        yield crawl(LinkSpider, start_urls=[self.start])
        messages = logs.messages()
        self.assertIn(f"Crawled (200) <GET {self.start}> (referer: None)", messages)
        self.assertIn(f"Crawled (200) <GET {self.a}> (referer: {self.start})", messages)
        self.assertIn(f"Scraped from <200 {self.a}>\n{{'url': '{self.a}'}}", messages)

    @defer.inlineCallbacks
    def test_no_page_lines_at_info(self):
        """At INFO the per-page lines are not even built: the scraper asked once."""
        logs = capture_logs(self, level=logging.INFO)
        crawler = yield crawl(LinkSpider, start_urls=[self.start])
        self.assertFalse(crawler.engine.scraper._log_pages)
        self.assertFalse([m for m in logs.messages() if m.startswith(("Crawled (",
                                                                     "Scraped from"))])


class StartAndEndTests(unittest.TestCase):
    """The start-up lines, the summary line and the stats' keys."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/", links=["/a", "/missing"])
        self.server.add_page("/a")
        self.server.add_page("/missing", status=404)

    @defer.inlineCallbacks
    def test_start_lines_are_few_and_short(self):
        """Three short lines name the components: built-ins by class, a user's by path."""
        logs = capture_logs(self, "tinyscrapy.crawler", level=logging.INFO)
        yield crawl(LinkSpider, {"ITEM_PIPELINES": {f"{__name__}.Marker": 100}},
                    start_urls=[self.start])
        lines = [m for m in logs.messages(logging.INFO) if "middlewares" in m
                 or "extensions" in m]
        self.assertEqual(len(lines), 3, lines)
        self.assertTrue(all(len(line) < 160 for line in lines), lines)
        self.assertIn("Redirect, Cookies", lines[0])
        self.assertIn(f"item pipelines: {__name__}.Marker", lines[1])

    @defer.inlineCallbacks
    def test_summary_line_before_the_stats(self):
        """One human line: pages, items, errors, time, rate, reason, where items went."""
        logs = capture_logs(self, level=logging.INFO)
        feed = os.path.abspath(self.mktemp()) + ".jsonl"
        yield crawl(LinkSpider, {"FEEDS": {feed: {}}}, start_urls=[self.start])
        messages = logs.messages(logging.INFO)
        summary = [i for i, m in enumerate(messages) if re.match(r"links: \d+ pages", m)]
        self.assertEqual(len(summary), 1, messages)
        self.assertRegex(messages[summary[0]],  # the 404 is a page, and a failed request
                         r"^links: 3 pages, 2 items, 1 error in \d+\.\d+ s "
                         r"\(\d+ pages/s\); finished; items in " + re.escape(feed) + "$")
        self.assertTrue(messages[summary[0] + 1].startswith("Dumping stats for links"))

    @defer.inlineCallbacks
    def test_stats_without_duplicates_or_double_slashes(self):
        """Each count once, under Scrapy's name; no key joined with a double slash."""
        feed = os.path.abspath(self.mktemp()) + ".jsonl"
        crawler = yield crawl(LinkSpider, {"FEEDS": {feed: {}}}, start_urls=[self.start])
        stats = crawler.stats.get_stats()
        for key in ("downloader/requests", "downloader/responses", "downloader/bytes",
                    "downloader/decoded_bytes", "downloader/response_bytes_decoded",
                    "pipelines/scraped"):
            self.assertNotIn(key, stats)
        self.assertGreater(stats["downloader/response_bytes"], 0)
        self.assertEqual(stats["downloader/response_count"], 3)
        self.assertEqual(stats["feedexport/items_count"], 2)
        self.assertEqual([key for key in stats if "//" in key], [])


class OffsiteLogTests(unittest.TestCase):
    """An off-site drop names the origin that differs, port included, at DEBUG (as
    Scrapy's)."""

    @defer.inlineCallbacks
    def test_other_port_is_named(self):
        """Crawling 127.0.0.1:A, a link to 127.0.0.1:B is filtered with B's origin."""
        one, two = TestServer().start(), TestServer().start()
        self.addCleanup(one.stop)
        self.addCleanup(two.stop)
        start = one.add_page("/", links=[two.url("/x")])
        logs = capture_logs(self, "tinyscrapy.downloadermiddlewares.offsite",
                            level=logging.DEBUG)
        yield crawl(LinkSpider, start_urls=[start],
                    allowed_domains=[f"127.0.0.1:{one.port}"])
        self.assertEqual(logs.messages(logging.DEBUG), [
            f"Filtered offsite request to 'http://127.0.0.1:{two.port}' (allowed_domains: "
            f"127.0.0.1:{one.port}): <GET {two.url('/x')}>"])
        self.assertEqual(two.hits, {})


class SpiderLogLevelTests(unittest.TestCase):
    """LOG_LEVEL in a spider's custom_settings quiets the start-up lines too."""

    @defer.inlineCallbacks
    def test_custom_settings_log_level(self):
        """custom_settings LOG_LEVEL=WARNING: no start, summary or stats lines at all."""
        server = serve(self)
        start = server.add_page("/")
        tmp = os.path.abspath(self.mktemp())
        os.makedirs(tmp)
        path = os.path.join(tmp, "quiet.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(f"""
                from tinyscrapy import Spider


                class Quiet(Spider):
                    name = "quiet"
                    start_urls = [{start!r}]
                    custom_settings = {{"LOG_LEVEL": "WARNING"}}

                    def parse(self, response):
                        yield {{"url": response.url}}
                """))
        code, out, err = yield run_command(reactor, ["runspider", path, "-O",
                                                     os.path.join(tmp, "out.jsonl")])
        self.assertEqual((code, err), (0, ""))


class SharedCsvTests(unittest.TestCase):
    """`run -o items.csv` with spiders of different fields is refused before the start."""

    @defer.inlineCallbacks
    def test_two_spiders_one_csv(self):
        """One line that says why and what to do; exit 2; no file written."""
        out = os.path.abspath(self.mktemp()) + ".csv"
        code, _, err = yield run_command(reactor, ["run", "-O", out], cwd=ROOT)
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("several spiders cannot share one CSV file", err)
        self.assertIn("%(name)s", err)
        self.assertFalse(os.path.exists(out))

    @defer.inlineCallbacks
    def test_one_csv_per_spider(self):
        """With %(name)s in the path each spider writes its own CSV, with its columns."""
        base = os.path.abspath(self.mktemp())
        code, _, err = yield run_command(reactor, ["run", "-O", base + "-%(name)s.csv",
                                                   "-L", "WARNING"], cwd=ROOT)
        self.assertEqual(code, 0, err)
        with open(base + "-quotes.csv", encoding="utf-8") as f:
            rows = f.read().splitlines()
        self.assertIn("author", rows[0])
        self.assertEqual(len(rows), 101)  # the header and the 100 quotes
        self.assertFalse([row for row in rows if not row.strip(",")])

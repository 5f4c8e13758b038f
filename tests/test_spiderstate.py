"""
C{spider.state} in the job directory: kept across a pause and a resume, written by the
job directory's codec (never a pickle), 0600; what the codec cannot hold is refused with
one line naming the key; a file it did not write stops the start.
"""

import json
import logging
import os
import pickle
import stat
from datetime import datetime, timezone

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Spider
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import NotConfigured, UsageError
from tinyscrapy.extensions.spiderstate import SpiderState
from tinyscrapy.settings import Settings
from tinyscrapy.utils.test import get_crawler

from .helpers import crawl, serve
from .logs import capture_logs

PAGES = 12


class CountingSpider(Spider):
    """Counts its pages in C{self.state}; with C{pause_after}, stops the crawl (as Ctrl-C
    does) once it has seen that many in this run."""

    name = "counting"
    pause_after = 0

    def parse(self, response):
        self.state["pages"] = self.state.get("pages", 0) + 1
        self.state.setdefault("urls", []).append(response.url)
        self.state["last_seen"] = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
        self.state["seen_here"] = self.state.get("seen_here", 0) + 1
        if self.pause_after and self.state["seen_here"] == self.pause_after:
            self.crawler.stop()
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)

    def closed(self, reason):
        self.state.pop("seen_here", None)


class SpiderStateCrawlTests(unittest.TestCase):
    """Real crawls with a job directory."""

    def setUp(self):
        self.server = serve(self)
        links = [f"/p{i}" for i in range(PAGES)]
        self.start = self.server.add_page("/", links=links)
        for path in links:
            self.server.add_page(path)
        self.jobdir = os.path.abspath(self.mktemp())
        self.settings = {"JOBDIR": self.jobdir, "CONCURRENT_REQUESTS": 1}

    def state_file(self):
        return os.path.join(self.jobdir, "counting", "spider.state")

    @defer.inlineCallbacks
    def test_state_across_a_pause_and_a_resume(self):
        """Paused after 4 pages, resumed: the state holds the pages of both runs."""
        first = yield crawl(CountingSpider, self.settings, start_urls=[self.start],
                            pause_after=4)
        self.assertEqual(first.stats.get_value("finish_reason"), "shutdown")
        paused = first.spider.state["pages"]
        self.assertGreaterEqual(paused, 4)
        self.assertLess(paused, PAGES + 1)
        second = yield crawl(CountingSpider, self.settings, start_urls=[self.start])
        self.assertEqual(second.stats.get_value("finish_reason"), "finished")
        state = second.spider.state
        # the start URL (dont_filter, as Scrapy's) is fetched by each run; every page once
        self.assertEqual(state["pages"], PAGES + 2)
        others = [url for url in state["urls"] if url != self.start]
        self.assertEqual(sorted(set(others)), sorted(others))
        self.assertEqual(len(others), PAGES)
        self.assertEqual(state["last_seen"], datetime(2026, 1, 2, 3, 4, 5,
                                                      tzinfo=timezone.utc))

    @defer.inlineCallbacks
    def test_file_is_private_json_not_a_pickle(self):
        """The file is 0600, JSON of plain data, no pickle."""
        yield crawl(CountingSpider, self.settings, start_urls=[self.start])
        path = self.state_file()
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        with open(path, "rb") as f:
            raw = f.read()
        self.assertNotEqual(raw[:1], b"\x80")
        document = json.loads(raw)
        self.assertEqual(document["state"]["pages"], PAGES + 1)
        self.assertEqual(document["state"]["last_seen"], {"$dt": "2026-01-02T03:04:05+00:00"})
        self.assertFalse(os.path.exists(path + ".new"))

    @defer.inlineCallbacks
    def test_value_the_codec_cannot_hold_is_refused_by_key(self):
        """A value that is not plain data: one ERROR naming its key; the rest is kept."""

        class Unsaveable(CountingSpider):
            def parse(self, response):
                self.state["handle"] = object()
                return super().parse(response)

        logs = capture_logs(self)
        crawler = yield crawl(Unsaveable, self.settings, start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        errors = logs.messages(logging.ERROR)
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("spider.state['handle'] cannot be saved", errors[0])
        with open(self.state_file(), "rb") as f:
            saved = json.loads(f.read())["state"]
        self.assertNotIn("handle", saved)
        self.assertEqual(saved["pages"], PAGES + 1)

    def test_pickle_stops_the_start(self):
        """Scrapy's pickled spider.state in the directory: refused with one line, and
        nothing in it is loaded."""
        os.makedirs(os.path.dirname(self.state_file()))
        with open(self.state_file(), "wb") as f:
            pickle.dump({"pages": 3}, f, protocol=4)
        crawler = Crawler(CountingSpider, Settings(self.settings))
        d = crawler.crawl(start_urls=[self.start])
        failure = self.failureResultOf(d, UsageError)
        self.assertIn("is a pickle", str(failure.value))
        self.assertEqual(self.server.hits, {})

    def test_damaged_file_stops_the_start(self):
        """A file this code did not write (damaged, or crafted tags): refused."""
        for content in (b"{not json", b'{"format": "other", "state": {}}',
                        b'{"format": "tinyscrapy spider state 1", "state": {"$eval": 1}}'):
            self.jobdir = self.settings["JOBDIR"] = os.path.abspath(self.mktemp())
            os.makedirs(os.path.dirname(self.state_file()))
            with open(self.state_file(), "wb") as f:
                f.write(content)
            crawler = Crawler(CountingSpider, Settings(self.settings))
            failure = self.failureResultOf(crawler.crawl(start_urls=[self.start]),
                                           UsageError)
            self.assertIn("cannot be loaded", str(failure.value))

    @defer.inlineCallbacks
    def test_state_that_cannot_be_written_is_a_jobdir_error(self):
        """The state cannot be written (a directory took its place): one ERROR line, the
        finish reason jobdir_error."""
        path = self.state_file()

        class Blocked(CountingSpider):
            def parse(self, response):
                os.makedirs(os.path.join(path, "in-the-way"), exist_ok=True)
                return super().parse(response)

        logs = capture_logs(self)
        crawler = yield crawl(Blocked, self.settings, start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("finish_reason"), "jobdir_error")
        errors = logs.messages(logging.ERROR)
        self.assertEqual(len([m for m in errors if "cannot save spider.state" in m]), 1,
                         errors)
        self.assertFalse(os.path.exists(path + ".new"))


class SpiderStateUnitTests(unittest.TestCase):
    """The extension on its own."""

    def test_store_and_load(self):
        """A state saved at close is the next spider's at open."""
        jobdir = self.mktemp()
        os.makedirs(jobdir)
        spider = Spider(name="default")
        ss = SpiderState(jobdir)
        ss.spider_opened(spider)
        spider.state.update(one=1, raw=b"\x00\xff", pair=(1, 2))
        ss.spider_closed(spider)
        again = Spider(name="default")
        SpiderState(jobdir).spider_opened(again)
        self.assertEqual(again.state, {"one": 1, "raw": b"\x00\xff", "pair": (1, 2)})

    def test_without_jobdir(self):
        """No job directory: a fresh {} and nothing saved; no extension in a crawl."""
        spider = Spider(name="default")
        SpiderState().spider_opened(spider)
        self.assertEqual(spider.state, {})
        self.assertRaises(NotConfigured, SpiderState.from_crawler, get_crawler(Spider))

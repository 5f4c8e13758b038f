"""
Ctrl-C: the first SIGINT closes the crawl gracefully (downloads in flight finish and are
scraped, nothing new starts, finish reason "shutdown", exit 0); a second stops at once.
Run as a real process against a twisted.web server in the test.
"""

import json
import os

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tests.helpers import run_and_interrupt, run_command
from tests.servers import Delay, Page

from .helpers import serve

PAGES = 40


class GracefulShutdownTests(unittest.TestCase):
    timeout = 60

    def setUp(self):
        self.server = serve(self)
        links = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(PAGES))
        self.start_url = self.server.add("/", Page(f"<title>home</title>{links}"))
        for i in range(PAGES):
            self.server.add(f"/p{i}", Delay(0.2, b"<title>slow</title>"))
        self.feed = os.path.abspath(self.mktemp() + ".jsonl")
        self.stats = os.path.abspath(self.mktemp() + ".json")

    def _crawl(self, signals_after_hits):
        """Run `crawl`, send SIGINT once the server has seen the first count in
        C{signals_after_hits}, and, when it has two, a second SIGINT once the child has
        said it got the first; @return: the command's Deferred."""
        args = ["crawl", self.start_url, "-O", self.feed, "-s", "CONCURRENT_REQUESTS=2",
                "-s", "RANDOMIZE_DOWNLOAD_DELAY=False", "-s", f"STATS_FILE={self.stats}",
                "-s", "ROBOTSTXT_OBEY=False"]
        hits = self.server.hits
        conditions = [lambda: sum(hits.values()) >= signals_after_hits[0]]
        if len(signals_after_hits) > 1:  # a second signal once the child saw the first
            conditions.append("received SIGINT: closing gracefully")
        return run_and_interrupt(reactor, args, conditions)

    @defer.inlineCallbacks
    def test_first_interrupt_closes_gracefully(self):
        code, _out, err = yield self._crawl([4])
        self.assertEqual(code, 0, err)
        self.assertIn("received SIGINT: closing gracefully", err)
        with open(self.stats) as f:
            stats = json.load(f)
        self.assertEqual(stats["finish_reason"], "shutdown")
        hits = sum(self.server.hits.values())
        self.assertLess(hits, PAGES // 2, "the crawl went on after Ctrl-C")
        with open(self.feed) as f:
            items = [json.loads(line) for line in f]
        # every page fetched was scraped: the ones in flight at Ctrl-C finished
        self.assertEqual(len(items), hits)

    @defer.inlineCallbacks
    def test_second_interrupt_stops_at_once(self):
        code, _out, err = yield self._crawl([4, 4])
        self.assertIn("received SIGINT again: stopping at once", err)
        self.assertEqual(code, 1, err)


BROKEN_SPIDER = '''
from tinyscrapy import Spider


class BrokenSpider(Spider):
    name = "broken"

    def __init__(self, *args, **kwargs):
        raise RuntimeError("this spider cannot be made")
'''

SLOW_OPENING_SPIDER = '''
from twisted.internet import reactor
from twisted.internet.task import deferLater

from tinyscrapy import Spider


class SlowOpen:
    """A pipeline whose open_spider takes {seconds} s; it leaves a mark when it starts."""

    def open_spider(self, spider):
        open({mark!r}, "w").close()
        return deferLater(reactor, {seconds}, lambda: None)

    def process_item(self, item, spider):
        return item


class SlowOpeningSpider(Spider):
    name = "slowopen"
    start_urls = [{url!r}]
    custom_settings = {{"ITEM_PIPELINES": {{SlowOpen: 100}},
                        "STATS_FILE": {stats!r}}}

    def parse(self, response):
        yield {{"url": response.url}}
'''


class StartingAndOpeningTests(unittest.TestCase):
    """The moments before the loop runs: a crawl that fails at once, a Ctrl-C while a
    crawl is still opening."""

    timeout = 60

    def _write(self, text):
        path = os.path.abspath(self.mktemp() + ".py")
        with open(path, "w") as f:
            f.write(text)
        return path

    @defer.inlineCallbacks
    def test_crawl_that_fails_before_the_reactor_runs_exits(self):
        """Without a guard the DeferredList fires before reactor.run(), and the reactor
        then runs for ever."""
        path = self._write(BROKEN_SPIDER)
        code, _out, err = yield run_command(reactor, ["runspider", path], timeout=30)
        self.assertEqual(code, 1, err)
        self.assertIn("crawl of BrokenSpider failed", err)
        self.assertIn("this spider cannot be made", err)

    @defer.inlineCallbacks
    def test_interrupt_while_opening_closes_once_open(self):
        server = serve(self)
        url = server.add("/", Page("<title>home</title>"))
        mark = os.path.abspath(self.mktemp())
        stats = os.path.abspath(self.mktemp() + ".json")
        path = self._write(SLOW_OPENING_SPIDER.format(seconds=2, mark=mark, url=url,
                                                      stats=stats))
        # Ctrl-C once the pipeline is opening
        code, _out, err = yield run_and_interrupt(reactor, ["runspider", path],
                                                  [lambda: os.path.exists(mark)])
        self.assertEqual(code, 0, err)
        self.assertIn("received SIGINT: closing gracefully", err)
        with open(stats) as f:
            self.assertEqual(json.load(f)["finish_reason"], "shutdown")
        self.assertEqual(sum(server.hits.values()), 0, "it crawled after Ctrl-C")


ERROR_REASON_SPIDER = '''
from tinyscrapy import Spider


class GivesUp(Spider):
    name = "givesup"
    start_urls = [{url!r}]

    def parse(self, response):
        self.crawler.stop("storage_error")
        yield {{"url": response.url}}
'''


class ErrorReasonTests(unittest.TestCase):
    timeout = 30

    @defer.inlineCallbacks
    def test_finish_reason_ending_in_error_exits_1(self):
        server = serve(self)
        url = server.add("/", Page("<title>home</title>"))
        path = os.path.abspath(self.mktemp() + ".py")
        with open(path, "w") as f:
            f.write(ERROR_REASON_SPIDER.format(url=url))
        code, _out, err = yield run_command(reactor, ["runspider", path])
        self.assertEqual(code, 1, err)
        self.assertIn("storage_error", err)

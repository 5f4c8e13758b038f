"""
Ctrl-C: the first SIGINT closes the crawl gracefully (downloads in flight finish and are
scraped, nothing new starts, finish reason "shutdown", exit 0); a second stops at once.
Run as a real process against a twisted.web server in the test.
"""

import json
import os

from twisted.internet import defer, reactor, task
from twisted.trial import unittest

from tests.helpers import run_command
from tests.servers import Delay, Page, TestServer

PAGES = 40


class GracefulShutdownTests(unittest.TestCase):
    timeout = 60

    def setUp(self):
        self.server = TestServer().start()
        self.addCleanup(self.server.stop)
        links = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(PAGES))
        self.start_url = self.server.add("/", Page(f"<title>home</title>{links}"))
        for i in range(PAGES):
            self.server.add(f"/p{i}", Delay(0.2, b"<title>slow</title>"))
        self.feed = os.path.abspath(self.mktemp() + ".jsonl")
        self.stats = os.path.abspath(self.mktemp() + ".json")

    def _crawl(self, signals_after_hits):
        """Run `crawl`, send SIGINT once the server has seen each count in
        C{signals_after_hits}; @return: the command's Deferred."""
        transports = []
        args = ["crawl", self.start_url, "-O", self.feed, "-s", "CONCURRENT_REQUESTS=2",
                "-s", "RANDOMIZE_DOWNLOAD_DELAY=False", "-s", f"STATS_FILE={self.stats}",
                "-s", "ROBOTSTXT_OBEY=False"]
        d = run_command(reactor, args, started=transports.append)
        pending = list(signals_after_hits)

        def poll():
            if pending and sum(self.server.hits.values()) >= pending[0]:
                pending.pop(0)
                transports[0].signalProcess("INT")
            if not pending:
                loop.stop()
        loop = task.LoopingCall(poll)
        loop.start(0.02)
        d.addBoth(lambda result: (loop.running and loop.stop(), result)[1])
        return d

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

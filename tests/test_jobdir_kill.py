"""
C{--jobdir} under C{kill -9}: crawls killed at seeded moments (the first page, early,
later, and during a resume), run again with the same directory until one finishes. Every
page of the site is in the feeds (nothing lost), no line is torn, and the pages scraped
twice are at most the requests in flight at each kill.
"""

import json
import os
import random

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tests.helpers import run_command
from tests.servers import Delay

from .helpers import serve

HALF = 80  # the home page links 80: beyond the head of 64 a host, some wait on disk only
IN_FLIGHT = 4  # CONCURRENT_REQUESTS


def _kill_when(condition, transport_box):
    """Poll C{condition}; send SIGKILL to the process in C{transport_box} once it holds.
    @return: the LoopingCall (stopped by the caller once the process ended)."""
    from twisted.internet import task

    def poll():
        if transport_box and condition():
            transport_box[0].signalProcess("KILL")
            loop.stop()

    loop = task.LoopingCall(poll)
    loop.clock = reactor
    loop.start(0.005)
    return loop


class KillTests(unittest.TestCase):
    timeout = 120

    def setUp(self):
        self.server = serve(self)
        home = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(HALF))
        self.server.add("/", Delay(0, f"<title>home</title>{home}".encode()))
        for i in range(2 * HALF):
            child = f'<a href="/p{i + HALF}">next</a>' if i < HALF else ""
            self.server.add(f"/p{i}", Delay(0.01, f"<title>p{i}</title>{child}".encode()))
        self.every = {self.server.url("/")} | {self.server.url(f"/p{i}")
                                                for i in range(2 * HALF)}
        self.jobdir = os.path.abspath(self.mktemp())

    def _hits(self):
        return sum(self.server.hits.values())

    @defer.inlineCallbacks
    def _crawl(self, feed, kill_after=None):
        """One `crawl --jobdir` run; killed with -9 after C{kill_after} more hits.
        @return: a Deferred firing with (exit status, stderr)."""
        args = ["crawl", self.server.url("/"), "--jobdir", self.jobdir, "-O", feed,
                "-s", f"CONCURRENT_REQUESTS={IN_FLIGHT}", "-s", "ROBOTSTXT_OBEY=False",
                "-L", "WARNING"]
        box, loop = [], None
        if kill_after is not None:
            start = self._hits()
            loop = _kill_when(lambda: self._hits() - start >= kill_after, box)
        try:
            code, _out, err = yield run_command(reactor, args, started=box.append)
        finally:
            if loop is not None and loop.running:
                loop.stop()
        return code, err

    @staticmethod
    def _urls(feed):
        if not os.path.exists(feed):
            return []
        with open(feed, "rb") as f:
            data = f.read()
        assert not data or data.endswith(b"\n"), f"a torn last line: {data[-80:]!r}"
        return [json.loads(line)["url"] for line in data.splitlines()]

    @defer.inlineCallbacks
    def test_seeded_kills_lose_nothing_and_repeat_only_in_flight(self):
        """Killed at the first page, then at seeded moments, some during a resume: 0 lost,
        duplicates at most the requests in flight at each kill."""
        rng = random.Random(1717)
        kills = [1] + [rng.randint(10, 90) for _ in range(4)]
        scraped, killed = [], 0
        for n in range(len(kills) + 3):  # bounded: the kills, then runs to the end
            feed = os.path.abspath(self.mktemp() + ".jsonl")
            kill_after = kills[n] if n < len(kills) else None
            code, err = yield self._crawl(feed, kill_after)
            scraped.extend(self._urls(feed))
            if code == 0:
                break
            self.assertNotEqual(code, 2, err)
            killed += 1
        else:
            self.fail("the crawl never finished")
        self.assertGreaterEqual(killed, 3)
        self.assertEqual(set(scraped), self.every, "a page was lost")
        duplicates = len(scraped) - len(set(scraped))
        self.assertLessEqual(duplicates, IN_FLIGHT * killed,
                             f"{duplicates} duplicates over {killed} kills")

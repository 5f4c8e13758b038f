"""
C{python -m tinyscrapy crawl URL --scheduler redis://...} in real processes: which runs
share a crawl, what a wrong password or db index says, what the logs never show, and a
Redis restarted mid-crawl. Each test runs its own redis-server on a free 127.0.0.1 port.
"""

import json
import os
import time

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy.commands.crawl import SiteCrawler

from .helpers import run_command, serve
from .redisserver import NO_REDIS, RedisServer
from .servers import Delay
from .test_redis_frontier import START_URL

PASSWORD = "hunter2-secret"


def add_site(server, pages, delay=0.0):
    """C{pages} pages on C{server}, each linking to the next and home. @return: the
    start URL."""
    others = [f"/p{i}" for i in range(1, pages)]
    start = server.add_page("/", links=others)
    for i, path in enumerate(others):
        body = (f'<title>{path}</title><a href="{others[(i + 1) % len(others)]}">n</a>'
                f'<a href="/">home</a>').encode()
        server.add(path, Delay(delay, body))
    return start


def crawl(url, redis_url, *extra, started=None, cwd=None):
    args = ["crawl", url, "--scheduler", redis_url, "-s", "ROBOTSTXT_OBEY=False",
            "-s", "SCHEDULER_REDIS_POLL_INTERVAL=0.05", "-s", "CONCURRENT_REQUESTS=4", *extra]
    kwargs = {"cwd": cwd} if cwd else {}
    return run_command(reactor, args, started=started, **kwargs)


def read_json(path):
    with open(path) as f:
        return json.load(f)


class CrawlKeyTests(unittest.TestCase):
    """Which crawl runs share a crawl."""

    skip = NO_REDIS
    timeout = 60

    def test_key_from_sorted_start_urls(self):
        """The same start URLs in any order give one key; others another."""
        def key(*urls):
            return SiteCrawler(start_urls=list(urls)).frontier_key()
        self.assertEqual(key("http://a.test/", "http://b.test/"),
                         key("http://b.test/", "http://a.test/"))
        self.assertNotEqual(key("http://a.test/"), key("http://b.test/"))
        self.assertRegex(key("http://a.test/"), r"^tinyscrapy:crawl:[0-9a-f]{12}:$")

    @defer.inlineCallbacks
    def test_crawls_of_two_sites_on_one_redis_stay_apart(self):
        """Two crawl runs of different sites at once on one Redis each fetch their whole
        site (they used to merge, and drop each other's links as offsite)."""
        redis = RedisServer().start()
        self.addCleanup(redis.stop)
        servers, starts, feeds = [], [], []
        for _ in range(2):
            server = serve(self)
            servers.append(server)
            starts.append(add_site(server, 20, delay=0.02))
            feeds.append(os.path.abspath(self.mktemp() + ".jsonl"))
        results = yield defer.gatherResults([
            crawl(starts[i], redis.url, "-O", feeds[i], "-L", "WARNING") for i in range(2)])
        for (code, _out, err), server, feed in zip(results, servers, feeds, strict=True):
            self.assertEqual(code, 0, err)
            self.assertEqual(len(server.hits), 20, err)
            with open(feed) as f:
                self.assertEqual(len(f.readlines()), 20)
        markers = redis.call("KEYS", "*")  # the two crawls' end markers, which expire
        self.assertEqual(len(markers), 2)
        self.assertTrue(all(key.endswith(b":epoch") for key in markers), markers)


class ConnectErrorTests(unittest.TestCase):
    """A Redis that refuses us: one line, exit status 2, at once, no password shown."""

    skip = NO_REDIS
    timeout = 30

    def setUp(self):
        self.redis = RedisServer("--requirepass", PASSWORD).start()
        self.addCleanup(self.redis.stop)

    @defer.inlineCallbacks
    def refused(self, url, expected):
        started = time.monotonic()
        code, _out, err = yield crawl(START_URL, url, "-L", "WARNING",
                                      "-s", "SCHEDULER_REDIS_TIMEOUT=8")
        self.assertEqual(code, 2, err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertTrue(lines[0].startswith("tinyscrapy: error: cannot connect to "), err)
        self.assertIn(expected, lines[0])
        self.assertLess(time.monotonic() - started, 6)  # not the whole timeout
        return lines[0]

    @defer.inlineCallbacks
    def test_wrong_password(self):
        line = yield self.refused(f"redis://:wrong-{PASSWORD}@127.0.0.1:{self.redis.port}/0",
                                  "WRONGPASS")
        self.assertIn(f"redis://:***@127.0.0.1:{self.redis.port}/0", line)
        self.assertNotIn(PASSWORD, line)

    @defer.inlineCallbacks
    def test_missing_password(self):
        yield self.refused(self.redis.url, "NOAUTH")

    @defer.inlineCallbacks
    def test_bad_db_index(self):
        yield self.refused(f"redis://:{PASSWORD}@127.0.0.1:{self.redis.port}/99",
                           "DB index is out of range")

    @defer.inlineCallbacks
    def test_not_a_redis_server(self):
        """An HTTP server at the URL: a usage error, not a hang or a traceback."""
        server = serve(self)
        code, _out, err = yield crawl(START_URL, f"redis://127.0.0.1:{server.port}/0",
                                      "-L", "WARNING", "-s", "SCHEDULER_REDIS_TIMEOUT=3")
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("cannot connect to", err)

    @defer.inlineCallbacks
    def test_password_never_logged(self):
        """A crawl with the right password logs the URL redacted (INFO and up)."""
        server = serve(self)
        start = add_site(server, 3)
        url = f"redis://:{PASSWORD}@127.0.0.1:{self.redis.port}/0"
        code, out, err = yield crawl(start, url, "-L", "INFO",
                                     "-O", os.path.abspath(self.mktemp() + ".jsonl"))
        self.assertEqual(code, 0, err)
        self.assertIn(f"redis://:***@127.0.0.1:{self.redis.port}/0", err)
        joined = [line for line in err.splitlines() if "shared frontier" in line]
        self.assertTrue(joined, err)
        for line in joined:
            self.assertNotIn(PASSWORD, line)

    @defer.inlineCallbacks
    def test_without_txredisapi(self):
        """Without the client library: one line naming the extra to install."""
        cwd = os.path.abspath(self.mktemp())
        os.makedirs(cwd)
        with open(os.path.join(cwd, "txredisapi.py"), "w") as f:  # shadows the real one
            f.write("raise ModuleNotFoundError(\"No module named 'txredisapi'\", "
                    "name='txredisapi')\n")
        for extra in ((), ("--workers", "2")):  # with workers: said once, by the parent
            code, _out, err = yield crawl(START_URL, self.redis.url, "-L", "WARNING", *extra,
                                          cwd=cwd)
            self.assertEqual(code, 2, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn("pip install 'tinyscrapy[redis]'", err)

"""
C{--workers N}: one crawl in N worker processes sharing the parent's frontier. Each test
runs the command line against a twisted.web server in this process and judges at the
server (what arrived, when, how many at once) and in the feed and stats the parent wrote.
"""

import json
import os
import re
import signal
from itertools import pairwise

from twisted.internet import defer, reactor, task
from twisted.trial import unittest

from .helpers import (
    Lateness,
    needs_processes,
    run_and_interrupt,
    run_command,
    run_python,
    serve,
)
from .redisserver import NO_REDIS, RedisServer
from .servers import Delay

PAGES = 60  # the home page and its children: /p0 ... /p59


def add_tree(server, pages=PAGES, delay=0.0):
    """A home page linking to the first half of the pages, each of which links to one of
    the second half: every page is reached, many links twice (/p0 is on every page).
    @return: the set of every page's URL."""
    half = pages // 2
    home = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(half))
    server.add("/", Delay(delay, f"<title>home</title>{home}".encode()))
    for i in range(pages):
        links = '<a href="/">home</a><a href="/p0">p0</a>'
        if i < half:
            links += f'<a href="/p{i + half}">next</a>'
        server.add(f"/p{i}", Delay(delay, f"<title>p{i}</title>{links}".encode()))
    return {server.url("/")} | {server.url(f"/p{i}") for i in range(pages)}


def feed_urls(path):
    """The C{url} of each item of a JSON-lines feed, in order (none when it is missing)."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line)["url"] for line in f if line.strip()]


def worker_pids(err):
    """@return: worker number -> pid, as the parent logged them ("worker 2 started (pid N)")."""
    return {int(n): int(pid) for n, pid in re.findall(r"worker (\d+) started \(pid (\d+)\)", err)}


class WorkersTests(unittest.TestCase):
    """A crawl with two worker processes."""

    timeout = 120

    def setUp(self):
        needs_processes("worker processes")
        self.server = serve(self)
        self.feed = os.path.abspath(self.mktemp() + ".jsonl")
        self.stats_file = os.path.abspath(self.mktemp() + ".json")

    def crawl(self, *extra, **kwargs):
        """C{crawl URL --workers 2} with this test's feed and stats file."""
        return run_command(reactor, ["crawl", self.server.url("/"), "--workers", "2",
                                     "-s", "ROBOTSTXT_OBEY=False", "-O", self.feed,
                                     "-s", f"STATS_FILE={self.stats_file}", *extra],
                           **kwargs)

    def stats(self):
        with open(self.stats_file) as f:
            return json.load(f)

    def check_complete(self, every, code, err):
        self.assertEqual(code, 0, err)
        self.assertNotIn("Traceback", err)
        urls = feed_urls(self.feed)
        self.assertEqual(sorted(urls), sorted(every))  # each page once, none missing
        stats = self.stats()
        self.assertEqual(stats["workers/count"], 2)
        self.assertEqual(stats["item_scraped_count"], len(every))
        self.assertEqual(stats["ledger/handled"], len(every))
        self.assertEqual(stats["ledger/missing"], 0, err)
        return stats

    @defer.inlineCallbacks
    def test_every_page_fetched_once(self):
        """Two workers fetch every page of the site exactly once; the parent's feed has one
        item per page; the stats add up over both workers."""
        every = add_tree(self.server)
        code, _out, err = yield self.crawl("-s", "CONCURRENT_REQUESTS=8")
        stats = self.check_complete(every, code, err)
        paths = {path for path in self.server.hits}
        self.assertEqual(len(paths), len(every))
        self.assertEqual(set(self.server.hits.values()), {1})
        self.assertEqual(stats["downloader/request_count"], len(every))
        self.assertEqual(stats["response_received_count"], len(every))
        self.assertEqual(set(worker_pids(err)), {1, 2})
        self.assertEqual(stats["finish_reason"], "finished")

    @defer.inlineCallbacks
    def test_killed_worker_loses_nothing(self):
        """A worker killed with SIGKILL mid-crawl: it is started again, what it held goes
        back to the frontier, every page ends in the feed once and the books balance."""
        every = add_tree(self.server, delay=0.05)
        transports = []
        killed = []

        def kill_once_busy():
            if killed or not transports:
                return
            pids = worker_pids(b"".join(transports[0].proto.err).decode("utf-8", "replace"))
            if 2 in pids and sum(self.server.hits.values()) >= 15:
                os.kill(pids[2], signal.SIGKILL)  # a worker of the crawl this test started
                killed.append(pids[2])

        loop = task.LoopingCall(kill_once_busy)
        loop.start(0.01)
        try:
            code, _out, err = yield self.crawl("-s", "CONCURRENT_REQUESTS=6",
                                               started=transports.append)
        finally:
            loop.stop()
        self.assertTrue(killed, err)
        stats = self.check_complete(every, code, err)
        self.assertEqual(stats["workers/died"], 1)
        self.assertEqual(stats["workers/restarts"], 1)
        self.assertEqual(err.count(f"(pid {killed[0]}) died (signal 9)"), 1, err)
        # only what the dead worker held was fetched twice
        twice = sum(count - 1 for count in self.server.hits.values())
        self.assertLessEqual(twice, stats.get("workers/requeued", 0))

    @defer.inlineCallbacks
    def test_a_page_that_kills_its_worker_takes_no_other_down(self):
        """A callback that ends its process on one page, every time: that page alone is
        given up (WorkerLost) after three deaths; the pages its worker held with it each
        time are fetched again and scraped, every one of them."""
        every = add_tree(self.server, delay=0.05)
        code, err = yield self.run_spider(CRASH_SPIDER, "-s", "CONCURRENT_REQUESTS=8")
        self.assertEqual(code, 0, err)
        crash = self.server.url("/p5")
        unseen = self.server.url("/p35")  # linked from /p5 alone
        self.assertEqual(sorted(feed_urls(self.feed)), sorted(every - {crash, unseen}))
        given_up = re.findall(r"<GET (\S+)>: 3 worker processes died while fetching it", err)
        self.assertEqual(given_up, [crash], err)
        stats = self.stats()
        self.assertEqual(stats["ledger/failed/WorkerLost"], 1)
        self.assertEqual(stats["workers/died"], 3)
        self.assertEqual(stats["ledger/missing"], 0, err)

    @defer.inlineCallbacks
    def test_close_past_the_grace_period_balances(self):
        """A pipeline whose Deferred never fires for two pages, then the close
        (CLOSESPIDER_PAGECOUNT): the workers cancel them at the end of the grace period,
        the crawl ends, and the ledger balances (each counted once, by its worker)."""
        add_tree(self.server, delay=0.02)
        code, err = yield self.run_spider(HANG_SPIDER, "-s", "CLOSE_GRACE_PERIOD=1",
                                          "-s", "CLOSESPIDER_PAGECOUNT=20")
        self.assertEqual(code, 0, err)
        self.assertNotIn("does not balance", err)
        stats = self.stats()
        self.assertEqual(stats["finish_reason"], "closespider_pagecount")
        self.assertEqual(stats["ledger/missing"], 0, err)
        self.assertGreaterEqual(stats["ledger/cancelled"], 2, err)

    @defer.inlineCallbacks
    def test_a_blocked_worker_is_stopped_at_the_close(self):
        """A callback that blocks its worker's reactor (time.sleep) when the close begins
        (SIGTERM, sent once the page was asked for): the worker cannot close, and is
        stopped two grace periods later; the crawl ends without waiting for it, with what
        the other scraped."""
        add_tree(self.server, delay=0.02)
        transports = []
        signalled = []

        def terminate_once_blocked():
            if not signalled and transports and self.server.hits["/p3"]:
                signalled.append(reactor.seconds())
                transports[0].signalProcess("TERM")

        loop = task.LoopingCall(terminate_once_blocked)
        loop.start(0.01)
        try:
            code, err = yield self.run_spider(BLOCK_SPIDER, "-s", "CLOSE_GRACE_PERIOD=1",
                                              started=transports.append)
        finally:
            loop.stop()
        self.assertTrue(signalled, err)
        self.assertLess(reactor.seconds() - signalled[0], 40)  # not the 120 s it sleeps
        self.assertEqual(code, 0, err)
        self.assertIn("is still running two grace periods after the close began", err)
        stats = self.stats()
        self.assertEqual(stats["workers/stopped"], 1)
        self.assertTrue(feed_urls(self.feed))

    def run_spider(self, source, *extra, started=None):
        """runspider C{source} (a spider file's text) with two workers on this test's
        server (C{started}: called with the process's transport). @return: a Deferred
        firing with (exit status, stderr)."""
        spider_file = os.path.abspath(self.mktemp() + ".py")
        with open(spider_file, "w") as f:
            f.write(source)
        d = run_command(reactor, ["runspider", spider_file, "--workers", "2", "-a",
                                  f"url={self.server.url('/')}", "-s", "ROBOTSTXT_OBEY=False",
                                  "-O", self.feed, "-s", f"STATS_FILE={self.stats_file}",
                                  *extra], started=started)
        d.addCallback(lambda result: (result[0], result[2]))
        return d

    @defer.inlineCallbacks
    def test_delay_held_across_workers(self):
        """DOWNLOAD_DELAY=0.25 on one host with two workers: no two requests reach the
        server less than the delay apart, whichever worker sent them."""
        every = add_tree(self.server, pages=10)
        code, _out, err = yield self.crawl("-s", "DOWNLOAD_DELAY=0.25",
                                           "-s", "RANDOMIZE_DOWNLOAD_DELAY=False")
        self.check_complete(every, code, err)
        times = [request.time for request in self.server.requests]
        gaps = [b - a for a, b in pairwise(times)]
        self.assertGreaterEqual(min(gaps), 0.95 * 0.25, gaps)

    @defer.inlineCallbacks
    def test_autothrottle_held_across_workers(self):
        """AutoThrottle (held in the parent) with two workers, a host answering in 0.2 s:
        the second request waits for the start delay as the first answer moved it (to
        0.6 s), later gaps shrink towards the latency, none is shorter than it, and the
        parent logs one AUTOTHROTTLE_DEBUG line per page."""
        every = add_tree(self.server, pages=10, delay=0.2)
        lateness = Lateness()
        lateness.start()
        try:
            code, _out, err = yield self.crawl(
                "-s", "AUTOTHROTTLE_ENABLED=True", "-s", "AUTOTHROTTLE_DEBUG=True",
                "-s", "AUTOTHROTTLE_START_DELAY=1.0", "-s", "AUTOTHROTTLE_MAX_DELAY=1.0",
                "-s", "AUTOTHROTTLE_TARGET_CONCURRENCY=1",
                "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8", "-s", "LOG_LEVEL=INFO")
        finally:
            lateness.stop()
        self.check_complete(every, code, err)
        allowance = lateness.allowance()
        times = [request.time for request in self.server.requests]
        gaps = [b - a for a, b in pairwise(times)]
        # after the first answer (0.2 s): (1.0 + 0.2) / 2 from the first send
        self.assertGreaterEqual(gaps[0], 0.95 * 0.6 - allowance, (allowance, gaps))
        self.assertGreaterEqual(min(gaps), 0.95 * 0.2 - allowance, (allowance, gaps))
        self.assertLess(gaps[-1], 0.8 * gaps[0], gaps)  # the delay came down
        debug = [line for line in err.splitlines() if "| conc:" in line]
        self.assertEqual(len(debug), len(every), err)
        self.assertFalse([line for line in debug if "worker " in line], debug)

    @defer.inlineCallbacks
    def test_per_host_concurrency_held_across_workers(self):
        """CONCURRENT_REQUESTS_PER_DOMAIN=2 with two workers of 4 each: the host never has
        more than 2 requests in flight at once."""
        every = add_tree(self.server, pages=24, delay=0.1)
        code, _out, err = yield self.crawl("-s", "CONCURRENT_REQUESTS=8",
                                           "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2")
        self.check_complete(every, code, err)
        self.assertEqual(self.server.max_in_flight, 2)

    @defer.inlineCallbacks
    def test_spider_hooks_run_once_for_the_crawl(self):
        """With two workers, the spider's closed(reason) and its spider_closed receiver run
        once, in the parent, with the whole crawl's counts; its item_scraped and
        response_received receivers once per page; its spider_opened receiver in the
        parent and in each worker (where its callbacks run)."""
        every = add_tree(self.server, pages=10)
        notes = os.path.abspath(self.mktemp())
        os.mkdir(notes)
        spider_file = os.path.abspath(self.mktemp() + ".py")
        with open(spider_file, "w") as f:
            f.write(HOOKS_SPIDER)
        parents = []

        def note_parent(transport):
            parents.append(transport.pid)

        code, _out, err = yield run_command(
            reactor, ["runspider", spider_file, "--workers", "2", "-a", f"notes={notes}",
                      "-a", f"url={self.server.url('/')}", "-s", "ROBOTSTXT_OBEY=False",
                      "-O", self.feed, "-s", f"STATS_FILE={self.stats_file}"],
            started=note_parent)
        self.check_complete(every, code, err)
        parent = parents[0]
        workers = set(worker_pids(err).values())
        self.assertEqual(len(workers), 2, err)

        def noted(hook):
            path = os.path.join(notes, hook)
            if not os.path.exists(path):
                return []
            with open(path) as f:
                return [line.split() for line in f]

        count = str(len(every))
        self.assertEqual(noted("closed"), [[str(parent), "finished", count]])
        self.assertEqual(noted("spider_closed"), [[str(parent), "finished", count]])
        self.assertEqual(sorted(url for _pid, url in noted("item_scraped")), sorted(every))
        self.assertEqual(sorted(url for _pid, url in noted("response_received")),
                         sorted(every))
        self.assertEqual(sorted(int(pid) for pid, in noted("spider_opened")),
                         sorted([parent, *workers]))

    @defer.inlineCallbacks
    def test_jobdir_pause_and_resume(self):
        """With --jobdir, Ctrl-C stops both workers and the parent; the run again with the
        same directory finishes the crawl: every page in the feeds, none fetched twice
        but the few in flight at the pause."""
        every = add_tree(self.server, delay=0.03)
        jobdir = os.path.abspath(self.mktemp())
        first = self.feed
        args = ["crawl", self.server.url("/"), "--workers", "2", "--jobdir", jobdir,
                "-s", "ROBOTSTXT_OBEY=False", "-s", "CONCURRENT_REQUESTS=4"]
        code, _out, err = yield run_and_interrupt(
            reactor, [*args, "-o", first],
            [lambda: sum(self.server.hits.values()) >= 15])
        self.assertEqual(code, 0, err)
        self.assertIn("requests kept for the next run", err)
        paused = feed_urls(first)
        self.assertLess(len(paused), len(every))
        second = os.path.abspath(self.mktemp() + ".jsonl")
        code, _out, err = yield run_command(reactor, [*args, "-o", second])
        self.assertEqual(code, 0, err)
        self.assertIn("resuming", err)
        urls = paused + feed_urls(second)
        self.assertEqual(set(urls), every)
        self.assertLessEqual(len(urls) - len(every), 4)  # at most what was in flight

    @defer.inlineCallbacks
    def terminate_when_busy(self, workers_too=False):
        """Crawl with two workers and send SIGTERM to the parent (and to each worker too,
        with C{workers_too}) once both workers run and ten pages were asked for.
        @return: (exit status, stderr, worker number -> pid)."""
        add_tree(self.server, delay=0.05)
        transports = []
        pids = {}

        def terminate_once_busy():
            if pids or not transports:
                return
            found = worker_pids(b"".join(transports[0].proto.err).decode("utf-8", "replace"))
            if len(found) == 2 and sum(self.server.hits.values()) >= 10:
                pids.update(found)
                if workers_too:
                    for pid in found.values():  # the workers this crawl started, by pid
                        os.kill(pid, signal.SIGTERM)
                transports[0].signalProcess("TERM")

        loop = task.LoopingCall(terminate_once_busy)
        loop.start(0.01)
        try:
            code, _out, err = yield self.crawl(started=transports.append)
        finally:
            loop.stop()
        return code, err, pids

    @defer.inlineCallbacks
    def test_sigterm_stops_the_workers(self):
        """SIGTERM on the parent closes the crawl gracefully: it exits 0, its workers
        have ended, and the feed has what was scraped."""
        code, err, pids = yield self.terminate_when_busy()
        self.assertEqual(code, 0, err)
        self.assertIn("received SIGTERM", err)
        self.assertEqual(self.stats()["finish_reason"], "shutdown")
        self.assertTrue(feed_urls(self.feed))
        for pid in pids.values():  # reaped by the parent before it exited
            self.assertFalse(os.path.exists(f"/proc/{pid}") and _state(pid) != "Z", pid)

    @defer.inlineCallbacks
    def test_sigterm_to_every_process_of_the_crawl(self):
        """SIGTERM to the parent and to each worker at once (what a stop sent to the
        process group does: systemd, timeout, a terminal's hangup): the workers leave it
        to the parent, which closes the crawl gracefully; no worker dies or is started
        again."""
        code, err, _pids = yield self.terminate_when_busy(workers_too=True)
        self.assertEqual(code, 0, err)
        self.assertIn("received SIGTERM", err)
        self.assertNotIn("died", err)
        stats = self.stats()
        self.assertEqual(stats["finish_reason"], "shutdown")
        self.assertNotIn("workers/died", stats)
        self.assertNotIn("workers/restarts", stats)
        self.assertTrue(feed_urls(self.feed))

def _state(pid):
    """The state letter of process C{pid} in /proc (C{Z}: a zombie), or "" if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


class SharedFrontierWorkersTests(unittest.TestCase):
    """--workers with --scheduler redis://: N workers on the shared frontier."""

    skip = NO_REDIS
    timeout = 120

    @defer.inlineCallbacks
    def test_two_workers_on_redis(self):
        """Two workers started by one command share the Redis frontier: each page once,
        the items in the parent's one feed."""
        needs_processes("redis-server and worker processes")
        redis = RedisServer().start()
        self.addCleanup(redis.stop)
        server = serve(self)
        every = add_tree(server, pages=30)
        feed = os.path.abspath(self.mktemp() + ".jsonl")
        code, _out, err = yield run_command(reactor, [
            "crawl", server.url("/"), "--workers", "2", "--scheduler", redis.url,
            "-s", "ROBOTSTXT_OBEY=False", "-s", "SCHEDULER_REDIS_POLL_INTERVAL=0.05",
            "-O", feed])
        self.assertEqual(code, 0, err)
        self.assertEqual(sorted(feed_urls(feed)), sorted(every))
        self.assertEqual(set(server.hits.values()), {1})
        self.assertEqual(set(worker_pids(err)), {1, 2})


class UsageTests(unittest.TestCase):
    """What --workers refuses, with one line and exit status 2 (or an exception in a
    script)."""

    timeout = 60

    @defer.inlineCallbacks
    def test_bad_worker_counts(self):
        """--workers 0, -1 and "some" are usage errors: one line, exit status 2."""
        for value in ("0", "-1", "some"):
            code, _out, err = yield run_command(reactor, ["crawl", "http://127.0.0.1:9/",
                                                          "--workers", value])
            self.assertEqual(code, 2, err)
            self.assertEqual(err.strip().count("\n"), 0, err)
            self.assertIn(f"--workers {value}: expected a whole number", err)

    @defer.inlineCallbacks
    def test_spider_of_the_running_script(self):
        """A spider defined in the script that runs the crawl cannot be made again in a
        worker: CrawlerProcess.crawl raises UsageError, saying so, before any worker
        starts."""
        script = os.path.abspath(self.mktemp() + ".py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        code, out, err = yield run_python(reactor, [script])
        self.assertEqual(code, 0, err)
        self.assertIn("UsageError: --workers: the spider Here cannot be found by a worker",
                      out)
        self.assertNotIn("started (pid", err)


SCRIPT = """\
import tinyscrapy
from tinyscrapy.crawler import CrawlerProcess
from tinyscrapy.exceptions import UsageError

class Here(tinyscrapy.Spider):
    name = "here"
    start_urls = ["http://127.0.0.1:9/"]

process = CrawlerProcess({"WORKERS": 2})
try:
    process.crawl(Here)
except UsageError as e:
    print("UsageError:", e)
"""


def follow_spider(on_page, head="", pipeline=None):
    """The source of a spider file that follows every link from C{self.url}, yielding
    an item per page; C{on_page} (indented code) runs first in each callback, C{head}
    (module code) comes before the class, and C{pipeline} names a class of C{head} the
    spider's C{ITEM_PIPELINES} hold."""
    settings = f"custom_settings = {{'ITEM_PIPELINES': {{{pipeline}: 100}}}}" if pipeline \
        else "custom_settings = {}"
    return FOLLOW_SPIDER.format(head=head, on_page=on_page, settings=settings)


FOLLOW_SPIDER = """\
import os
import time

from twisted.internet.defer import Deferred

import tinyscrapy

{head}

class Follow(tinyscrapy.Spider):
    name = "follow"
    {settings}

    def start_requests(self):
        yield tinyscrapy.Request(self.url)

    def parse(self, response):
{on_page}
        yield {{"url": response.url}}
        yield from response.follow_all(css="a")
"""

# a bug that takes its process down, on this page every time
CRASH_SPIDER = follow_spider("""\
        if response.url.endswith("/p5"):
            os._exit(3)""")

# a pipeline whose Deferred never fires for two pages: only the grace period ends them
HANG_SPIDER = follow_spider("        pass", pipeline="NeverFires", head="""\
class NeverFires:
    def process_item(self, item, spider):
        if item["url"].endswith(("/p3", "/p4")):
            return Deferred()
        return item
""")

# a callback that blocks its worker's reactor: only a kill ends it
BLOCK_SPIDER = follow_spider("""\
        if response.url.endswith("/p3"):
            time.sleep(120)""")


HOOKS_SPIDER = """\
import os

import tinyscrapy
from tinyscrapy import signals


class Hooks(tinyscrapy.Spider):
    name = "hooks"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        for name in ("spider_opened", "spider_closed", "item_scraped", "response_received"):
            crawler.signals.connect(getattr(spider, "on_" + name), getattr(signals, name))
        return spider

    def start_requests(self):
        yield tinyscrapy.Request(self.url)

    def parse(self, response):
        yield {"url": response.url}
        yield from response.follow_all(css="a")

    def note(self, hook, *words):
        with open(os.path.join(self.notes, hook), "a") as f:
            f.write(" ".join([str(os.getpid()), *words]) + "\\n")

    def count(self):
        return str(self.crawler.stats.get_value("item_scraped_count"))

    def closed(self, reason):
        self.note("closed", reason, self.count())

    def on_spider_opened(self, spider):
        self.note("spider_opened")

    def on_spider_closed(self, spider, reason):
        self.note("spider_closed", reason, self.count())

    def on_item_scraped(self, item, spider):
        self.note("item_scraped", item["url"])

    def on_response_received(self, response, spider):
        self.note("response_received", response.url)
"""

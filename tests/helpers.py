"""
Shared test helpers: an engine wired to fakes and a C{task.Clock}, a real crawl (and one
that collects its items), a test server that stops with its test, and the tiers.

The suite has two tiers. The fast tier is every test that runs inside the trial process
(C{task.Clock} and fakes, and twisted.web servers in the test's own reactor):

    TINYSCRAPY_TEST_TIER=fast python -m twisted.trial -j2 tests

The integration tier is every test that starts another process (the command line, a
script, redis-server, a docs example, a tmpfs mount): in the fast tier each of them is
skipped at the point it would start one (L{needs_processes}). The full suite
(C{python -m twisted.trial tests}) runs both.
"""

import os
import sys

from twisted.internet import defer
from twisted.internet.task import Clock

from tinyscrapy import signals
from tinyscrapy.core.engine import ExecutionEngine
from tinyscrapy.core.scheduler import Scheduler
from tinyscrapy.core.scraper import Scraper
from tinyscrapy.core.startrequests import start_of
from tinyscrapy.crawler import Crawler
from tinyscrapy.http import HttpResponse
from tinyscrapy.settings import Settings
from tinyscrapy.spiders import Spider

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class LinkSpider(Spider):
    """Follows every C{href} with C{response.follow}, as a naive spider does; one item per
    page."""

    name = "links"

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


class FakeDownloader:
    """
    A downloader whose downloads finish when the test says so.

    @ivar pending: C{(request, Deferred)} pairs not yet answered, in start order.
    @ivar peak: the most downloads ever pending at once.
    """

    def __init__(self):
        self.pending = []
        self.peak = 0
        self.fetched = []
        self.middleware = type("NoMiddleware", (), {"middlewares": []})()

    def fetch(self, request, spider):
        d = defer.Deferred()
        self.pending.append((request, d))
        self.fetched.append(request.url)
        self.peak = max(self.peak, len(self.pending))
        return d

    def answer(self, body=b"<html></html>", status=200, headers=None, index=0):
        """Finish the C{index}-th pending download with a response."""
        request, d = self.pending.pop(index)
        headers = headers or {"Content-Type": "text/html; charset=utf-8"}
        d.callback(HttpResponse(request.url, status, headers, body, request))
        return request

    def fail(self, exception, index=0):
        request, d = self.pending.pop(index)
        d.errback(exception)
        return request

    def answer_all(self, **kwargs):
        while self.pending:
            self.answer(**kwargs)

    def close(self):
        return None

    def statistics(self):
        return None


def make_engine(spidercls, settings=None, scheduler=None, **spargs):
    """
    An engine for C{spidercls} on a L{Clock}, with a L{FakeDownloader}.

    @return: C{(engine, clock, downloader, crawler)}; the crawl is opened, not yet run.
    """
    clock = Clock()
    crawler = Crawler(spidercls, Settings(settings or {}), reactor=clock)
    crawler.settings.freeze()
    crawler.spider = spidercls.from_crawler(crawler, **spargs)
    downloader = FakeDownloader()
    scraper = Scraper(crawler)
    if scheduler is None:
        scheduler = Scheduler()
    engine = ExecutionEngine(crawler, reactor=clock, scheduler=scheduler, downloader=downloader,
                             scraper=scraper)
    crawler.engine = engine
    engine.open_spider(crawler.spider, start_of(crawler.spider, scraper.spidermw))
    return engine, clock, downloader, crawler


def crawl(spidercls, settings=None, **spargs):
    """
    Run a real crawl of C{spidercls} in the test's reactor.

    @return: a Deferred firing with the L{Crawler} once the crawl has closed.
    """
    base = {"LOG_LEVEL": "WARNING", "FEEDS": {}}
    base.update(settings or {})
    crawler = Crawler(spidercls, Settings(base))
    d = crawler.crawl(**spargs)
    d.addCallback(_return, crawler)
    return d


def crawl_and_collect(spidercls, settings=None, **spargs):
    """
    Run a real crawl of C{spidercls} in the test's reactor, collecting the items it
    scraped (as the C{item_scraped} signal gives them).

    @return: a Deferred firing with C{(crawler, items)} once the crawl has closed.
    """
    base = {"LOG_LEVEL": "WARNING", "FEEDS": {}}
    base.update(settings or {})
    crawler = Crawler(spidercls, Settings(base))
    items = []

    def scraped(item):
        items.append(item)

    crawler.signals.connect(scraped, signals.item_scraped)
    d = crawler.crawl(**spargs)
    d.addCallback(_return, (crawler, items))
    return d


def serve(test, interface="127.0.0.1"):
    """
    A L{tests.servers.TestServer} on C{interface} (port 0), started, and stopped when
    C{test} ends.

    @param test: the running C{TestCase} (its C{addCleanup} stops the server).
    @return: the started server.
    """
    from .servers import TestServer
    server = TestServer(interface).start()
    test.addCleanup(server.stop)
    return server


def _return(_, value):
    return value


def until(condition, interval=0.01):
    """
    Wait for an event that has no Deferred of its own: C{condition()} is polled every
    C{interval} seconds (bounded by the test's own timeout).

    @return: a Deferred firing with None once C{condition()} is true.
    """
    from twisted.internet import task
    done = defer.Deferred()

    def poll():
        if condition():
            loop.stop()
            done.callback(None)

    loop = task.LoopingCall(poll)
    loop.start(interval)
    return done


FAST = os.environ.get("TINYSCRAPY_TEST_TIER") == "fast"


class Lateness:
    """
    How late this process's reactor runs, sampled by a timer every C{interval} seconds
    while it is started. The test server in this process notes a request's arrival when
    its reactor reads it: late by as much as the reactor was (the process waiting for a
    core, say), which makes the gap before it longer and the one after it shorter by the
    same amount. L{allowance} bounds that.
    """

    interval = 0.005

    def __init__(self, reactor=None):
        if reactor is None:
            from twisted.internet import reactor
        self.reactor = reactor
        self.worst = 0.0
        self._due = None
        self._call = None

    def start(self):
        self._due = self.reactor.seconds() + self.interval
        self._call = self.reactor.callLater(self.interval, self._tick)

    def stop(self):
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None

    def _tick(self):
        now = self.reactor.seconds()
        self.worst = max(self.worst, now - self._due)
        self._due = now + self.interval
        self._call = self.reactor.callLater(self.interval, self._tick)

    def allowance(self):
        """The most an arrival may have been noted late: the worst lateness seen, and the
        time between two samples."""
        return self.worst + self.interval


def needs_processes(what="another process"):
    """
    Called where a test starts another process: in the fast tier
    (C{TINYSCRAPY_TEST_TIER=fast}) it skips the test there.

    @raise unittest.SkipTest: in the fast tier.
    """
    if FAST:
        from twisted.trial.unittest import SkipTest
        raise SkipTest(f"integration tier: starts {what}")


def stop_process(process):
    """Stop a C{subprocess.Popen} the test started: SIGTERM, then SIGKILL after 5 s."""
    import subprocess
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def subprocess_env():
    """The environment for C{python -m tinyscrapy} in a child: the repository importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_command(reactor, args, cwd=ROOT, timeout=60, started=None, env=None):
    """
    Run C{python -m tinyscrapy ARGS} with C{reactor.spawnProcess} (a blocking subprocess
    would deadlock against a server running in this reactor).

    @param started: called with the process transport once it is spawned.
    @param env: variables to set in the child, over L{subprocess_env}'s (None removes one).
    @return: a Deferred firing with C{(exit status, stdout, stderr)}.
    """
    return run_python(reactor, ["-m", "tinyscrapy", *args], cwd, timeout, started, env)


def run_python(reactor, argv, cwd=ROOT, timeout=60, started=None, env=None):
    """
    Run C{python ARGV} as L{run_command} runs the command line (killed after C{timeout}).

    @return: a Deferred firing with C{(exit status, stdout, stderr)}.
    """
    from twisted.internet import protocol
    needs_processes("python")

    class Collect(protocol.ProcessProtocol):
        def __init__(self):
            self.out, self.err = [], []
            self.done = defer.Deferred()

        def outReceived(self, data):
            self.out.append(data)

        def errReceived(self, data):
            self.err.append(data)

        def processEnded(self, reason):
            if timer.active():
                timer.cancel()
            self.done.callback((reason.value.exitCode, b"".join(self.out).decode(),
                                b"".join(self.err).decode()))

    collect = Collect()
    child_env = subprocess_env()
    for name, value in (env or {}).items():
        if value is None:
            child_env.pop(name, None)
        else:
            child_env[name] = value
    transport = reactor.spawnProcess(collect, sys.executable, [sys.executable, *argv],
                                     env=child_env, path=cwd)
    timer = reactor.callLater(timeout, transport.signalProcess, "KILL")
    if started is not None:
        started(transport)  # e.g. to send it a signal later
    return collect.done


def run_and_interrupt(reactor, args, conditions, **kwargs):
    """
    Run C{python -m tinyscrapy ARGS} (as L{run_command}) and send it SIGINT once each of
    C{conditions} comes true, in order: a call returning a bool, or a string, which is
    true once the child has written it to stderr (to send a second signal only after the
    child has seen the first: two signals that arrive before the child runs again are
    handled as one).

    @return: the command's Deferred, as L{run_command}'s.
    """
    from twisted.internet import task

    transports = []
    pending = list(conditions)
    d = run_command(reactor, args, started=transports.append, **kwargs)

    def holds(condition):
        if isinstance(condition, str):
            err = b"".join(transports[0].proto.err).decode("utf-8", "replace")
            return condition in err
        return condition()

    def poll():
        if pending and transports and holds(pending[0]):
            pending.pop(0)
            transports[0].signalProcess("INT")
        if not pending:
            loop.stop()

    def stop_polling(result):
        if loop.running:
            loop.stop()
        return result

    loop = task.LoopingCall(poll)
    if pending:
        loop.start(0.02)
    return d.addBoth(stop_polling)

"""
Never hang: the hangs and lost errors the fault injection found (the matrix itself is
tests/test_faults.py), each way out bounded by CLOSE_GRACE_PERIOD, the pipelines' close,
and the failures that must say so.

In the trial process: the hang of a callback whose output waits for a pipeline and then
raises, with a process_spider_exception that raises too (and the same after a slice of
its output); CLOSESPIDER_TIMEOUT and close_spider with a Deferred that never fires; every
pipeline's close_spider together, each finished or failed before the feeds close;
asyncio code awaited under Twisted's default reactor; the signal handler's bookkeeping.
In a child process (the integration tier): SIGTERM, SIGINT (once, twice, twice in one
instant) and SIGHUP while a callback's Deferred never fires; a failing open_spider.
"""

import json
import logging
import os
import signal
import time

from twisted.internet import defer, reactor, task
from twisted.trial import unittest

from tinyscrapy import Request, Spider, signals
from tinyscrapy.core import scraper as scraper_module
from tinyscrapy.crawler import Crawler, CrawlerProcess
from tinyscrapy.settings import Settings

from .helpers import run_command, serve, until
from .logs import capture_logs
from .servers import Page

GRACE = 0.5


def _settings(**extra):
    base = {"LOG_LEVEL": "DEBUG", "FEEDS": {}, "CLOSE_GRACE_PERIOD": GRACE,
            "RETRY_ENABLED": False}
    base.update(extra)
    return Settings(base)


def _settled(d):
    """@return: a Deferred firing with C{[result or failure]} (the failure consumed)."""
    return d.addBoth(_boxed)


def _boxed(result):
    return [result]


class SlowPipeline:
    """Lets each item go 20 ms later (a Deferred)."""

    def process_item(self, item):
        d = defer.Deferred()
        reactor.callLater(0.02, d.callback, item)
        return d


class RaisingExceptionMiddleware:
    """A process_spider_exception that raises too."""

    def process_spider_exception(self, response, exception):
        raise ValueError("process_spider_exception raised as well")


class ItemThenRaiseSpider(Spider):
    """One item through a pipeline that answers later, then the callback raises: the hang
    of the issue. With C{many}, first that many requests, so the output is sliced."""

    name = "itemthenraise"
    many = 0

    def parse(self, response):
        for n in range(self.many):
            yield Request(f"{response.url}?n={n}", callback=self.parse_page)
        yield {"url": response.url}
        raise RuntimeError("the callback raised after its item")

    def parse_page(self, response):
        return None


class IssueHangTests(unittest.TestCase):
    """The hang of the issue's first paragraph, and its twin after a slice."""

    timeout = 30

    def setUp(self):
        self.server = serve(self)
        self.url = self.server.add_page("/")
        self.logs = capture_logs(self)

    @defer.inlineCallbacks
    def _crawl(self, many=0):
        spidercls = type("S", (ItemThenRaiseSpider,), {"many": many,
                                                        "start_urls": [self.url]})
        crawler = Crawler(spidercls, _settings(
            ITEM_PIPELINES={SlowPipeline: 100},
            SPIDER_MIDDLEWARES={RaisingExceptionMiddleware: 100}))
        reason = yield crawler.crawl()
        return crawler, reason

    def _errors(self, text):
        return [r for r in self.logs.records if r.levelno >= logging.ERROR
                and text in (r.getMessage() + str(r.exc_info[1] if r.exc_info else ""))]

    @defer.inlineCallbacks
    def test_item_in_a_pipeline_then_two_errors_ends(self):
        """The item waits for a pipeline's Deferred, the callback raises, so does
        process_spider_exception: the crawl ends by itself, each error logged once."""
        crawler, reason = yield self._crawl()
        self.assertEqual(reason, "finished")
        stats = crawler.stats.get_stats()
        self.assertEqual(stats["item_scraped_count"], 1)
        self.assertEqual(stats["spider_exceptions/RuntimeError"], 1)
        self.assertEqual(stats["spider_exceptions/ValueError"], 1)
        self.assertEqual(len(self._errors("the callback raised after its item")), 1)
        self.assertEqual(len(self._errors("process_spider_exception raised as well")), 1)
        self.assertEqual(stats["ledger/missing"], 0)

    @defer.inlineCallbacks
    def test_the_same_after_a_slice_ends(self):
        """The output resumed by callLater(0) after a slice, then the same two errors:
        the crawl ends by itself."""
        self.patch(scraper_module, "SLICE", 0.0)  # a slice every _CHECK_EVERY outputs
        self.server.add("/", Page("<html>many</html>"))
        crawler, reason = yield self._crawl(many=3 * scraper_module._CHECK_EVERY)
        self.assertEqual(reason, "finished")
        self.assertEqual(crawler.stats.get_value("spider_exceptions/RuntimeError"), 1)
        self.assertEqual(crawler.stats.get_value("spider_exceptions/ValueError"), 1)
        self.assertEqual(crawler.stats.get_value("ledger/missing"), 0)


class NeverSpider(Spider):
    """The home page links to /a, /b and /never, whose callback's Deferred never fires."""

    name = "never"
    start_urls = None

    def parse(self, response):
        yield {"url": response.url}
        for path in ("a", "b"):
            yield response.follow(path, callback=self.parse_page)
        yield response.follow("never", callback=self.parse_never)

    def parse_page(self, response):
        yield {"url": response.url}

    def parse_never(self, response):
        self.crawler.reached_never = True
        return defer.Deferred()


class BoundedCloseTests(unittest.TestCase):
    """Every way out of a crawl that waits for a Deferred that never fires is bounded."""

    timeout = 30

    def setUp(self):
        self.server = serve(self)
        self.url = self.server.add_page("/", links=["/a", "/b", "/never"])
        for path in ("/a", "/b", "/never"):
            self.server.add_page(path)
        self.logs = capture_logs(self)

    def _crawler(self, **settings):
        spidercls = type("S", (NeverSpider,), {"start_urls": [self.url]})
        return Crawler(spidercls, _settings(**settings))

    def _check_cancelled(self, crawler):
        stats = crawler.stats.get_stats()
        self.assertEqual(stats["ledger/cancelled"], 1, stats)
        self.assertEqual(stats["ledger/missing"], 0, stats)
        self.assertEqual(stats["item_scraped_count"], 3)  # /, /a, /b
        self.assertIn("still in flight", self.logs.text())

    @defer.inlineCallbacks
    def test_closespider_timeout_closes_within_the_grace_period(self):
        """CLOSESPIDER_TIMEOUT with a callback that never returns: the crawl ends with
        closespider_timeout, the stuck request cancelled, within the grace period."""
        crawler = self._crawler(CLOSESPIDER_TIMEOUT=1.0)
        started = reactor.seconds()
        reason = yield crawler.crawl()
        self.assertEqual(reason, "closespider_timeout")
        self.assertLess(reactor.seconds() - started, 1.0 + 2 * GRACE + 1.0)
        self._check_cancelled(crawler)

    @defer.inlineCallbacks
    def test_close_spider_closes_within_the_grace_period(self):
        """engine.close_spider while a callback never returns: closed GRACE later."""
        crawler = self._crawler()
        d = crawler.crawl()
        yield until(lambda: getattr(crawler, "reached_never", False)
                     and crawler.stats.get_value("item_scraped_count") == 3)
        asked = reactor.seconds()
        crawler.engine.close_spider("enough")
        reason = yield d
        self.assertEqual(reason, "enough")
        self.assertGreaterEqual(reactor.seconds() - asked, GRACE * 0.9)
        self.assertLess(reactor.seconds() - asked, 2 * GRACE + 1.0)
        self._check_cancelled(crawler)

    @defer.inlineCallbacks
    def test_a_fatal_error_close_is_bounded_too(self):
        """stop_for_error (a feed that cannot be written) while a callback never
        returns: the crawl ends with the error reason, bounded."""
        crawler = self._crawler()
        d = crawler.crawl()
        yield until(lambda: getattr(crawler, "reached_never", False))
        crawler.engine.stop_for_error("feed_error")
        reason = yield d
        self.assertEqual(reason, "feed_error")
        self.assertEqual(crawler.stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_a_spider_opened_receiver_that_never_fires_ends_by_the_timeout(self):
        """The crawl cannot open (a spider_opened receiver never fires):
        CLOSESPIDER_TIMEOUT, which starts as the spider opens, still ends it, bounded."""
        crawler = self._crawler(CLOSESPIDER_TIMEOUT=0.5)
        crawler.signals.connect(_never, signals.spider_opened)
        started = reactor.seconds()
        reason = yield crawler.crawl()
        self.assertEqual(reason, "closespider_timeout")
        self.assertLess(reactor.seconds() - started, 0.5 + 2 * GRACE + 1.0)
        self.assertEqual(sum(self.server.hits.values()), 0)

    @defer.inlineCallbacks
    def test_no_grace_period_waits(self):
        """CLOSE_GRACE_PERIOD = 0 is Scrapy's way: the stuck request is waited for (here,
        until the test lets it go)."""
        crawler = self._crawler(CLOSE_GRACE_PERIOD=0)
        stuck = []
        crawler.spidercls.parse_never = _stuck_callback(stuck)
        d = crawler.crawl()
        yield until(lambda: stuck and crawler.stats.get_value("item_scraped_count") == 3)
        crawler.engine.close_spider("enough")
        yield task.deferLater(reactor, 2 * GRACE, _nothing)
        self.assertFalse(d.called, "the crawl did not wait")
        stuck[0].callback(None)
        reason = yield d
        self.assertEqual(reason, "enough")
        self.assertEqual(crawler.stats.get_value("ledger/cancelled", 0), 0)


def _never(**_):
    return defer.Deferred()


def _nothing():
    return None


def _stuck_callback(stuck):
    def parse_never(self, response):
        d = defer.Deferred()
        stuck.append(d)
        return d
    return parse_never


class FailingClose:
    """A pipeline whose close_spider fails at once."""

    events = None

    def process_item(self, item):
        return item

    def close_spider(self):
        self.events.append("failing close called")
        raise OSError("the database is gone")


class SlowClose:
    """A pipeline whose close_spider flushes for a while (a Deferred)."""

    events = None

    def process_item(self, item):
        return item

    def close_spider(self):
        self.events.append("slow close called")
        d = task.deferLater(reactor, 0.3, self.events.append, "slow close finished")
        return d


class FeedsLike:
    """An extension that writes output: the close calls its close_feeds after the
    pipelines' close."""

    events = None

    @classmethod
    def from_crawler(cls, crawler):
        return cls()

    def close_feeds(self):
        self.events.append("feeds closed")


class PipelineCloseTests(unittest.TestCase):
    """Every pipeline's close_spider together, each finished or failed before the feeds
    close."""

    timeout = 30

    @defer.inlineCallbacks
    def test_a_failing_close_does_not_hurry_a_slow_one(self):
        """A close that fails beside one that flushes slowly: both are called together,
        the failure is logged once, and the feeds close only once the slow one is done."""
        server = serve(self)
        url = server.add_page("/")
        logs = capture_logs(self)
        events = []
        classes = [type(cls.__name__, (cls,), {"events": events})
                   for cls in (FailingClose, SlowClose, FeedsLike)]
        failing, slow, feeds = classes
        spidercls = type("S", (NeverSpider,), {"start_urls": [url]})
        crawler = Crawler(spidercls, _settings(ITEM_PIPELINES={failing: 100, slow: 200},
                                               EXTENSIONS={feeds: 500}))
        reason = yield crawler.crawl()
        self.assertEqual(reason, "finished")
        self.assertEqual(events, ["failing close called", "slow close called",
                                  "slow close finished", "feeds closed"])
        failures = [r for r in logs.records if r.exc_info and "the database is gone"
                    in str(r.exc_info[1])]
        self.assertEqual(len(failures), 1)
        self.assertIn("FailingClose.close_spider", failures[0].getMessage())

    @defer.inlineCallbacks
    def test_a_close_that_never_ends_is_given_up(self):
        """A close_spider that never fires: given up after the grace period (logged), and
        the feeds still close."""
        server = serve(self)
        url = server.add_page("/")
        logs = capture_logs(self)
        events = []

        class Endless:
            def process_item(self, item):
                return item

            def close_spider(self):
                return defer.Deferred()

        feeds = type("FeedsLike", (FeedsLike,), {"events": events})
        spidercls = type("S", (NeverSpider,), {"start_urls": [url]})
        crawler = Crawler(spidercls, _settings(ITEM_PIPELINES={Endless: 100},
                                               EXTENSIONS={feeds: 500}))
        started = reactor.seconds()
        reason = yield crawler.crawl()
        self.assertEqual(reason, "finished")
        self.assertEqual(events, ["feeds closed"])
        self.assertLess(reactor.seconds() - started, 2 * GRACE + 1.0)
        self.assertIn("not finished within CLOSE_GRACE_PERIOD", logs.text())


class AsyncioUnderTwistedsReactorTests(unittest.TestCase):
    """Awaiting asyncio code under Twisted's default reactor is one clear error."""

    timeout = 30

    @defer.inlineCallbacks
    def test_awaiting_asyncio_names_the_setting(self):
        """asyncio.sleep and an asyncio.Event (whose error is an AttributeError inside
        asyncio) each fail with AsyncioReactorNeeded, naming TWISTED_REACTOR."""
        import asyncio

        server = serve(self)
        urls = [server.add_page("/sleep"), server.add_page("/event")]
        logs = capture_logs(self)

        class AsyncioSpider(Spider):
            name = "asyncio"
            start_urls = urls

            async def parse(self, response):
                if response.url.endswith("/event"):
                    await asyncio.Event().wait()
                else:
                    await asyncio.sleep(0.01)
                yield {"url": response.url}

        crawler = Crawler(AsyncioSpider, _settings())
        reason = yield crawler.crawl()
        self.assertEqual(reason, "finished")
        self.assertEqual(crawler.stats.get_value("spider_exceptions/AsyncioReactorNeeded"), 2)
        told = [r for r in logs.records if r.exc_info and "TWISTED_REACTOR"
                in str(r.exc_info[1])]
        self.assertEqual(len(told), 2)

    def test_nothing_scraped_is_an_exit_status_of_1(self):
        """The command's line when a crawl scraped nothing for want of the asyncio
        reactor."""
        from tinyscrapy.utils.reactor import asyncio_needed

        crawler = Crawler(NeverSpider, _settings())
        self.assertIsNone(asyncio_needed(crawler))
        crawler.stats.set_value("spider_exceptions/AsyncioReactorNeeded", 3)
        self.assertIn("TWISTED_REACTOR", asyncio_needed(crawler))
        crawler.stats.set_value("item_scraped_count", 1)
        self.assertIsNone(asyncio_needed(crawler))


class SignalBookkeepingTests(unittest.TestCase):
    """The signal handler logs nothing and counts a second signal only once the reactor
    has handled the first."""

    timeout = 30

    def _process(self):
        process = CrawlerProcess(_settings(), install_root_handler=False, reactor=reactor)
        stopped = []
        process.stop = process._stop_all = lambda reason="shutdown": stopped.append(reason)
        process._stop_reactor = lambda _=None: stopped.append("reactor")
        return process, stopped

    @defer.inlineCallbacks
    def test_twice_in_one_instant_is_once(self):
        """Two signals before the reactor ran again: one graceful close, no hard stop,
        and nothing logged by the handler itself."""
        process, stopped = self._process()
        logs = capture_logs(self)
        process._signal_received(signal.SIGTERM, None)
        process._signal_received(signal.SIGTERM, None)
        self.assertEqual(logs.records, [], "the signal handler logged")
        yield task.deferLater(reactor, 0, _nothing)
        yield task.deferLater(reactor, 0, _nothing)
        self.assertEqual(stopped, ["shutdown"])
        self.assertFalse(process.forced)
        self.assertIn("received SIGTERM: closing gracefully", logs.text())

    @defer.inlineCallbacks
    def test_a_second_after_the_first_was_handled_stops_at_once(self):
        """The first signal handled by the reactor, a second one stops at once."""
        process, stopped = self._process()
        process._signal_received(signal.SIGINT, None)
        yield task.deferLater(reactor, 0, _nothing)
        yield task.deferLater(reactor, 0, _nothing)
        process._signal_received(signal.SIGINT, None)
        yield task.deferLater(reactor, 0, _nothing)
        yield task.deferLater(reactor, 0, _nothing)
        self.assertEqual(stopped, ["shutdown", "reactor"])
        self.assertTrue(process.forced)


NEVER_SPIDER = '''
import os
import time

from twisted.internet import defer

from tinyscrapy import Spider


class HoldsTheReactor:
    """A pipeline that, on the item of /hold, holds the reactor for a moment after leaving
    a mark (two signals that come meanwhile come before the reactor runs again)."""

    def process_item(self, item):
        if item["url"].endswith("/hold"):
            open({mark!r}, "w").close()
            time.sleep(1.5)
        return item


class NeverSpider(Spider):
    name = "never"
    start_urls = [{url!r}]
    custom_settings = {{"CLOSE_GRACE_PERIOD": {grace}, "STATS_FILE": {stats!r},
                        "ITEM_PIPELINES": {{HoldsTheReactor: 100}}}}

    def parse(self, response):
        yield {{"url": response.url}}
        for path in ("a", "b"):
            yield response.follow(path, callback=self.parse_page)
        yield response.follow("never", callback=self.parse_never)

    def parse_page(self, response):
        yield {{"url": response.url}}

    def parse_never(self, response):
        open({reached!r}, "w").close()
        return defer.Deferred()

    def parse_hold(self, response):
        yield {{"url": response.url}}
'''


class SignalWhileADeferredNeverFiresTests(unittest.TestCase):
    """SIGTERM, SIGINT and SIGHUP sent to a crawl whose callback never returns: each
    closes it within the grace period; a second signal stops it at once."""

    timeout = 60

    def setUp(self):
        self.server = serve(self)
        self.url = self.server.add_page("/", links=["/a", "/b", "/never"])
        for path in ("/a", "/b", "/never", "/hold"):
            self.server.add_page(path)
        self.reached = os.path.abspath(self.mktemp())
        self.mark = os.path.abspath(self.mktemp())
        self.stats = os.path.abspath(self.mktemp() + ".json")
        self.feed = os.path.abspath(self.mktemp() + ".jsonl")

    def _spider(self, grace=1.0, url=None):
        path = os.path.abspath(self.mktemp() + ".py")
        with open(path, "w") as f:
            f.write(NEVER_SPIDER.format(url=url or self.url, grace=grace, stats=self.stats,
                                        reached=self.reached, mark=self.mark))
        return path

    def _signal_run(self, path, plan):
        """
        Run the spider and send signals: C{plan} is a list of C{(condition, signals)},
        each condition a callable or a string the child writes to stderr, each
        C{signals} the names to send at once when it holds.

        @return: the command's Deferred, with the time the first signal went out.
        """
        transports, sent = [], []
        pending = list(plan)
        d = run_command(reactor, ["runspider", path, "-O", self.feed], started=transports.append)

        def holds(condition):
            if isinstance(condition, str):
                return condition in b"".join(transports[0].proto.err).decode("utf-8",
                                                                            "replace")
            return condition()

        def poll():
            if pending and transports and holds(pending[0][0]):
                for name in pending.pop(0)[1]:
                    transports[0].signalProcess(name)
                sent.append(time.monotonic())
            if not pending:
                loop.stop()

        loop = task.LoopingCall(poll)
        loop.start(0.02)
        d.addBoth(_stop_loop, loop)
        d.addCallback(_with_time, sent)
        return d

    def _reached(self):
        return os.path.exists(self.reached)

    def _stats_of(self):
        with open(self.stats) as f:
            return json.load(f)

    def _items(self):
        with open(self.feed) as f:
            return sorted(json.loads(line)["url"].rsplit("/", 1)[-1] for line in f)

    @defer.inlineCallbacks
    def _closes_gracefully(self, name, grace=1.0):
        path = self._spider(grace)
        (code, _out, err), sent = yield self._signal_run(path, [(self._reached, [name])])
        ended = time.monotonic()
        self.assertEqual(code, 0, err)
        self.assertEqual(err.count(f"received SIG{name}: closing gracefully"), 1, err)
        self.assertLess(ended - sent[0], 2 * grace + 3.0, "the close took too long")
        stats = self._stats_of()
        self.assertEqual(stats["finish_reason"], "shutdown")
        self.assertEqual(stats["ledger/cancelled"], 1)
        self.assertEqual(stats["ledger/missing"], 0)
        self.assertEqual(self._items(), ["", "a", "b"])
        self.assertNotIn("Traceback", err)

    def test_sigterm_closes_within_the_grace_period(self):
        """SIGTERM: the stuck request is cancelled after the grace period, exit 0."""
        return self._closes_gracefully("TERM")

    def test_sigint_closes_within_the_grace_period(self):
        """SIGINT (Ctrl-C): the same."""
        return self._closes_gracefully("INT")

    def test_sighup_closes_like_sigterm(self):
        """SIGHUP (the terminal went away): closed like SIGTERM, not killed."""
        return self._closes_gracefully("HUP")

    def test_sigterm_with_the_default_grace_period(self):
        """With the default CLOSE_GRACE_PERIOD (4 s), a SIGTERM'd crawl ends inside the
        10 s a container runtime gives before SIGKILL."""
        return self._closes_gracefully("TERM", grace=4.0)

    @defer.inlineCallbacks
    def test_a_second_sigint_stops_at_once(self):
        """A second SIGINT, once the first was handled: a hard stop, exit 1."""
        path = self._spider(grace=30.0)
        (code, _out, err), _sent = yield self._signal_run(path, [
            (self._reached, ["INT"]), ("received SIGINT: closing gracefully", ["INT"])])
        self.assertEqual(code, 1, err)
        self.assertIn("received SIGINT again: stopping at once", err)

    @defer.inlineCallbacks
    def test_twice_in_one_instant_is_one_signal(self):
        """Two SIGINTs while the reactor is busy (one kill delivered to the process and
        to its group): one graceful close, exit 0."""
        url = self.server.add_page("/hold-home", links=["/hold", "/never"])
        path = self._spider(grace=1.0, url=url)
        with open(path) as f:
            text = f.read().replace('for path in ("a", "b"):', 'for path in ("hold",):')
        with open(path, "w") as f:
            f.write(text)
        (code, _out, err), _sent = yield self._signal_run(path, [
            (lambda: os.path.exists(self.mark), ["INT", "INT"])])
        self.assertEqual(code, 0, err)
        self.assertEqual(err.count("received SIGINT: closing gracefully"), 1, err)
        self.assertNotIn("stopping at once", err)
        self.assertEqual(self._stats_of()["finish_reason"], "shutdown")


def _stop_loop(result, loop):
    if loop.running:
        loop.stop()
    return result


def _with_time(result, sent):
    return result, sent


FAILING_OPEN = '''
from tinyscrapy import Spider


class Database:
    def open_spider(self):
        raise ConnectionRefusedError("no database on 127.0.0.1:1")

    def process_item(self, item):
        return item


class Stored(Spider):
    name = "stored"
    start_urls = [{url!r}]
    custom_settings = {{"ITEM_PIPELINES": {{Database: 100}}}}

    def parse(self, response):
        yield {{"url": response.url}}
'''


class FailingStartTests(unittest.TestCase):
    """A component that cannot start: one line, no traceback, exit 1."""

    timeout = 60

    @defer.inlineCallbacks
    def test_failing_open_spider_is_one_line(self):
        """A pipeline whose open_spider raises: one error line naming it, exit 1, nothing
        fetched."""
        server = serve(self)
        url = server.add_page("/")
        path = os.path.abspath(self.mktemp() + ".py")
        with open(path, "w") as f:
            f.write(FAILING_OPEN.format(url=url))
        code, _out, err = yield run_command(reactor, ["runspider", path])
        self.assertEqual(code, 1, err)
        errors = [line for line in err.splitlines() if "ERROR" in line]
        self.assertEqual(len(errors), 1, err)
        self.assertIn("Database.open_spider raised ConnectionRefusedError", errors[0])
        self.assertNotIn("Traceback", err)
        self.assertNotIn("FirstError", err)
        self.assertEqual(sum(server.hits.values()), 0)

    @defer.inlineCallbacks
    def test_asyncio_under_twisteds_reactor_exits_1(self):
        """A spider that awaits asyncio code (from a helper module) under the default
        reactor scrapes nothing: the crawl says why, naming TWISTED_REACTOR, exit 1."""
        server = serve(self)
        url = server.add_page("/")
        folder = os.path.abspath(self.mktemp())
        os.makedirs(folder)
        with open(os.path.join(folder, "asynchelper.py"), "w") as f:
            f.write("import asyncio\n\nasync def fetch_extra():\n"
                    "    await asyncio.sleep(0.01)\n    return {}\n")
        path = os.path.join(folder, "asyncspider.py")
        with open(path, "w") as f:
            f.write(f"from asynchelper import fetch_extra\nfrom tinyscrapy import Spider\n\n\n"
                    f"class AsyncSpider(Spider):\n    name = 'asyncspider'\n"
                    f"    start_urls = [{url!r}]\n\n    async def parse(self, response):\n"
                    f"        extra = await fetch_extra()\n"
                    f"        yield {{'url': response.url, **extra}}\n")
        code, _out, err = yield run_command(reactor, ["runspider", path], cwd=folder)
        self.assertEqual(code, 1, err)
        self.assertIn("nothing was scraped", err)
        self.assertIn("TWISTED_REACTOR", err)


class GraceIsBoundedTests(unittest.TestCase):
    """The setting itself."""

    def test_default_is_at_most_five_seconds(self):
        """CLOSE_GRACE_PERIOD defaults to at most 5 s, so that twice it fits in the 10 s
        between SIGTERM and SIGKILL."""
        from tinyscrapy.settings.default_settings import DEFAULTS
        self.assertGreater(DEFAULTS["CLOSE_GRACE_PERIOD"], 0)
        self.assertLessEqual(2 * DEFAULTS["CLOSE_GRACE_PERIOD"], 9)


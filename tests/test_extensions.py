"""
The built-in extensions as a set: EXTENSIONS_BASE in Scrapy's order at Scrapy's paths, each
switched off by its path (Scrapy's too) or its class; an extension whose C{from_crawler}
returns something else is one clear error at the start; CoreStats' counts, once; the
memory watch, the memory debugger and C{utils.trackref}; the debugging signals; the
periodic log; AutoThrottle's debug lines.
"""

import gc
import json
import logging
import os
import signal
import sys

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Spider, signals
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import NotConfigured, UsageError
from tinyscrapy.extensions.corestats import CoreStats
from tinyscrapy.extensions.debug import Debugger, StackTraceDump, engine_status
from tinyscrapy.extensions.memdebug import MemoryDebugger
from tinyscrapy.extensions.memusage import MemoryUsage
from tinyscrapy.extensions.periodic_log import PeriodicLog
from tinyscrapy.extensions.throttle import AutoThrottle
from tinyscrapy.http import HttpResponse
from tinyscrapy.middleware import ordered_paths
from tinyscrapy.settings import Settings
from tinyscrapy.statscollectors import StatsCollector
from tinyscrapy.utils import trackref
from tinyscrapy.utils.test import get_crawler

from .helpers import LinkSpider, crawl, needs_processes, run_python, serve
from .logs import capture_logs
from .servers import Delay
from .smtpserver import SMTPServer

MB = 1024 * 1024

# Scrapy 2.19's EXTENSIONS_BASE, in its order (its remote control is absent here)
SCRAPY_BASE = ["corestats.CoreStats", "logcount.LogCount", "telnet.TelnetConsole",
               "memusage.MemoryUsage", "memdebug.MemoryDebugger", "closespider.CloseSpider",
               "feedexport.FeedExporter", "logstats.LogStats", "spiderstate.SpiderState",
               "throttle.AutoThrottle"]


def extension_of(crawler, cls):
    return next((ext for ext in crawler.extensions.middlewares if isinstance(ext, cls)), None)


class ExtensionsBaseTests(unittest.TestCase):
    """EXTENSIONS_BASE and switching extensions off."""

    def test_scrapy_order_then_tinyscrapy_own(self):
        """Scrapy's built-ins at tinyscrapy's paths, in Scrapy's order, then the live line
        and the trace."""
        self.assertEqual(ordered_paths(Settings(), "EXTENSIONS"),
                         [f"tinyscrapy.extensions.{path}" for path in SCRAPY_BASE]
                         + ["tinyscrapy.extensions.logstats.Progress", "tinyscrapy.trace.Trace"])

    def test_each_switched_off_by_scrapy_path(self):
        """{"scrapy.extensions.<module>.<Class>": None} switches each built-in off."""
        for path in SCRAPY_BASE:
            settings = Settings({"EXTENSIONS": {f"scrapy.extensions.{path}": None}})
            enabled = ordered_paths(settings, "EXTENSIONS")
            self.assertNotIn(f"tinyscrapy.extensions.{path}", enabled)
            self.assertEqual(len(enabled), len(SCRAPY_BASE) + 1)

    def test_switched_off_by_class_and_remote_control_accepted(self):
        """The class itself set to None switches its path off; Scrapy's remote control set
        to None is nothing to do, and asking for it is a usage error."""
        settings = Settings({"EXTENSIONS": {
            CoreStats: None, "scrapy.extensions.remote_control.RemoteControl": None}})
        self.assertNotIn("tinyscrapy.extensions.corestats.CoreStats",
                         ordered_paths(settings, "EXTENSIONS"))
        settings = Settings({"EXTENSIONS": {
            "scrapy.extensions.remote_control.RemoteControl": 0}})
        error = self.assertRaises(UsageError, ordered_paths, settings, "EXTENSIONS")
        self.assertIn("aiohttp", str(error))

    @defer.inlineCallbacks
    def test_default_crawl(self):
        """A crawl with the defaults builds CoreStats, LogCount, MemoryUsage and LogStats
        (on a non-terminal); the ones not asked for are not built."""
        server = serve(self)
        crawler = yield crawl(LinkSpider, {}, start_urls=[server.add_page("/")])
        built = [type(ext).__name__ for ext in crawler.extensions.middlewares]
        self.assertEqual(built[:3], ["CoreStats", "LogCount", "MemoryUsage"])
        self.assertIn("LogStats", built)
        for absent in ("TelnetConsole", "MemoryDebugger", "CloseSpider", "SpiderState",
                       "AutoThrottle", "Trace"):
            self.assertNotIn(absent, built)
        self.assertIsNotNone(crawler.stats.get_value("memusage/max"))


class _ReturnsDeferred:
    @classmethod
    def from_crawler(cls, crawler):
        return defer.succeed(cls())


class _ReturnsNumber:
    @classmethod
    def from_crawler(cls, crawler):
        return 42


class _ReturnsNothing:
    @classmethod
    def from_crawler(cls, crawler):
        crawler.signals.connect(cls.spider_opened, signals.spider_opened)

    @staticmethod
    def spider_opened():
        pass


class _AsyncFromCrawler:
    @classmethod
    async def from_crawler(cls, crawler):
        return cls()


class NotAnExtensionTests(unittest.TestCase):
    """from_crawler must return the extension itself."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")

    def test_one_clear_error_each(self):
        """A Deferred, a coroutine, a number, None: a UsageError at the start naming the
        class and what it returned; nothing is fetched."""
        cases = {_ReturnsDeferred: "returned a Deferred", _AsyncFromCrawler: "returned a "
                 "coroutine", _ReturnsNumber: "returned 42", _ReturnsNothing: "returned None"}
        for cls, said in cases.items():
            crawler = Crawler(LinkSpider, Settings({"EXTENSIONS": {cls: 500}}))
            failure = self.failureResultOf(crawler.crawl(start_urls=[self.start]), UsageError)
            self.assertIn(cls.__qualname__, str(failure.value))
            self.assertIn(said, str(failure.value))
        self.assertEqual(self.server.hits, {})

    @defer.inlineCallbacks
    def test_command_line_says_it_in_one_line(self):
        """runspider with such an extension: exit 2, one line, no traceback."""
        needs_processes()
        path = os.path.abspath(self.mktemp()) + ".py"
        with open(path, "w", encoding="utf-8") as f:
            f.write("import tinyscrapy\n\n"
                    "class Bad:\n"
                    "    @classmethod\n"
                    "    def from_crawler(cls, crawler):\n"
                    "        return 42\n\n"
                    "class One(tinyscrapy.Spider):\n"
                    "    name = 'one'\n"
                    f"    start_urls = [{self.start!r}]\n"
                    "    custom_settings = {'EXTENSIONS': {Bad: 0}}\n")
        from twisted.internet import reactor
        code, _, err = yield run_python(reactor, ["-m", "tinyscrapy", "runspider", path])
        self.assertEqual(code, 2, err)
        lines = [line for line in err.splitlines() if line.strip()]
        self.assertEqual(len(lines), 1, err)
        self.assertIn("Bad.from_crawler returned 42", lines[0])
        self.assertNotIn("Traceback", err)


class CoreStatsTests(unittest.TestCase):
    """The times, and the counts kept once."""

    def test_scrapy_counters_when_called(self):
        """Called as Scrapy calls them, the counters count."""
        stats = StatsCollector()
        ext = CoreStats(stats)
        ext.spider_opened(None)
        ext.item_scraped({}, None)
        ext.response_received(None)
        ext.item_dropped({}, None, ZeroDivisionError())
        ext.spider_closed(None, "finished")
        values = stats.get_stats()
        self.assertEqual((values["item_scraped_count"], values["response_received_count"],
                          values["item_dropped_count"],
                          values["item_dropped_reasons_count/ZeroDivisionError"],
                          values["finish_reason"]), (1, 1, 1, 1, "finished"))
        self.assertGreaterEqual(values["elapsed_time_seconds"], 0.0)
        self.assertLessEqual(values["start_time"], values["finish_time"])

    @defer.inlineCallbacks
    def test_counted_once_in_a_crawl(self):
        """In a crawl, each page and item is counted once, CoreStats on or off."""
        server = serve(self)
        pages = [f"/p{i}" for i in range(5)]
        start = server.add_page("/", links=pages)
        for path in pages:
            server.add_page(path)
        for extensions in ({}, {"scrapy.extensions.corestats.CoreStats": None}):
            crawler = yield crawl(LinkSpider, {"EXTENSIONS": extensions}, start_urls=[start])
            self.assertEqual(crawler.stats.get_value("item_scraped_count"), 6)
            self.assertEqual(crawler.stats.get_value("response_received_count"), 6)
        self.assertIsNone(crawler.stats.get_value("start_time"))  # the last one: off


class SlowPages(Spider):
    """Visits C{pages} slow pages one at a time, an item each."""

    name = "slow"

    def parse(self, response):
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


class MemoryUsageTests(unittest.TestCase):
    """The memory watch in real crawls, with the measure replaced."""

    def setUp(self):
        self.server = serve(self)
        pages = [f"/p{i}" for i in range(6)]
        self.start = self.server.add_page("/", links=pages)
        for path in pages:
            self.server.add(path, Delay(0.1, b"<html>slow</html>"))
        self.logs = capture_logs(self)

    def measure(self, megabytes):
        self.patch(MemoryUsage, "get_virtual_size", _fixed_size(megabytes * MB))

    def settings(self, **more):
        values = {"CONCURRENT_REQUESTS": 1, "LOG_LEVEL": "INFO",
                  "MEMUSAGE_CHECK_INTERVAL_SECONDS": 0.05}
        values.update(more)
        return values

    @defer.inlineCallbacks
    def test_limit_closes_the_crawl(self):
        """Over MEMUSAGE_LIMIT_MB: one ERROR line, memusage/limit_reached, the finish reason
        memusage_exceeded, the requests still waiting cancelled."""
        self.measure(250)
        crawler = yield crawl(SlowPages, self.settings(MEMUSAGE_LIMIT_MB=10),
                              start_urls=[self.start])
        stats = crawler.stats
        self.assertEqual(stats.get_value("finish_reason"), "memusage_exceeded")
        self.assertEqual(stats.get_value("memusage/limit_reached"), 1)
        self.assertEqual(stats.get_value("memusage/max"), 250 * MB)
        self.assertEqual(stats.get_value("memusage/startup"), 250 * MB)
        errors = self.logs.messages(logging.ERROR)
        self.assertEqual(errors, ["Memory usage exceeded 10MiB. Shutting down Scrapy..."])
        self.assertEqual(stats.get_value("ledger/missing"), 0)

    @defer.inlineCallbacks
    def test_warning_once_and_the_crawl_goes_on(self):
        """Over MEMUSAGE_WARNING_MB: one WARNING, one signal, and the crawl finishes."""
        self.measure(75)
        crawler = Crawler(SlowPages, Settings(self.settings(MEMUSAGE_WARNING_MB=50)))
        warnings = []
        crawler.signals.connect(_append_to(warnings), signals.memusage_warning_reached)
        yield crawler.crawl(start_urls=[self.start])
        self.assertEqual(len(warnings), 1)
        self.assertEqual(crawler.stats.get_value("memusage/warning_reached"), 1)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        self.assertEqual(self.logs.messages(logging.WARNING), ["Memory usage reached 50MiB"])

    @defer.inlineCallbacks
    def test_below_the_limit_logs_the_peak(self):
        """Under the limit, each check logs the peak at INFO."""
        self.measure(25)
        crawler = yield crawl(SlowPages, self.settings(MEMUSAGE_LIMIT_MB=100),
                              start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        self.assertIn("Peak memory usage is 25MiB", self.logs.messages())
        self.assertIsNone(crawler.stats.get_value("memusage/limit_reached"))

    @defer.inlineCallbacks
    def test_limit_report_mailed_before_the_close_ends(self):
        """MEMUSAGE_NOTIFY_MAIL: the report reaches the SMTP server before the crawl's
        Deferred fires."""
        smtp = SMTPServer().start()
        self.addCleanup(smtp.stop)
        self.measure(250)
        crawler = yield crawl(SlowPages, self.settings(
            MEMUSAGE_LIMIT_MB=10, MEMUSAGE_NOTIFY_MAIL=["ops@example.com"],
            MAIL_HOST="127.0.0.1", MAIL_PORT=smtp.port, BOT_NAME="books"),
            start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("memusage/limit_notified"), 1)
        self.assertEqual(len(smtp.messages), 1)
        message = smtp.messages[0]
        self.assertTrue(message["Subject"].startswith(
            "books terminated: memory usage exceeded 10.0MiB at "))
        self.assertIn("ENGINE STATUS", message.get_payload())

    def test_disabled(self):
        """MEMUSAGE_ENABLED=False: not built."""
        self.assertRaises(NotConfigured, MemoryUsage.from_crawler,
                          get_crawler(settings_dict={"MEMUSAGE_ENABLED": False}))

    def test_real_measure(self):
        """Without a replacement, the measure is the process's peak memory, in bytes."""
        size = MemoryUsage.from_crawler(get_crawler()).get_virtual_size()
        self.assertGreater(size, 10 * MB)


def _fixed_size(size):
    def get_virtual_size(self):
        return size
    return get_virtual_size


def _append_to(found):
    def receiver():
        found.append(1)
    return receiver


class Tracked(trackref.object_ref):
    """A class of the test's own, tracked."""


class TrackrefTests(unittest.TestCase):
    """Live references once tracking is on."""

    def setUp(self):
        trackref.start_tracking()

    def test_live_instances_counted_and_forgotten(self):
        """Instances are counted while alive; the table names them; the oldest is found."""
        first, second = Tracked(), Tracked()
        self.assertEqual(len(trackref.live_refs[Tracked]), 2)
        self.assertIs(trackref.get_oldest("Tracked"), first)
        self.assertEqual(set(trackref.iter_all("Tracked")), {first, second})
        self.assertRegex(trackref.format_live_refs(),
                         r"Tracked +2   oldest: \d+s ago")
        self.assertNotIn("Tracked", trackref.format_live_refs(ignore=Tracked))
        del first, second
        gc.collect()
        self.assertEqual(len(trackref.live_refs[Tracked]), 0)
        self.assertIsNone(trackref.get_oldest("Tracked"))

    def test_the_crawl_objects_are_tracked(self):
        """Requests, responses and spiders are object_refs."""
        from tinyscrapy import Request
        request = Request("http://127.0.0.1/")
        response = HttpResponse(request.url, 200, {}, b"", request)
        spider = Spider(name="tracked")
        for each in (request, response, spider):
            self.assertIn(each, trackref.live_refs[type(each)])

    @defer.inlineCallbacks
    def test_off_until_switched_on(self):
        """In a fresh process, tracking is off: object_ref has no __new__ of its own and a
        crawl's objects are not remembered."""
        needs_processes()
        from twisted.internet import reactor
        code, out, err = yield run_python(reactor, ["-c", (
            "from tinyscrapy import Request, Spider\n"
            "from tinyscrapy.utils import trackref\n"
            "keep = [Request(f'http://127.0.0.1/{i}') for i in range(100)]\n"
            "assert '__new__' not in vars(trackref.object_ref)\n"
            "assert not trackref.tracking() and not list(trackref.live_refs.items())\n"
            "trackref.start_tracking()\n"
            "keep.append(Request('http://127.0.0.1/tracked'))\n"
            "print(len(trackref.live_refs[Request]))\n")])
        self.assertEqual((code, out.strip()), (0, "1"), err)


class MemoryDebuggerTests(unittest.TestCase):
    """memdebug/ stats at close."""

    def test_off_by_default(self):
        """MEMDEBUG_ENABLED is off by default."""
        self.assertRaises(NotConfigured, MemoryDebugger.from_crawler, get_crawler())

    @defer.inlineCallbacks
    def test_crawl_stores_live_references(self):
        """The spider (made before the extension) and a request kept alive are counted."""
        server = serve(self)
        kept = []

        class Keeper(Spider):
            name = "keeper"

            def parse(self, response):
                kept.append(response.request)

        crawler = yield crawl(Keeper, {"MEMDEBUG_ENABLED": True},
                              start_urls=[server.add_page("/")])
        stats = crawler.stats
        self.assertEqual(stats.get_value("memdebug/live_refs/Keeper"), 1)
        self.assertGreaterEqual(stats.get_value("memdebug/live_refs/Request"), 1)
        self.assertIsNotNone(stats.get_value("memdebug/gc_garbage_count"))


class DebugTests(unittest.TestCase):
    """The debugging extensions, on the signals Scrapy uses."""

    def setUp(self):
        if not hasattr(signal, "SIGUSR2"):
            raise unittest.SkipTest("no SIGUSR2 on this platform")
        for signum in (signal.SIGUSR2, signal.SIGQUIT):
            self.addCleanup(signal.signal, signum, signal.getsignal(signum))

    @defer.inlineCallbacks
    def test_stack_trace_dump_on_sigusr2(self):
        """SIGUSR2 during a crawl logs the engine status, the live references and the
        threads' stacks; the handler is put back when the engine stops."""
        before = signal.getsignal(signal.SIGUSR2)

        class Signalling(Spider):
            name = "signalling"

            def parse(self, response):
                os.kill(os.getpid(), signal.SIGUSR2)

        logs = capture_logs(self)
        server = serve(self)
        yield crawl(Signalling, {"EXTENSIONS": {"scrapy.extensions.debug.StackTraceDump": 0},
                                 "LOG_LEVEL": "INFO"}, start_urls=[server.add_page("/")])
        dumps = [m for m in logs.messages() if m.startswith("Dumping stack trace")]
        self.assertEqual(len(dumps), 1)
        for part in ("Execution engine status", "engine.spider.name", "signalling",
                     "Live References", "# Thread: MainThread"):
            self.assertIn(part, dumps[0])
        self.assertEqual(signal.getsignal(signal.SIGUSR2), before)

    def test_installs_handlers(self):
        """Built, StackTraceDump handles SIGUSR2 and SIGQUIT; Debugger SIGUSR2."""
        dump = StackTraceDump.from_crawler(get_crawler())
        self.assertEqual(signal.getsignal(signal.SIGQUIT), dump.dump_stacktrace)
        debugger = Debugger()
        self.assertEqual(signal.getsignal(signal.SIGUSR2), debugger._enter_debugger)

    def test_debugger_enters_pdb_where_it_was(self):
        """The handler starts pdb in the interrupted frame's caller."""
        entered = []

        class FakePdb:
            def set_trace(self, frame):
                entered.append(frame)

        self.patch(sys.modules["tinyscrapy.extensions.debug"], "Pdb", FakePdb)
        frame = sys._getframe()
        Debugger()._enter_debugger(signal.SIGUSR2, frame)
        self.assertEqual(entered, [frame.f_back])

    def test_engine_status_without_engine(self):
        """Parts that cannot be read say so instead of failing."""
        checks = dict(engine_status(None))
        self.assertEqual(checks["engine.spider.name"], "AttributeError (exception)")


class PeriodicLogTests(unittest.TestCase):
    """The stats as JSON lines."""

    def setUp(self):
        self.server = serve(self)
        pages = [f"/p{i}" for i in range(3)]
        self.start = self.server.add_page("/", links=pages)
        for path in pages:
            self.server.add(path, Delay(0.1, b"<html>slow</html>"))

    def lines(self, logs):
        return [json.loads(r.getMessage()) for r in logs.records
                if r.name == "tinyscrapy.extensions.periodic_log"]

    @defer.inlineCallbacks
    def test_stats_delta_and_time(self):
        """Enabled with all three parts: a line at the start, every interval and at the
        close; the deltas add up to the final counts."""
        logs = capture_logs(self)
        crawler = yield crawl(SlowPages, {
            "EXTENSIONS": {"scrapy.extensions.periodic_log.PeriodicLog": 0},
            "PERIODIC_LOG_STATS": {"include": ["downloader/"]}, "PERIODIC_LOG_DELTA": True,
            "PERIODIC_LOG_TIMING_ENABLED": True, "LOGSTATS_INTERVAL": 0.1,
            "CONCURRENT_REQUESTS": 1, "LOG_LEVEL": "INFO"}, start_urls=[self.start])
        lines = self.lines(logs)
        self.assertGreaterEqual(len(lines), 3)
        self.assertEqual(sorted(lines[-1]), ["delta", "stats", "time"])
        self.assertTrue(all(key.startswith("downloader/") for key in lines[-1]["stats"]))
        total = sum(line["delta"].get("response_received_count", 0) for line in lines)
        self.assertEqual(total, crawler.stats.get_value("response_received_count"))
        self.assertEqual(lines[-1]["time"]["log_interval"], 0.1)
        self.assertGreaterEqual(lines[-1]["time"]["elapsed"], 0)

    def test_not_built_unless_asked(self):
        """Nothing asked for, or LOGSTATS_INTERVAL 0: not built; a word for a part is a
        boolean."""
        self.assertRaises(NotConfigured, PeriodicLog.from_crawler, get_crawler())
        self.assertRaises(NotConfigured, PeriodicLog.from_crawler, get_crawler(
            settings_dict={"PERIODIC_LOG_STATS": True, "LOGSTATS_INTERVAL": 0}))
        ext = PeriodicLog.from_crawler(get_crawler(settings_dict={"PERIODIC_LOG_DELTA": "True"}))
        self.assertTrue(ext.ext_delta_enabled)

    def test_include_and_exclude(self):
        """A name is kept when it holds no exclude and, if include is given, an include."""
        ext = PeriodicLog(StatsCollector())
        self.assertTrue(ext.param_allowed("downloader/request_count", ["downloader/"], []))
        self.assertFalse(ext.param_allowed("downloader/response_bytes", ["downloader/"],
                                           ["bytes"]))
        self.assertTrue(ext.param_allowed("item_scraped_count", [], ["downloader/"]))


class AutoThrottleDebugTests(unittest.TestCase):
    """AUTOTHROTTLE_DEBUG lines in a real crawl, and Scrapy's hooks."""

    @defer.inlineCallbacks
    def test_debug_lines_as_scrapy_writes_them(self):
        """One line per response, in Scrapy's format."""
        server = serve(self)
        pages = [f"/p{i}" for i in range(3)]
        start = server.add_page("/", links=pages)
        for path in pages:
            server.add_page(path)
        logs = capture_logs(self)
        yield crawl(LinkSpider, {"AUTOTHROTTLE_ENABLED": True, "AUTOTHROTTLE_DEBUG": True,
                                 "AUTOTHROTTLE_START_DELAY": 0.01, "LOG_LEVEL": "INFO"},
                    start_urls=[start])
        lines = [m for m in logs.messages() if m.startswith("slot: ")]
        self.assertEqual(len(lines), 4)
        self.assertRegex(lines[0], r"^slot: 127\.0\.0\.1 \| conc: 1 \| delay: +\d+ ms \([+-]\d+\) "
                                   r"\| latency: +\d+ ms \| size: +\d+ bytes$")

    def test_scrapy_hooks_on_a_plain_slot(self):
        """_response_downloaded with meta download_slot and download_latency moves a slot
        that is plain data; autothrottle_dont_adjust_delay leaves it."""
        crawler = get_crawler(settings_dict={"AUTOTHROTTLE_ENABLED": True,
                                             "AUTOTHROTTLE_TARGET_CONCURRENCY": 2.0})
        throttle = AutoThrottle.from_crawler(crawler)

        class PlainSlot:
            delay = 1.0
            transferring = ()

        class Downloader:
            slots = {"foo": PlainSlot()}

        class Engine:
            downloader = Downloader()

        crawler.engine = Engine()
        throttle._spider_opened(Spider(name="s"))
        self.assertEqual(crawler.engine.downloader._delay, 5.0)
        from tinyscrapy import Request
        request = Request("http://127.0.0.1/", meta={"download_slot": "foo",
                                                     "download_latency": 1.0})
        throttle._response_downloaded(HttpResponse(request.url, 200, {}, b"", request),
                                      request, None)
        self.assertEqual(Downloader.slots["foo"].delay, 0.75)
        request.meta["autothrottle_dont_adjust_delay"] = True
        throttle._response_downloaded(HttpResponse(request.url, 200, {}, b"", request),
                                      request, None)
        self.assertEqual(Downloader.slots["foo"].delay, 0.75)

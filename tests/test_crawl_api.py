"""
The crawl's API as Scrapy 2.19 has it: settings as a mapping, the engine's and the
crawler's methods, the middleware hooks, and the components named by Scrapy's settings.
"""

import json
import logging
import os
import warnings

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import Request, Spider, signals
from tinyscrapy.core.engine import ExecutionEngine
from tinyscrapy.crawler import Crawler, CrawlerRunner
from tinyscrapy.dupefilters import RFPDupeFilter
from tinyscrapy.exceptions import (
    DontCloseSpider,
    IgnoreRequest,
    NotConfigured,
    ScrapyDeprecationWarning,
    UsageError,
)
from tinyscrapy.settings import SETTINGS_PRIORITIES, BaseSettings, Settings, SettingValueError

from .helpers import crawl, crawl_and_collect, serve
from .logs import capture_logs


class SettingsMappingTests(unittest.TestCase):
    """Settings are a mutable mapping with priorities, as Scrapy's."""

    def test_dict_and_iteration(self):
        """dict(settings) and iteration give every name, defaults included."""
        settings = Settings({"MY_NAME": 1})
        as_dict = dict(settings)
        self.assertEqual(as_dict["MY_NAME"], 1)
        self.assertEqual(as_dict["CONCURRENT_REQUESTS"], 16)
        self.assertEqual(set(settings), set(as_dict))
        self.assertEqual(len(settings), len(as_dict))

    def test_priorities(self):
        """Scrapy's priority ladder, by name or number; a lower one never overwrites."""
        settings = BaseSettings()
        settings.set("A", 1, "spider")
        settings.set("A", 2, "project")
        self.assertEqual((settings["A"], settings.getpriority("A")), (1, 30))
        settings.set("A", 3, 35)
        self.assertEqual(settings.getpriority("A"), 35)
        self.assertEqual(settings.maxpriority(), 35)
        self.assertEqual(SETTINGS_PRIORITIES["addon"], 15)
        self.assertIsNone(settings["MISSING"])

    def test_component_priority_dicts(self):
        """Scrapy's helpers for component dicts treat a class and a path to it (Scrapy's or
        tinyscrapy's) as one component; getwithbase keeps priorities, so that
        build_component_list lets a project's entry win over the base one it names."""
        from tinyscrapy.downloadermiddlewares.retry import RetryMiddleware
        from tinyscrapy.downloadermiddlewares.useragent import UserAgentMiddleware
        from tinyscrapy.utils.conf import build_component_list
        retry = "scrapy.downloadermiddlewares.retry.RetryMiddleware"
        settings = Settings({"DOWNLOADER_MIDDLEWARES": {
            retry: 999, "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None}})
        names = build_component_list(settings.getwithbase("DOWNLOADER_MIDDLEWARES"))
        self.assertEqual(names[-1], "tinyscrapy.downloadermiddlewares.retry.RetryMiddleware")
        self.assertEqual(len([n for n in names if n.endswith("RetryMiddleware")]), 1)
        self.assertFalse([n for n in names if n.endswith("UserAgentMiddleware")])
        settings.setdefault_in_component_priority_dict(
            "DOWNLOADER_MIDDLEWARES", RetryMiddleware, 5)
        self.assertEqual(settings["DOWNLOADER_MIDDLEWARES"][retry], 999)  # already there
        settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", RetryMiddleware, 5)
        self.assertEqual(settings["DOWNLOADER_MIDDLEWARES"][RetryMiddleware], 5)
        self.assertNotIn(retry, settings["DOWNLOADER_MIDDLEWARES"])
        self.assertEqual(settings.getpriority("DOWNLOADER_MIDDLEWARES"), 20)

        class MyRetry(RetryMiddleware):
            pass

        settings.replace_in_component_priority_dict(
            "DOWNLOADER_MIDDLEWARES", RetryMiddleware, MyRetry)
        self.assertEqual(settings["DOWNLOADER_MIDDLEWARES"][MyRetry], 5)
        self.assertRaises(KeyError, settings.replace_in_component_priority_dict,
                          "DOWNLOADER_MIDDLEWARES", UserAgentMiddleware, MyRetry)
        merged = settings.get_component_priority_dict_with_base("DOWNLOADER_MIDDLEWARES")
        self.assertIsNone(merged["scrapy.downloadermiddlewares.useragent.UserAgentMiddleware"])
        self.assertNotIn("tinyscrapy.downloadermiddlewares.useragent.UserAgentMiddleware",
                         merged)

    def test_setdefault_lists_and_base(self):
        """setdefault, add_to_list, remove_from_list and getwithbase behave as Scrapy's."""
        settings = Settings()
        self.assertEqual(settings.setdefault("MINE", [1]), [1])
        self.assertEqual(settings.setdefault("MINE", [2]), [1])
        settings.add_to_list("MINE", 2)
        settings.add_to_list("MINE", 2)
        self.assertEqual(settings.getlist("MINE"), [1, 2])
        settings.remove_from_list("MINE", 1)
        self.assertEqual(settings["MINE"], [2])
        self.assertRaises(ValueError, settings.remove_from_list, "MINE", 9)
        settings.set("EXTENSIONS", {"my.Ext": 5})
        merged = settings.getwithbase("EXTENSIONS")
        self.assertIsInstance(merged, BaseSettings)
        self.assertEqual(merged["my.Ext"], 5)
        self.assertIn("tinyscrapy.extensions.corestats.CoreStats", merged)

    def test_frozen_copies(self):
        """A frozen copy refuses changes; copy() and copy_to_dict() do not share lists."""
        settings = Settings({"L": [1]})
        frozen = settings.frozencopy()
        self.assertRaises(TypeError, frozen.set, "L", [2])
        self.assertRaises(TypeError, frozen.__setitem__, "L", [2])
        copied = settings.copy()
        copied["L"].append(2)
        self.assertEqual(settings["L"], [1])
        plain = settings.copy_to_dict()
        plain["L"].append(3)
        self.assertEqual(settings["L"], [1])

    def test_typed_errors_are_value_errors(self):
        """A bad value is a ValueError (Scrapy's) naming the setting."""
        settings = Settings({"CONCURRENT_REQUESTS": "many", "X": "maybe"})
        e = self.assertRaises(ValueError, settings.getint, "CONCURRENT_REQUESTS")
        self.assertIsInstance(e, SettingValueError)
        self.assertIn("CONCURRENT_REQUESTS", str(e))
        self.assertRaises(ValueError, settings.getbool, "X")
        self.assertEqual(Settings({"D": '{"a": 1}'}).getdictorlist("D"), {"a": 1})
        self.assertEqual(Settings({"D": "a,b"}).getdictorlist("D"), ["a", "b"])

    def test_unsupported_scrapy_setting_is_warned_about_by_name(self):
        """A setting of Scrapy's that tinyscrapy does not act on is warned about, with the
        reason, and never guessed to be a typo of another; one Scrapy no longer reads
        (an older project's REQUEST_FINGERPRINTER_IMPLEMENTATION) passes without a word."""
        logs = capture_logs(self, "tinyscrapy")
        settings = Settings({"AWS_REGION_NAME": "eu-west-1", "DOWNLOAD_DELAYY": 1,
                             "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7"})
        crawler = Crawler(_Idle, settings)
        return crawler.crawl().addCallback(self._cb_warned, logs)

    def _cb_warned(self, _, logs):
        text = logs.text()
        self.assertIn("setting AWS_REGION_NAME is Scrapy's, and tinyscrapy does not act on "
                      "it", text)
        self.assertNotIn("AWS_REGION_NAME (did you mean", text)
        self.assertIn("DOWNLOAD_DELAYY (did you mean DOWNLOAD_DELAY?)", text)
        self.assertEqual([m for m in logs.messages(logging.WARNING)
                          if "REQUEST_FINGERPRINTER_IMPLEMENTATION" in m], [])


class _Idle(Spider):
    name = "idle"

    def start_requests(self):
        return iter(())


class EngineApiTests(unittest.TestCase):
    """The engine's Scrapy API, in a real crawl."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/", links=[f"/p{i}" for i in range(20)])
        for i in range(20):
            self.server.add_page(f"/p{i}", links=[f"/q{i}"])
            self.server.add_page(f"/q{i}")

    @defer.inlineCallbacks
    def test_close_spider_scrapy_form(self):
        """engine.close_spider(spider, reason) closes the crawl with that reason, and
        warns as Scrapy 2.19 does."""

        class Stopper(Spider):
            name = "stopper"
            custom_settings = {"CONCURRENT_REQUESTS": 1}

            def parse(self, response):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    self.crawler.engine.close_spider(self, "enough")
                self.caught = [w.category for w in caught]
                yield from response.follow_all(css="a")

        crawler = yield crawl(Stopper, start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("finish_reason"), "enough")
        self.assertIn(ScrapyDeprecationWarning, crawler.spider.caught)
        self.assertIsNone(crawler.stats.get_value("spider_exceptions/TypeError"))
        self.assertLess(crawler.stats.get_value("response_received_count"), 10)

    @defer.inlineCallbacks
    def test_close_spider_async(self):
        """close_spider_async(reason=...), run from a signal receiver, closes the crawl
        and completes once it has closed."""
        closed = []

        class Stopper(Spider):
            name = "stopper"

            def parse(self, response):
                yield {"page": response.url}
                yield from response.follow_all(css="a")

        def scraped(item, spider):
            if not closed:
                d = defer.Deferred.fromCoroutine(
                    spider.crawler.engine.close_spider_async(reason="done here"))
                closed.append(d)

        crawler = Crawler(Stopper, Settings({"LOG_LEVEL": "WARNING"}))
        crawler.signals.connect(scraped, signals.item_scraped)
        yield crawler.crawl(start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("finish_reason"), "done here")
        yield closed[0]  # completes too, once the crawl has closed

    @defer.inlineCallbacks
    def test_download_takes_no_place_under_max(self):
        """engine.download() from a callback at CONCURRENT_REQUESTS=1 does not deadlock:
        the request goes through the downloader middlewares, outside the scheduler."""

        class Fetcher(Spider):
            name = "fetcher"
            custom_settings = {"CONCURRENT_REQUESTS": 1}

            async def parse(self, response):
                extra = await self.crawler.engine.download(Request(response.urljoin("/q3")))
                other = await self.crawler.engine.download_async(
                    Request(response.urljoin("/q4")))
                return {"extra": extra.url, "status": other.status,
                        "ua": extra.request.headers.get("User-Agent")}

        crawler, items = yield crawl_and_collect(Fetcher, start_urls=[self.start])
        self.assertEqual(items[0]["extra"], self.server.url("/q3"))
        self.assertEqual(items[0]["status"], 200)
        self.assertTrue(items[0]["ua"])  # the downloader middlewares ran
        self.assertEqual(self.server.hits["/q3"], 1)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")

    @defer.inlineCallbacks
    def test_pause_and_idle(self):
        """pause() starts nothing new until unpause(); spider_is_idle() and
        needs_backout() say what they mean."""
        seen = {}

        class Pauser(Spider):
            name = "pauser"
            custom_settings = {"CONCURRENT_REQUESTS": 2}

            def parse(self, response):
                engine = self.crawler.engine
                if "paused" not in seen:
                    engine.pause()
                    seen["paused"] = engine.needs_backout()
                    seen["idle"] = engine.spider_is_idle()
                    engine.crawler.reactor.callLater(0.05, engine.unpause)
                yield from response.follow_all(css="a")

        crawler = yield crawl(Pauser, start_urls=[self.start])
        self.assertEqual(seen, {"paused": True, "idle": False})
        self.assertEqual(crawler.stats.get_value("response_received_count"), 41)

    def test_engine_built_from_the_crawler(self):
        """ExecutionEngine(crawler, callback) builds its parts from the settings."""
        crawler = Crawler(_Idle, Settings({"DUPEFILTER_CLASS": _CountingFilter}))
        crawler.spider = _Idle.from_crawler(crawler)
        engine = ExecutionEngine(crawler, lambda spider: None)
        self.assertIsInstance(engine.scheduler.dupefilter, _CountingFilter)
        self.assertIs(crawler.downloader, engine.downloader)
        self.assertIs(engine.scraper.engine, engine)
        self.assertIs(engine.slot.scheduler, engine.scheduler)


class _CountingFilter(RFPDupeFilter):
    """A duplicate filter of a project's own: it counts its calls, and drops /q3."""

    def request_seen(self, request):
        self.calls = getattr(self, "calls", 0) + 1
        return request.url.endswith("/q3") or super().request_seen(request)


class _ListScheduler:
    """A scheduler of Scrapy's interface only: no base class, no len(), no size()."""

    @classmethod
    def from_crawler(cls, crawler):
        return cls()

    def __init__(self):
        self.waiting, self.urls = [], set()

    def has_pending_requests(self):
        return bool(self.waiting)

    def enqueue_request(self, request):
        if request.url in self.urls:
            return False
        self.urls.add(request.url)
        self.waiting.append(request)
        return True

    def next_request(self):
        return self.waiting.pop(0) if self.waiting else None


class ComponentSettingsTests(unittest.TestCase):
    """Components named by Scrapy's settings are the ones the crawl uses."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/", links=["/a", "/b", "/q3"])
        self.server.add_page("/a", links=["/b"])
        self.server.add_page("/b", links=["/a"])
        self.server.add_page("/q3")

    @defer.inlineCallbacks
    def test_dupefilter_class_decides(self):
        """DUPEFILTER_CLASS is asked of every request (the early follow_all check steps
        aside for it), and log() counts each duplicate."""

        class Links(Spider):
            name = "links"

            def parse(self, response):
                yield from response.follow_all(css="a")

        crawler = yield crawl(Links, {"DUPEFILTER_CLASS": _CountingFilter},
                              start_urls=[self.start])
        dupefilter = crawler.engine.scheduler.dupefilter
        self.assertEqual(dupefilter.calls, 5)  # the links of /, /a and /b
        self.assertEqual(self.server.hits["/q3"], 0)
        self.assertEqual(crawler.stats.get_value("dupefilter/filtered"),
                         crawler.stats.get_value("ledger/duplicate"))

    @defer.inlineCallbacks
    def test_dupefilter_class_with_jobdir(self):
        """With --jobdir the settings' duplicate filter decides too."""

        class Links(Spider):
            name = "links"

            def parse(self, response):
                yield from response.follow_all(css="a")

        jobdir = self.mktemp()
        crawler = yield crawl(Links, {"DUPEFILTER_CLASS": _CountingFilter, "JOBDIR": jobdir},
                              start_urls=[self.start])
        self.assertEqual(self.server.hits["/q3"], 0)
        self.assertGreater(crawler.engine.scheduler.dupefilter.calls, 0)

    @defer.inlineCallbacks
    def test_scheduler_of_scrapys_interface(self):
        """SCHEDULER may name a class with only Scrapy's three methods: it counts as a
        BaseScheduler, and the crawl runs to its close through it (stats and the
        close-time ledger ask it no more than it has)."""
        from tinyscrapy.core.scheduler import BaseScheduler
        self.assertIsInstance(_ListScheduler(), BaseScheduler)

        class Links(Spider):
            name = "links"

            def parse(self, response):
                yield from response.follow_all(css="a")

        crawler = yield crawl(Links, {"SCHEDULER": _ListScheduler, "LOGSTATS_INTERVAL": 0.01},
                              start_urls=[self.start])
        self.assertIsInstance(crawler.engine.scheduler, _ListScheduler)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        self.assertEqual(sorted(self.server.hits), ["/", "/a", "/b", "/q3"])
        self.assertTrue(all(count == 1 for count in self.server.hits.values()))
        # closed early, with requests still in a scheduler that cannot count them: they
        # are the scheduler's (cancelled), not missing
        crawler = yield crawl(Links, {"SCHEDULER": _ListScheduler,
                                      "CLOSESPIDER_PAGECOUNT": 1}, start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("ledger/missing"), 0)
        self.assertGreater(crawler.stats.get_value("ledger/cancelled"), 0)

    def test_scrapy_paths_in_class_settings(self):
        """A scrapy.* path in a class setting names tinyscrapy's class at that place."""
        crawler = Crawler(_Idle, Settings({
            "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter"}))
        crawler.spider = _Idle.from_crawler(crawler)
        engine = ExecutionEngine(crawler)
        self.assertIs(type(engine.scheduler.dupefilter), RFPDupeFilter)

    def test_rfp_dupefilter_keeps_its_file(self):
        """RFPDupeFilter(path) keeps requests.seen (private), and a new one reads it."""
        folder = self.mktemp()
        os.makedirs(folder)
        first = RFPDupeFilter(folder)
        self.assertFalse(first.request_seen(Request("http://h/a")))
        self.assertTrue(first.request_seen(Request("http://h/a#frag")))
        first.close("finished")
        path = os.path.join(folder, "requests.seen")
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
        second = RFPDupeFilter(folder)
        self.assertTrue(second.request_seen(Request("http://h/a")))
        self.assertFalse(second.request_seen(Request("http://h/b")))
        second.close("finished")
        with open(path, "ab") as f:
            f.write(b"\x00\x08abc")  # a record cut short by a crash
        third = RFPDupeFilter(folder)
        self.assertEqual(len(third), 2)
        third.close("finished")
        self.assertEqual(len(RFPDupeFilter().request_fingerprint(Request("http://h/"))), 16)


class SpiderInputTests(unittest.TestCase):
    """process_spider_input is called before each callback, as in Scrapy."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/", links=["/a", "/refuse"])
        self.server.add_page("/a")
        self.server.add_page("/refuse")
        self.server.add_page("/missing", status=404)

    @defer.inlineCallbacks
    def test_handled_exception_leaves_no_error(self):
        """An exception a process_spider_exception handles (it returns an iterable) is
        not logged, counted or signalled, and does not count for CLOSESPIDER_ERRORCOUNT,
        as in Scrapy; its items are scraped. One nobody handles is, once."""

        class Recover:
            def process_spider_exception(self, response, exception):
                if response.url.endswith("/a"):
                    return [{"recovered": response.url}]
                return None

        class Raises(Spider):
            name = "raises"

            def parse(self, response):
                if response.url == self.start_urls[0]:
                    yield response.follow("/a")
                    yield response.follow("/refuse")
                    return
                raise ValueError("boom")

        logs = capture_logs(self, "tinyscrapy")
        crawler, items = yield crawl_and_collect(Raises, {
            "SPIDER_MIDDLEWARES": {Recover: 500}, "CLOSESPIDER_ERRORCOUNT": 2},
            start_urls=[self.start])
        self.assertEqual(items, [{"recovered": self.server.url("/a")}])
        self.assertEqual(crawler.stats.get_value("spider_exceptions/ValueError"), 1)
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
        errors = [m for m in logs.messages(logging.ERROR) if "Spider error" in m]
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("/refuse", errors[0])

    @defer.inlineCallbacks
    def test_input_hook_called_and_refusal_goes_to_the_errback(self):
        """A middleware's process_spider_input sees every page; what it raises goes to
        the request's errback instead of the callback."""
        calls = []

        class Refuser:
            def process_spider_input(self, response, spider):
                calls.append(response.url)
                if response.url.endswith("/refuse"):
                    raise IgnoreRequest("refused by the middleware")

        class Links(Spider):
            name = "links"
            custom_settings = {"SPIDER_MIDDLEWARES": {Refuser: 500}}

            def parse(self, response):
                yield {"page": response.url}
                yield from response.follow_all(css="a", errback=self.failed)

            def failed(self, failure):
                yield {"failed": failure.request.url, "why": str(failure.value)}

        crawler, items = yield crawl_and_collect(Links, start_urls=[self.start])
        self.assertEqual(sorted(calls), sorted(self.server.url(p) for p in
                                               ("/", "/a", "/refuse")))
        self.assertIn({"failed": self.server.url("/refuse"),
                       "why": "refused by the middleware"}, items)
        self.assertNotIn({"page": self.server.url("/refuse")}, items)

    @defer.inlineCallbacks
    def test_wrong_return_is_one_clear_error(self):
        """A process_spider_input that returns something is an error naming the hook."""

        class Returner:
            def process_spider_input(self, response, spider):
                return []

        class One(Spider):
            name = "one"
            custom_settings = {"SPIDER_MIDDLEWARES": {Returner: 500}}

            def parse(self, response):
                yield {"page": response.url}

        crawler, items = yield crawl_and_collect(One, start_urls=[self.start])
        self.assertEqual(items, [])
        self.assertEqual(crawler.stats.get_value("spider_exceptions/MiddlewareError"), 1)
        self.assertEqual(crawler.stats.get_value("ledger/failed/MiddlewareError"), 1)

    @defer.inlineCallbacks
    def test_httperror_middleware_switched_off(self):
        """Without HttpErrorMiddleware a 404 reaches the callback, as in Scrapy."""

        class One(Spider):
            name = "one"
            custom_settings = {"SPIDER_MIDDLEWARES": {
                "tinyscrapy.spidermiddlewares.httperror.HttpErrorMiddleware": None}}

            def parse(self, response):
                yield {"status": response.status}

        _, items = yield crawl_and_collect(One, start_urls=[self.server.url("/missing")])
        self.assertEqual(items, [{"status": 404}])
        _, items = yield crawl_and_collect(_StatusSpider,
                                           start_urls=[self.server.url("/missing")])
        self.assertEqual(items, [])


class _StatusSpider(Spider):
    name = "status"

    def parse(self, response):
        yield {"status": response.status}


def _json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class Tagger:
    """An item pipeline an add-on enables."""

    def process_item(self, item):
        item["tagged_by"] = "addon"
        return item


class TaggingAddon:
    """An add-on: enables L{Tagger}, gives DOWNLOAD_TIMEOUT a default the project can
    still override, and says where the spiders are before any crawler exists."""

    def update_settings(self, settings):
        settings["ITEM_PIPELINES"][Tagger] = 500
        settings.set("DOWNLOAD_TIMEOUT", 7.0, "addon")
        settings.set("RETRY_TIMES", 9, "addon")

    @classmethod
    def update_pre_crawler_settings(cls, settings):
        settings.set("SPIDER_MODULES", ["tests.test_crawl_api"], "addon")


class SwitchedOffAddon:
    def __init__(self):
        raise NotConfigured("no key given")


class _OneItem(Spider):
    name = "one_item"

    def parse(self, response):
        yield {"url": response.url}


class AddonTests(unittest.TestCase):
    """ADDONS: each add-on's update_settings runs before anything is built."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")

    @defer.inlineCallbacks
    def test_addon_settings_under_the_project(self):
        """An add-on's values apply at the addon priority: the project's own win; its
        pipeline runs; get_addon finds it; one that raises NotConfigured is left out,
        with one warning naming it and its reason."""
        logs = capture_logs(self, "tinyscrapy.addons")
        crawler, items = yield crawl_and_collect(_OneItem, {
            "ADDONS": {TaggingAddon: 10, SwitchedOffAddon: 20},
            "RETRY_TIMES": 1}, start_urls=[self.start])
        self.assertEqual(items, [{"url": self.start, "tagged_by": "addon"}])
        self.assertEqual(crawler.settings.getfloat("DOWNLOAD_TIMEOUT"), 7.0)
        self.assertEqual(crawler.settings.getint("RETRY_TIMES"), 1)
        self.assertIsInstance(crawler.get_addon(TaggingAddon), TaggingAddon)
        self.assertIsNone(crawler.get_addon(SwitchedOffAddon))
        warned = logs.messages(logging.WARNING)
        self.assertEqual(len(warned), 1, warned)
        self.assertIn("SwitchedOffAddon'>: no key given", warned[0])

    def test_pre_crawler_settings_find_the_spiders(self):
        """A runner applies update_pre_crawler_settings first: its spider loader finds a
        spider by name in the modules the add-on named."""
        runner = CrawlerRunner({"ADDONS": {TaggingAddon: 1}})
        self.assertEqual(runner.settings.getlist("SPIDER_MODULES"), ["tests.test_crawl_api"])
        self.assertIs(runner.create_crawler("one_item").spidercls, _OneItem)

    def test_failing_addon_is_one_clear_error(self):
        """An add-on whose update_settings raises stops the start with a UsageError that
        names it, the exception and where it was raised."""

        class Broken:
            def update_settings(self, settings):
                raise KeyError("NO_SUCH")

        with self.assertRaises(UsageError) as caught:
            Crawler(_OneItem, Settings({"ADDONS": {Broken: 1}}))
        message = str(caught.exception)
        self.assertIn(".<locals>.Broken failed to set up: KeyError: 'NO_SUCH'", message)
        self.assertIn("test_crawl_api.py, line", message)

    def test_bad_addon_path_is_one_clear_error(self):
        """An add-on path that does not import stops the start with a UsageError."""
        with self.assertRaises(UsageError) as caught:
            Crawler(_OneItem, Settings({"ADDONS": {"no.such.Addon": 1}}))
        self.assertIn("no.such.Addon", str(caught.exception))


class CrawlerLifecycleTests(unittest.TestCase):
    """The crawler's Scrapy API: crawling, once only, the coroutine forms."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")

    @defer.inlineCallbacks
    def test_crawl_once_and_crawling(self):
        """crawling is True while the crawl runs; a second crawl() is refused."""
        seen = []

        class Watch(_OneItem):
            def parse(self, response):
                seen.append(self.crawler.crawling)
                yield from super().parse(response)

        crawler = Crawler(Watch, Settings({"LOG_LEVEL": "WARNING", "FEEDS": {}}))
        yield crawler.crawl(start_urls=[self.start])
        self.assertEqual(seen, [True])
        self.assertFalse(crawler.crawling)
        failure = yield self.assertFailure(crawler.crawl(), RuntimeError)
        self.assertIn("Crawler.crawl() more than once", str(failure))
        failure = yield self.assertFailure(defer.ensureDeferred(crawler.crawl_async()),
                                           RuntimeError)
        self.assertIn("Crawler.crawl_async() more than once", str(failure))

    @defer.inlineCallbacks
    def test_coroutine_forms(self):
        """crawl_async completes with the crawl; stop_async closes a crawl that would run
        forever (close_if_idle off) with the reason shutdown."""
        crawler = Crawler(_OneItem, Settings({"LOG_LEVEL": "WARNING", "FEEDS": {}}))
        yield defer.ensureDeferred(crawler.crawl_async(start_urls=[self.start]))
        self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")

        class Forever(_OneItem):
            stopping = False

            def parse(self, response):
                self.crawler.signals.connect(self.keep_open, signals.spider_idle)
                yield from super().parse(response)

            def keep_open(self):
                if not self.stopping:  # the first idle: stop from outside, once
                    self.stopping = True
                    reactor.callLater(0, defer.ensureDeferred, self.crawler.stop_async())
                raise DontCloseSpider

        crawler = Crawler(Forever, Settings({"LOG_LEVEL": "WARNING", "FEEDS": {}}))
        yield crawler.crawl(start_urls=[self.start])
        self.assertEqual(crawler.stats.get_value("finish_reason"), "shutdown")

    @defer.inlineCallbacks
    def test_from_crawler_returning_none(self):
        """A spider's or a component's from_crawler that forgets to return is one usage
        error naming it (a TypeError too, as in Scrapy)."""
        from tinyscrapy.utils.misc import ReturnedNone

        class Forgets(_OneItem):
            @classmethod
            def from_crawler(cls, crawler, *args, **kwargs):
                super().from_crawler(crawler, *args, **kwargs)

        class NoFilter:
            @classmethod
            def from_crawler(cls, crawler):
                return None

        for spidercls, settings, name in ((Forgets, {}, "Forgets"),
                                          (_OneItem, {"DUPEFILTER_CLASS": NoFilter},
                                           "NoFilter")):
            crawler = Crawler(spidercls, Settings({"LOG_LEVEL": "WARNING", **settings}))
            failure = yield self.assertFailure(crawler.crawl(), ReturnedNone)
            self.assertIsInstance(failure, (UsageError, TypeError))
            self.assertIn(f"{name}.from_crawler returned None", str(failure))

    def test_arguments(self):
        """A spider instance is refused; Scrapy's init_reactor flag is accepted."""
        self.assertRaises(ValueError, Crawler, _OneItem())
        crawler = Crawler(_OneItem, {"LOG_LEVEL": "WARNING"}, True)
        self.assertIs(crawler.spidercls, _OneItem)


class _Stamper:
    """A downloader middleware, a spider middleware and a pipeline in one class."""

    def process_request(self, request):
        return None

    def process_spider_output(self, response, result):
        return result

    def process_item(self, item):
        return item


class ManagerTests(unittest.TestCase):
    """The component managers as Scrapy's: middlewares are instances, methods the hooks."""

    @defer.inlineCallbacks
    def test_managers_hold_instances_in_order(self):
        """Each manager's middlewares are the built instances, paths and methods in the
        order Scrapy calls them; crawler.extensions is an ExtensionManager."""
        from tinyscrapy.core.downloader.middleware import DownloaderMiddlewareManager
        from tinyscrapy.core.spidermw import SpiderMiddlewareManager
        from tinyscrapy.extension import ExtensionManager
        from tinyscrapy.middleware import MiddlewareManager
        from tinyscrapy.pipelines import ItemPipelineManager
        server = serve(self)
        start = server.add_page("/")
        path = f"{__name__}._Stamper"
        crawler = yield crawl(_OneItem, {
            "DOWNLOADER_MIDDLEWARES": {path: 1000}, "SPIDER_MIDDLEWARES": {path: 1000},
            "ITEM_PIPELINES": {path: 1}}, start_urls=[start])
        downloadermw = crawler.engine.downloader.middleware
        spidermw = crawler.engine.scraper.spidermw
        itemproc = crawler.engine.scraper.itemproc
        for manager, cls in ((downloadermw, DownloaderMiddlewareManager),
                             (spidermw, SpiderMiddlewareManager),
                             (itemproc, ItemPipelineManager),
                             (crawler.extensions, ExtensionManager)):
            self.assertIsInstance(manager, cls)
            self.assertIsInstance(manager, MiddlewareManager)
            self.assertIsInstance(manager.middlewares, tuple)
            self.assertEqual(len(manager.paths), len(manager.middlewares))
        self.assertIsInstance(downloadermw.middlewares[-1], _Stamper)
        self.assertEqual(downloadermw.paths[-1], path)
        # process_request first to last, process_response last to first (Scrapy's order)
        requests = list(downloadermw.methods["process_request"])
        self.assertEqual(requests[-1], downloadermw.middlewares[-1].process_request)
        self.assertEqual(list(spidermw.methods["process_spider_output"])[0],
                         spidermw.middlewares[-1].process_spider_output)
        self.assertEqual(list(itemproc.methods["process_item"]),
                         [itemproc.middlewares[0].process_item])
        self.assertIs(crawler.get_item_pipeline(_Stamper), itemproc.middlewares[0])
        self.assertIs(crawler.get_spider_middleware(_Stamper), spidermw.middlewares[-1])

    @defer.inlineCallbacks
    def test_extensions_built_before_the_engine(self):
        """As in Scrapy, extensions are built before the engine and before the settings
        freeze: one may still set a setting the crawl then reads."""
        seen = {}

        class Early:
            @classmethod
            def from_crawler(cls, crawler):
                seen["engine"] = crawler.engine
                crawler.settings.set("CONCURRENT_REQUESTS", 3)
                return cls()

        server = serve(self)
        start = server.add_page("/")
        crawler = yield crawl(_OneItem, {"EXTENSIONS": {Early: 10}}, start_urls=[start])
        self.assertIsNone(seen["engine"])
        self.assertEqual(crawler.engine.max, 3)
        self.assertIsInstance(crawler.get_extension(Early), Early)

    def test_get_extension_before_crawl(self):
        """get_extension before the crawl starts is Scrapy's RuntimeError."""
        crawler = Crawler(_OneItem, Settings(), reactor)
        with self.assertRaisesRegex(RuntimeError, "after the extension manager"):
            crawler.get_extension(Tagger)

    def test_subclass_reads_its_own_list(self):
        """A manager subclass's _get_mwlist_from_settings decides what from_crawler
        builds, in the order it gives."""
        from tinyscrapy.middleware import MiddlewareManager

        class Managed(MiddlewareManager):
            component_name = "managed thing"

            @classmethod
            def _get_mwlist_from_settings(cls, settings):
                return settings.getlist("MANAGED")

        crawler = Crawler(_OneItem, Settings({"MANAGED": [Tagger, _Stamper]}), reactor)
        manager = Managed.from_crawler(crawler)
        self.assertEqual([type(mw) for mw in manager.middlewares], [Tagger, _Stamper])
        self.assertIs(manager.crawler, crawler)


class SummaryLineTests(unittest.TestCase):
    """The line a person reads at the end names only feeds that were written."""

    @defer.inlineCallbacks
    def test_feed_exporter_switched_off(self):
        """FEEDS set but the FeedExporter switched off: the line says the items were not
        stored, and no file is written."""
        server = serve(self)
        start = server.add_page("/")
        out = os.path.join(self.mktemp(), "items.jsonl")
        logs = capture_logs(self, "tinyscrapy")
        yield crawl(_OneItem, {
            "LOG_LEVEL": "INFO", "FEEDS": {out: {"format": "jsonlines"}},
            "EXTENSIONS": {"scrapy.extensions.feedexport.FeedExporter": None}},
            start_urls=[start])
        (line,) = [m for m in logs.messages(logging.INFO) if m.startswith("one_item: 1 pages")]
        self.assertTrue(line.endswith("items not stored (the feed exporter is switched off)"),
                        line)
        self.assertFalse(os.path.exists(out))


class RunnerTests(unittest.TestCase):
    """CrawlerRunner and CrawlerProcess as Scrapy's."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/")

    def test_process_is_a_runner(self):
        """CrawlerProcess is a CrawlerRunner; create_crawler takes a class, a spider's
        name (SPIDER_MODULES), a dotted path or a crawler, and refuses a spider."""
        from tinyscrapy.crawler import CrawlerProcess
        self.assertTrue(issubclass(CrawlerProcess, CrawlerRunner))
        runner = CrawlerRunner({"SPIDER_MODULES": ["tests.test_crawl_api"]})
        self.assertIs(runner.create_crawler("one_item").spidercls, _OneItem)
        self.assertIs(runner.create_crawler("tests.test_crawl_api._OneItem").spidercls,
                      _OneItem)
        crawler = runner.create_crawler(_OneItem)
        self.assertIs(runner.create_crawler(crawler), crawler)
        self.assertRaises(ValueError, runner.create_crawler, _OneItem())
        self.assertRaises(KeyError, runner.create_crawler, "no_such_spider")

    @defer.inlineCallbacks
    def test_crawlers_and_bootstrap_failed(self):
        """crawlers holds the running crawls; bootstrap_failed tells a crawl whose spider
        could not be made."""

        class Broken(_OneItem):
            def __init__(self, *args, **kwargs):
                raise ValueError("bad argument")

        runner = CrawlerRunner({"LOG_LEVEL": "WARNING", "FEEDS": {}})
        d = runner.crawl(_OneItem, start_urls=[self.start])
        self.assertEqual(len(runner.crawlers), 1)
        yield d
        self.assertEqual(runner.crawlers, set())
        self.assertFalse(runner.bootstrap_failed)
        yield self.assertFailure(runner.crawl(Broken), ValueError)
        self.assertTrue(runner.bootstrap_failed)


class _Shop(Spider):
    name = "shop"
    allowed_domains = ["shop.example"]


class _Blog(Spider):
    name = "blog"
    allowed_domains = ["blog.example"]


class _Anything(Spider):
    name = "anything"


class _NamedLoader:
    """A SPIDER_LOADER_CLASS of Scrapy's protocol only (no .spiders attribute)."""

    @classmethod
    def from_settings(cls, settings):
        return cls()

    def load(self, name):
        if name != "one":
            raise KeyError(f"Spider not found: {name}")
        return _OneItem

    def list(self):
        return ["one"]

    def find_by_request(self, request):
        return ["one"]


class SpiderLoaderTests(unittest.TestCase):
    """SPIDER_LOADER_CLASS and SPIDER_LOADER_WARN_ONLY."""

    def test_loader_class_from_the_settings(self):
        """get_spider_loader builds SPIDER_LOADER_CLASS; resolve_spider asks it by name."""
        from tinyscrapy.spiderloader import get_spider_loader, resolve_spider
        loader = get_spider_loader(Settings({"SPIDER_LOADER_CLASS": _NamedLoader}))
        self.assertIsInstance(loader, _NamedLoader)
        self.assertIs(resolve_spider("one", loader), _OneItem)
        self.assertRaises(UsageError, resolve_spider, "two", loader)

    def test_find_by_request(self):
        """find_by_request names the spiders whose handles_request(request) is true:
        the host is one of allowed_domains, or below one (a spider with none handles
        nothing)."""
        from tinyscrapy.spiderloader import SpiderLoader
        loader = SpiderLoader(["tests.test_crawl_api"])
        self.assertEqual(loader.find_by_request(Request("http://www.shop.example/a")),
                         ["shop"])
        self.assertEqual(loader.find_by_request(Request("http://blog.example/")), ["blog"])
        self.assertEqual(loader.find_by_request(Request("http://shop.example.evil/")), [])
        self.assertFalse(_Anything.handles_request(Request("http://shop.example/")))

    def test_downloader_stats_setting(self):
        """DOWNLOADER_STATS=False switches Scrapy's DownloaderStats middleware off."""
        from tinyscrapy.downloadermiddlewares.stats import DownloaderStats
        from tinyscrapy.utils.test import get_crawler
        self.assertIsInstance(DownloaderStats.from_crawler(get_crawler()), DownloaderStats)
        self.assertRaises(NotConfigured, DownloaderStats.from_crawler,
                          get_crawler(settings_dict={"DOWNLOADER_STATS": False}))

    def test_warn_only(self):
        """A spider module that does not import stops the loader, or with
        SPIDER_LOADER_WARN_ONLY is warned about and skipped."""
        from tinyscrapy.spiderloader import SpiderLoader
        modules = ["tests.no_such_spiders", "tests.test_crawl_api"]
        self.assertRaises(UsageError, SpiderLoader.from_settings,
                          Settings({"SPIDER_MODULES": modules}))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loader = SpiderLoader.from_settings(Settings({"SPIDER_MODULES": modules,
                                                          "SPIDER_LOADER_WARN_ONLY": True}))
        self.assertIn("one_item", loader.list())
        self.assertEqual([w.category for w in caught], [RuntimeWarning])
        self.assertIn("tests.no_such_spiders", str(caught[0].message))
        with self.assertRaises(KeyError) as missing:
            loader.load("nope")
        self.assertIn("Spider not found: nope", str(missing.exception))


ADDON_PROJECT = {
    "tinyscrapy.cfg": "[settings]\ndefault = shop.settings\n",
    "shop/__init__.py": "",
    "shop/settings.py": 'BOT_NAME = "shop"\nADDONS = {"shop.addons.Where": 1}\n',
    "shop/addons.py": '''\
class Stamp:
    def process_item(self, item):
        item["stamped"] = True
        return item


class Where:
    """Says where the spiders are, and stamps every item."""

    @classmethod
    def update_pre_crawler_settings(cls, settings):
        settings.set("SPIDER_MODULES", ["shop.hidden"], "addon")

    def update_settings(self, settings):
        settings["ITEM_PIPELINES"]["shop.addons.Stamp"] = 100
''',
    "shop/hidden/__init__.py": '''\
from tinyscrapy import Spider


class Pages(Spider):
    name = "pages"

    def parse(self, response):
        yield {"url": response.url}
''',
}


class AddonCommandTests(unittest.TestCase):
    """An add-on of a project's settings, from the command line."""

    @defer.inlineCallbacks
    def test_crawl_by_name_where_an_addon_says(self):
        """crawl NAME and list find spiders where update_pre_crawler_settings says."""
        from .helpers import run_command
        server = serve(self)
        start = server.add_page("/")
        root = os.path.abspath(self.mktemp())
        for path, text in ADDON_PROJECT.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        out = os.path.join(root, "items.jsonl")
        code, _, err = yield run_command(
            reactor, ["crawl", "pages", "-a", f"start_urls={start}", "-O", out], cwd=root)
        self.assertEqual(code, 0, err)
        with open(out) as f:
            self.assertEqual([json.loads(line) for line in f],
                             [{"url": start, "stamped": True}])
        code, out, err = yield run_command(reactor, ["list"], cwd=root)
        self.assertEqual((code, out), (0, "pages\n"), err)


class _QueueCrawler:
    """What a priority queue asks of a crawler, for queues built alone."""

    def __init__(self, clock):
        self.reactor = clock
        self.spider = None
        self.settings = Settings()


class PriorityQueueTests(unittest.TestCase):
    """Scrapy's priority queues (SCHEDULER_PRIORITY_QUEUE) over its memory and disk
    queues (SCHEDULER_MEMORY_QUEUE)."""

    def setUp(self):
        from twisted.internet.task import Clock
        self.clock = Clock()
        self.crawler = _QueueCrawler(self.clock)

    def _urls(self, queue):
        urls = []
        for _ in range(100):
            request = queue.pop()
            if request is None:
                return urls
            urls.append(request.url.rsplit("/", 1)[1])
        self.fail("the queue never ran dry")

    def test_scrapy_priority_queue_orders(self):
        """Highest priority first; within one, the memory queue's order (FIFO, LIFO)."""
        from tinyscrapy.pqueues import ScrapyPriorityQueue
        from tinyscrapy.squeues import FifoMemoryQueue, LifoMemoryQueue
        for queue_cls, expected in ((FifoMemoryQueue, ["h1", "h2", "a", "b", "c"]),
                                    (LifoMemoryQueue, ["h2", "h1", "c", "b", "a"])):
            queue = ScrapyPriorityQueue.from_crawler(self.crawler, queue_cls, "")
            for name, priority in (("a", 0), ("h1", 5), ("b", 0), ("h2", 5), ("c", 0)):
                queue.push(Request(f"http://h/{name}", priority=priority))
            self.assertEqual(len(queue), 5)
            self.assertEqual(queue.peek().url, f"http://h/{expected[0]}")
            self.assertEqual(self._urls(queue), expected)
            self.assertEqual(queue.close(), [])

    def test_not_before_waits_out_of_the_queues(self):
        """A request whose meta["not_before"] is ahead (a retry's back-off) is not handed
        out before then; next_ready_time says when."""
        from tinyscrapy.pqueues import ScrapyPriorityQueue
        from tinyscrapy.squeues import FifoMemoryQueue
        queue = ScrapyPriorityQueue(self.crawler, FifoMemoryQueue, "")
        queue.push(Request("http://h/later", meta={"not_before": 10.0}))
        self.assertEqual((len(queue), queue.pop(), queue.next_ready_time()), (1, None, 10.0))
        self.clock.advance(10)
        self.assertEqual(self._urls(queue), ["later"])

    def test_disk_queues_come_back(self):
        """Over a disk queue, close() gives the priorities that still hold requests, and
        a queue opened with them hands those requests out again."""
        from tinyscrapy.pqueues import ScrapyPriorityQueue
        from tinyscrapy.squeues import PickleLifoDiskQueue
        folder = self.mktemp()
        queue = ScrapyPriorityQueue(self.crawler, PickleLifoDiskQueue, folder)
        for name, priority in (("a", 1), ("b", 1), ("c", 3)):
            queue.push(Request(f"http://h/{name}", priority=priority))
        self.assertEqual(queue.pop().url, "http://h/c")
        startprios = queue.close()
        self.assertEqual(startprios, [-1])
        again = ScrapyPriorityQueue(self.crawler, PickleLifoDiskQueue, folder, startprios)
        self.assertEqual(self._urls(again), ["b", "a"])

    def test_downloader_aware_takes_the_idlest_slot(self):
        """DownloaderAwarePriorityQueue hands out a request of the slot with the fewest
        downloads in flight."""
        from tinyscrapy.pqueues import DownloaderAwarePriorityQueue
        from tinyscrapy.squeues import FifoMemoryQueue
        queue = DownloaderAwarePriorityQueue.from_crawler(self.crawler, FifoMemoryQueue, "")
        for url in ("http://busy/1", "http://busy/2", "http://idle/1"):
            queue.push(Request(url))
        busy = Request("http://busy/0")
        self.crawler.slots.acquire(busy)  # one download of "busy" in flight
        self.assertEqual(queue.pop().url, "http://idle/1")
        self.assertEqual(queue.pop().url, "http://busy/1")
        self.assertEqual((len(queue), "busy" in queue, "idle" in queue), (1, True, False))

    def test_slot_aware_takes_the_memory_queues_order(self):
        """The default queue keeps its own requests: LifoMemoryQueue makes each slot's
        priority last in first out; a queue class of another kind is refused."""
        from tinyscrapy.pqueues import SlotAwarePriorityQueue
        from tinyscrapy.squeues import LifoMemoryQueue, PickleFifoDiskQueue
        queue = SlotAwarePriorityQueue.from_crawler(self.crawler, LifoMemoryQueue, "")
        for name in "abc":
            queue.push(Request(f"http://h/{name}"))
        self.assertEqual(self._urls(queue), ["c", "b", "a"])
        with self.assertRaises(UsageError) as caught:
            SlotAwarePriorityQueue.from_crawler(self.crawler, PickleFifoDiskQueue, "")
        self.assertIn("ScrapyPriorityQueue", str(caught.exception))

    @defer.inlineCallbacks
    def test_crawls_through_scrapys_queues(self):
        """A crawl with each of Scrapy's queues (named by Scrapy's paths) fetches every
        page of two hosts once and closes."""
        server, other = serve(self), serve(self, "127.0.0.2")
        pages = [server.add_page(f"/{n}") for n in range(4)]
        pages += [other.add_page(f"/{n}") for n in range(4)]
        start = server.add_page("/", links=pages)

        class Links(Spider):
            name = "links"

            def parse(self, response):
                yield from response.follow_all(css="a")

        for pq in ("scrapy.pqueues.ScrapyPriorityQueue",
                   "scrapy.pqueues.DownloaderAwarePriorityQueue"):
            server.hits.clear()
            other.hits.clear()
            crawler = yield crawl(Links, {
                "SCHEDULER_PRIORITY_QUEUE": pq,
                "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.LifoMemoryQueue"},
                start_urls=[start])
            self.assertEqual(crawler.stats.get_value("finish_reason"), "finished")
            self.assertEqual(sorted(server.hits.values()) + sorted(other.hits.values()),
                             [1] * 9, pq)

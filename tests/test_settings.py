"""
Settings: the priority ladder, typed values and their errors, components built from
settings, what is logged at start, and the documentation of every setting.
"""

import logging
import os
import re
import textwrap

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import NotConfigured, Spider
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import UsageError
from tinyscrapy.middleware import build_ordered, ordered_paths
from tinyscrapy.settings import DEFAULTS, Settings, parse_value
from tinyscrapy.utils.misc import build, load_object

from .helpers import ROOT, crawl, run_command
from .logs import capture_logs


class Idle(Spider):
    """A spider with nothing to fetch: its crawl opens and closes at once."""

    name = "idle"

    def start_requests(self):
        return iter(())


class LadderTests(unittest.TestCase):
    """Defaults, then the project, then custom_settings, then -s."""

    def test_higher_layer_wins_whatever_the_order(self):
        """A lower layer set later never overwrites a higher one."""
        settings = Settings()
        settings.set("DOWNLOAD_DELAY", 3, "cmdline")
        settings.set("DOWNLOAD_DELAY", 2, "spider")
        settings.set("DOWNLOAD_DELAY", 1, "project")
        self.assertEqual(settings.getfloat("DOWNLOAD_DELAY"), 3.0)
        self.assertEqual(settings.priority("DOWNLOAD_DELAY"), "cmdline")
        self.assertEqual(settings.priority("DEPTH_LIMIT"), "default")

    def test_crawler_applies_custom_settings_between_project_and_cmdline(self):
        """custom_settings beat the project's settings and lose to -s."""

        class Custom(Idle):
            custom_settings = {"DEPTH_LIMIT": 2, "CONCURRENT_REQUESTS": 3}

        settings = Settings({"DEPTH_LIMIT": 1, "CONCURRENT_REQUESTS": 1, "URLLENGTH_LIMIT": 99})
        settings.set("CONCURRENT_REQUESTS", 7, "cmdline")
        crawler = Crawler(Custom, settings)
        self.assertEqual(crawler.settings.getint("DEPTH_LIMIT"), 2)
        self.assertEqual(crawler.settings.getint("CONCURRENT_REQUESTS"), 7)
        self.assertEqual(crawler.settings.getint("URLLENGTH_LIMIT"), 99)
        self.assertEqual(settings.getint("DEPTH_LIMIT"), 1, "the process settings unchanged")

    @defer.inlineCallbacks
    def test_frozen_once_the_crawl_starts(self):
        """After the start, setting anything raises."""
        crawler = yield crawl(Idle)
        self.assertTrue(crawler.settings.frozen)
        self.assertRaises(TypeError, crawler.settings.set, "DEPTH_LIMIT", 5)

    def test_defaults_are_never_shared(self):
        """Changing a dict read from one Settings changes neither DEFAULTS nor another one."""
        first = Settings()
        first.get("DEFAULT_REQUEST_HEADERS")["X-Mine"] = "1"
        self.assertNotIn("X-Mine", DEFAULTS["DEFAULT_REQUEST_HEADERS"])
        self.assertNotIn("X-Mine", Settings().get("DEFAULT_REQUEST_HEADERS"))
        copied = first.copy()
        copied.get("DEFAULT_REQUEST_HEADERS")["X-Copy"] = "1"
        self.assertNotIn("X-Copy", first.get("DEFAULT_REQUEST_HEADERS"))

    def test_overridden_lists_only_what_was_set(self):
        """overridden() holds the names set above the defaults."""
        settings = Settings({"DEPTH_LIMIT": 3})
        self.assertEqual(settings.overridden(), {"DEPTH_LIMIT": 3})


class ValueTests(unittest.TestCase):
    """Typed getters, C{-s} parsing and validation before the start."""

    def test_word_where_a_number_belongs(self):
        """getint and getfloat raise a UsageError naming the setting."""
        settings = Settings({"CONCURRENT_REQUESTS": "many", "DOWNLOAD_DELAY": "slow"})
        error = self.assertRaises(UsageError, settings.getint, "CONCURRENT_REQUESTS")
        self.assertIn("CONCURRENT_REQUESTS='many'", str(error))
        self.assertRaises(UsageError, settings.getfloat, "DOWNLOAD_DELAY")

    def test_numbers_from_text(self):
        """Numbers given as text (a project file, an environment) are accepted."""
        settings = Settings({"CONCURRENT_REQUESTS": "4", "DOWNLOAD_DELAY": "0.5"})
        self.assertEqual(settings.getint("CONCURRENT_REQUESTS"), 4)
        self.assertEqual(settings.getfloat("DOWNLOAD_DELAY"), 0.5)

    def test_fraction_is_not_a_whole_number(self):
        """2.5 requests at once is an error, not a silent 2."""
        settings = Settings({"CONCURRENT_REQUESTS": 2.5})
        self.assertRaises(UsageError, settings.getint, "CONCURRENT_REQUESTS")
        self.assertEqual(Settings({"CONCURRENT_REQUESTS": 2.0}).getint("CONCURRENT_REQUESTS"), 2)

    def test_booleans(self):
        """Booleans as Scrapy reads them (True/true/False/false, 0, 1); anything else errs."""
        for value, expected in (("true", True), ("False", False), (1, True), (0, False),
                                ("True", True), (False, False), ("1", True), ("0", False)):
            self.assertIs(Settings({"RANDOMIZE_DOWNLOAD_DELAY": value})
                          .getbool("RANDOMIZE_DOWNLOAD_DELAY"), expected, value)
        for value in ("maybe", "on", "off", "yes", "TRUE", 2, "2", {"a": 1}):
            self.assertRaises(UsageError, Settings({"RANDOMIZE_DOWNLOAD_DELAY": value})
                              .getbool, "RANDOMIZE_DOWNLOAD_DELAY")

    def test_lists_and_dicts(self):
        """Lists from commas or JSON; dicts from JSON; the wrong shape is an error."""
        self.assertEqual(Settings({"FEED_EXPORT_FIELDS": "a, b"}).getlist("FEED_EXPORT_FIELDS"),
                         ["a", "b"])
        self.assertEqual(Settings({"FEED_EXPORT_FIELDS": '["a","b"]'})
                         .getlist("FEED_EXPORT_FIELDS"), ["a", "b"])
        self.assertEqual(Settings({"FEEDS": '{"x.csv": {}}'}).getdict("FEEDS"), {"x.csv": {}})
        self.assertRaises(UsageError, Settings({"FEEDS": "[1]"}).getdict, "FEEDS")
        self.assertRaises(UsageError, Settings({"FEED_EXPORT_FIELDS": 3})
                          .getlist, "FEED_EXPORT_FIELDS")

    def test_parse_value(self):
        """-s values: JSON for lists, dicts, numbers and booleans; text otherwise."""
        self.assertEqual(parse_value("3"), 3)
        self.assertEqual(parse_value("0.25"), 0.25)
        self.assertEqual(parse_value("true"), True)
        self.assertEqual(parse_value('{"a.B": 1}'), {"a.B": 1})
        self.assertEqual(parse_value("hello"), "hello")
        self.assertRaises(UsageError, parse_value, "{not json")

    def test_text_settings_keep_their_text(self):
        """A setting that holds text keeps "123" as text, not a number."""
        self.assertEqual(parse_value("123", "USER_AGENT"), "123")
        self.assertEqual(parse_value("007.json", "STATS_FILE"), "007.json")

    def test_validate_checks_every_overridden_setting(self):
        """validate() finds a bad value even when nothing has read it yet."""
        settings = Settings({"CLOSESPIDER_ITEMCOUNT": "lots"})
        self.assertIn("CLOSESPIDER_ITEMCOUNT", str(self.assertRaises(UsageError,
                                                                     settings.validate)))
        settings = Settings({"USER_AGENT": 5})
        self.assertRaises(UsageError, settings.validate)
        settings = Settings({"SCHEDULER": "tinyscrapy.core.scheduler.Nope"})
        self.assertIn("has no 'Nope'", str(self.assertRaises(UsageError, settings.validate)))
        settings = Settings({"RETRY_EXCEPTIONS": "builtins.OSError, tinyscrapy.exceptions.Nope"})
        error = str(self.assertRaises(UsageError, settings.validate))
        self.assertIn("setting RETRY_EXCEPTIONS: cannot import 'tinyscrapy.exceptions.Nope'", error)
        Settings({"RETRY_EXCEPTIONS": ["builtins.OSError", KeyError]}).validate()
        Settings({"USER_AGENT": "me", "MY_OWN": object(), "DEPTH_LIMIT": "2"}).validate()

    def test_crawler_refuses_a_bad_value(self):
        """A bad value (here in custom_settings) stops the Crawler before anything runs."""

        class Bad(Idle):
            custom_settings = {"CONCURRENT_REQUESTS": "many"}

        error = self.assertRaises(UsageError, Crawler, Bad, Settings())
        self.assertIn("CONCURRENT_REQUESTS", str(error))


class Recorder:
    """A pipeline that reads a setting of its own and remembers being built."""

    built = []

    def __init__(self, value):
        self.value = value

    @classmethod
    def from_crawler(cls, crawler):
        instance = cls(crawler.settings.get("MY_RECORDER_VALUE"))
        cls.built.append(instance)
        return instance

    def process_item(self, item, spider):
        return item


class SwitchedOff:
    """A component that turns itself off."""

    @classmethod
    def from_crawler(cls, crawler):
        raise NotConfigured("not today")


class ComponentTests(unittest.TestCase):
    """Dotted paths, from_crawler, NotConfigured and {path: order} dicts."""

    def test_load_object(self):
        """A dotted path imports; an object is returned as it is; errors are one line."""
        self.assertIs(load_object("os.path.join"), os.path.join)
        self.assertIs(load_object(Recorder), Recorder)
        for path, message in (("nosuch.module.Thing", "No module named 'nosuch'"),
                              ("os.path.nothing", "has no 'nothing'"),
                              ("nodots", "not a dotted path")):
            error = self.assertRaises(UsageError, load_object, path)
            self.assertIn(message, str(error))
            self.assertNotIn("\n", str(error))

    def test_ordered_paths_merge_base_and_disable_with_none(self):
        """NAME_BASE and NAME merge; None disables; lower numbers come first."""
        settings = Settings({
            "DOWNLOADER_MIDDLEWARES_BASE": {"a.B": 500, "a.C": 100},
            "DOWNLOADER_MIDDLEWARES": {"a.D": 300, "a.C": None},
        })
        self.assertEqual(ordered_paths(settings, "DOWNLOADER_MIDDLEWARES"), ["a.D", "a.B"])

    def test_order_must_be_a_number(self):
        """An order that is not a number names the setting and the path."""
        settings = Settings({"ITEM_PIPELINES": {"a.B": "first"}})
        error = self.assertRaises(UsageError, ordered_paths, settings, "ITEM_PIPELINES")
        self.assertIn("ITEM_PIPELINES", str(error))
        self.assertIn("a.B", str(error))

    def test_not_configured_switches_off(self):
        """A component raising NotConfigured is left out; the others are built."""
        crawler = Crawler(Idle, Settings({"ITEM_PIPELINES": {SwitchedOff: 1, Recorder: 2}}))
        built = build_ordered(crawler, "ITEM_PIPELINES")
        self.assertEqual([path for path, _ in built], ["tests.test_settings.Recorder"])
        self.assertIsNone(build(SwitchedOff, crawler))

    def test_base_default_disabled(self):
        """Setting a *_BASE default to None in the user's dict disables it."""
        path = "tinyscrapy.downloadermiddlewares.defaultheaders.DefaultHeadersMiddleware"
        crawler = Crawler(Idle, Settings({}))
        self.assertIn(path, [p for p, _ in build_ordered(crawler, "DOWNLOADER_MIDDLEWARES")])
        crawler = Crawler(Idle, Settings({"DOWNLOADER_MIDDLEWARES": {path: None}}))
        self.assertNotIn(path, [p for p, _ in build_ordered(crawler, "DOWNLOADER_MIDDLEWARES")])


class StartLogTests(unittest.TestCase):
    """What a crawl says about its settings and components when it starts."""

    @defer.inlineCallbacks
    def test_overridden_and_enabled_components_logged(self):
        """Overridden settings and each kind of enabled component are logged at start."""
        logs = capture_logs(self, "tinyscrapy.crawler")
        Recorder.built = []
        yield crawl(Idle, {"ITEM_PIPELINES": {Recorder: 1}, "MY_RECORDER_VALUE": 7,
                           "DEPTH_LIMIT": 4, "SPIDER_MIDDLEWARES_BASE": {}})
        text = logs.text()
        self.assertIn("DEPTH_LIMIT=4", text)
        self.assertIn("item pipelines: tests.test_settings.Recorder", text)
        self.assertIn("downloader middlewares: Offsite, HttpAuth, DefaultHeaders, UserAgent", text)
        self.assertIn("spider middlewares: none", text)
        self.assertIn("extensions:", text)
        self.assertEqual(Recorder.built[0].value, 7)

    @defer.inlineCallbacks
    def test_passwords_in_urls_kept_out_of_the_log(self):
        logs = capture_logs(self, "tinyscrapy.crawler")
        yield crawl(Idle, {"MY_SERVICE_URL": "redis://user:s3cret@127.0.0.1:1/0"})
        self.assertNotIn("s3cret", logs.text())
        self.assertIn("redis://user:***@127.0.0.1:1/0", logs.text())

    @defer.inlineCallbacks
    def test_unread_unknown_settings_warned_with_a_guess(self):
        """A name nothing reads that is close to a known one is warned about (a typo); a
        name like no known one (the project's own, read later) only at DEBUG; a user's own
        setting that their component read not at all."""
        logs = capture_logs(self, "tinyscrapy.crawler", logging.DEBUG)
        yield crawl(Idle, {"ITEM_PIPELINES": {Recorder: 1}, "MY_RECORDER_VALUE": 7,
                           "DOWNLOAD_DELAYS": 2, "SOMETHING_ELSE": 1})
        warnings = logs.messages(logging.WARNING)
        self.assertEqual(len(warnings), 1, warnings)
        self.assertIn("DOWNLOAD_DELAYS (did you mean DOWNLOAD_DELAY?)", warnings[0])
        self.assertNotIn("SOMETHING_ELSE", warnings[0])
        self.assertNotIn("MY_RECORDER_VALUE", warnings[0])
        debug = [m for m in logs.messages(logging.DEBUG) if "your own?" in m]
        self.assertEqual(len(debug), 1, debug)
        self.assertIn("SOMETHING_ELSE", debug[0])
        self.assertNotIn("MY_RECORDER_VALUE", debug[0])

    @defer.inlineCallbacks
    def test_no_warning_for_known_settings(self):
        """Only known names set: no warning at all."""
        logs = capture_logs(self, "tinyscrapy.crawler")
        yield crawl(Idle, {"DEPTH_LIMIT": 1, "CLOSESPIDER_ITEMCOUNT": 5})
        self.assertEqual(logs.messages(logging.WARNING), [])


SPIDER_WITH_SETTINGS = """
from tinyscrapy import Spider


class Configured(Spider):
    name = "configured"
    custom_settings = {SETTINGS}

    def start_requests(self):
        return iter(())
"""


class CommandSettingsTests(unittest.TestCase):
    """A bad setting stops `runspider` with one line and exit status 2."""

    def setUp(self):
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    def spider(self, custom_settings="{}"):
        path = os.path.join(self.tmp, "configured.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(SPIDER_WITH_SETTINGS.replace("{SETTINGS}", custom_settings)))
        return path

    @defer.inlineCallbacks
    def assertUsageError(self, args, message):
        code, _, err = yield run_command(reactor, args, cwd=self.tmp)
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertNotIn("Traceback", err)
        self.assertIn(message, err)

    def test_pipeline_path_that_does_not_import(self):
        """-s ITEM_PIPELINES naming a missing module: one line, exit 2."""
        return self.assertUsageError(
            ["runspider", self.spider(), "-s", 'ITEM_PIPELINES={"nosuch.Pipeline": 300}'],
            "cannot import 'nosuch.Pipeline'")

    def test_custom_settings_middleware_that_does_not_import(self):
        """custom_settings naming a missing middleware class: one line, exit 2."""
        return self.assertUsageError(
            ["runspider", self.spider('{"SPIDER_MIDDLEWARES": {"os.NoSuchMiddleware": 1}}')],
            "cannot import 'os.NoSuchMiddleware'")

    def test_retry_exception_that_does_not_import(self):
        """-s RETRY_EXCEPTIONS with a path that does not import: one line, exit 2."""
        return self.assertUsageError(
            ["runspider", self.spider(), "-s",
             "RETRY_EXCEPTIONS=builtins.OSError,nosuch.Error"],
            "setting RETRY_EXCEPTIONS: cannot import 'nosuch.Error'")

    @defer.inlineCallbacks
    def test_good_settings_exit_zero(self):
        """The same spider with good settings runs to its end."""
        code, _, err = yield run_command(
            reactor, ["runspider", self.spider('{"DEPTH_LIMIT": 2}'), "-s", "USER_AGENT=123",
                      "-s", "CONCURRENT_REQUESTS=4"], cwd=self.tmp)
        self.assertEqual(code, 0, err)
        self.assertIn("USER_AGENT='123'", err)


class ScrapySettingNamesTests(unittest.TestCase):
    """Every setting Scrapy 2.19 defines has an answer here."""

    def test_every_scrapy_setting_is_known(self):
        """Each name of Scrapy's default_settings (tests/scrapy-settings.txt) is a setting
        with a default here, one tinyscrapy says it does not support (and why), or one it
        accepts as obsolete: none is an unknown name a project's settings.py would be
        warned about."""
        from tinyscrapy.settings import default_settings
        with open(os.path.join(ROOT, "tests", "scrapy-settings.txt"), encoding="utf-8") as f:
            names = [line.strip() for line in f if line.strip() and not line.startswith("#")]
        self.assertGreater(len(names), 200)
        known = (set(default_settings.DEFAULTS) | set(default_settings.UNSUPPORTED)
                 | set(default_settings.OBSOLETE))
        self.assertEqual([name for name in names if name not in known], [])


class DocumentationTests(unittest.TestCase):
    """docs/settings.md describes every setting that exists."""

    def test_every_default_is_documented(self):
        """Each name in DEFAULTS has its own entry in docs/settings.md."""
        with open(os.path.join(ROOT, "docs", "settings.md"), encoding="utf-8") as f:
            text = f.read()
        documented = set(re.findall(r"^(?:#+ |\| )`([A-Z][A-Z0-9_]+)`", text, re.MULTILINE))
        missing = sorted(set(DEFAULTS) - documented)
        self.assertEqual(missing, [], "settings without a heading or table row in settings.md")
        unknown = sorted(documented - set(DEFAULTS))
        self.assertEqual(unknown, [], "documented settings that do not exist")

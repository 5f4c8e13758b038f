"""
Scrapy's helpers at their Scrapy paths, with Scrapy 2.19's behaviour, as projects and
plugins call them: C{utils.url}, C{utils.iterators}, C{utils.misc}, C{utils.request},
C{utils.response}, C{utils.project}, C{utils.conf}, C{utils.spider}, C{utils.serialize},
C{utils.log}, C{utils.defer}, C{utils.python}, C{utils.datatypes}, C{utils.deprecate},
C{utils.signal}, C{squeues}, and the spider middlewares' base.
"""

import datetime
import decimal
import json
import logging
import os
import stat
import warnings

from twisted.internet import defer
from twisted.python.failure import Failure
from twisted.trial import unittest

from tinyscrapy import signals
from tinyscrapy.exceptions import ScrapyDeprecationWarning, UsageError
from tinyscrapy.http import HtmlResponse, Request, Response, TextResponse
from tinyscrapy.item import Field, Item
from tinyscrapy.spidermiddlewares.base import BaseSpiderMiddleware
from tinyscrapy.spiders import Spider
from tinyscrapy.utils.misc import set_environ

from .helpers import crawl, crawl_and_collect, serve
from .logs import capture_logs


class Product(Item):
    name = Field()
    price = Field()


class ShopSpider(Spider):
    name = "shop.example"
    allowed_domains = ["shop.example.org"]

    def parse(self, response):
        pass

    def parse_item(self, response):
        pass


def html(url, body, **kwargs):
    return HtmlResponse(url, body=body, headers={"Content-Type": "text/html"}, **kwargs)


class UrlTests(unittest.TestCase):
    """scrapy.utils.url."""

    def test_domains(self):
        """A host is from a domain when it is it or below it, in any case; the port is
        part of the host, as in Scrapy."""
        from tinyscrapy.utils.url import url_is_from_any_domain, url_is_from_spider
        self.assertTrue(url_is_from_any_domain("http://WWW.Example.COM/a", ["example.com"]))
        self.assertFalse(url_is_from_any_domain("http://badexample.com/", ["example.com"]))
        self.assertFalse(url_is_from_any_domain("http://h:8080/", ["h"]))
        self.assertTrue(url_is_from_any_domain("http://h:8080/", ["h:8080"]))
        self.assertTrue(url_is_from_spider("http://a.shop.example/", ShopSpider))
        self.assertTrue(url_is_from_spider("http://shop.example.org/x", ShopSpider))
        self.assertFalse(url_is_from_spider("http://example.org/x", ShopSpider))

    def test_schemes_and_stripping(self):
        """guess_scheme tells file paths from hosts; strip_url drops credentials, default
        ports and the fragment, or all but the origin."""
        from tinyscrapy.utils.url import add_http_if_no_scheme, guess_scheme, strip_url
        self.assertEqual(add_http_if_no_scheme("example.com/a"), "http://example.com/a")
        self.assertEqual(add_http_if_no_scheme("//example.com/a"), "http://example.com/a")
        self.assertEqual(guess_scheme("/tmp/feed.xml"), "file:///tmp/feed.xml")
        self.assertEqual(guess_scheme("example.com"), "http://example.com")
        url = "https://u:p@example.com:443/a/b?q=1#top"
        self.assertEqual(strip_url(url), "https://example.com/a/b?q=1")
        self.assertEqual(strip_url(url, origin_only=True), "https://example.com/")
        self.assertEqual(strip_url(url, strip_credentials=False, strip_fragment=False),
                         "https://u:p@example.com/a/b?q=1#top")

    def test_extensions(self):
        """url_has_any_extension reads the path only, in any case."""
        from tinyscrapy.linkextractors import IGNORED_EXTENSIONS
        from tinyscrapy.utils.url import url_has_any_extension
        extensions = ["." + e for e in IGNORED_EXTENSIONS]
        self.assertTrue(url_has_any_extension("http://h/a.JPG?x=1", extensions))
        self.assertFalse(url_has_any_extension("http://h/a.html?x=.jpg", extensions))
        self.assertIsInstance(IGNORED_EXTENSIONS + ["pdf"], list)


FEED = b"""<?xml version="1.0" encoding="utf-8"?>
<rss xmlns:g="http://base.google.com/ns/1.0"><channel>
<item><title>One</title><g:price>1</g:price></item>
<item><title>Two</title><g:price>2</g:price></item>
</channel></rss>"""


class IteratorTests(unittest.TestCase):
    """scrapy.utils.iterators."""

    def test_xmliter_lxml(self):
        """Each node as its own document; a prefix the document declares is resolved."""
        from tinyscrapy.utils.iterators import xmliter_lxml
        response = TextResponse("http://h/feed", body=FEED,
                                headers={"Content-Type": "text/xml"})
        titles = [node.xpath("title/text()").get() for node in xmliter_lxml(response, "item")]
        self.assertEqual(titles, ["One", "Two"])
        prices = [node.xpath("text()").get() for node in xmliter_lxml(FEED, "g:price")]
        self.assertEqual(prices, ["1", "2"])
        named = xmliter_lxml(FEED.decode(), "price", "http://base.google.com/ns/1.0", "p")
        self.assertEqual([node.xpath("/p:price/text()").get() for node in named], ["1", "2"])
        self.assertRaises(TypeError, list, xmliter_lxml(42, "item"))

    def test_xmliter_resolves_no_entities(self):
        """An external entity is not read (no local file reaches a spider)."""
        from tinyscrapy.utils.iterators import xmliter_lxml
        body = (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                b"<r><item>&e;</item></r>")
        self.assertNotIn("root:", "".join(n.get() for n in xmliter_lxml(body, "item")))

    def test_csviter(self):
        """Rows as dicts; a row of the wrong length is skipped and logged with its line
        and the page's URL."""
        from tinyscrapy.utils.iterators import csviter
        logs = capture_logs(self, "tinyscrapy.utils.iterators")
        response = TextResponse("http://h/f.csv", body=b'id;name\n1;"a;b"\n2\n3;c\n',
                                headers={"Content-Type": "text/csv"})
        self.assertEqual(list(csviter(response, delimiter=";")),
                         [{"id": "1", "name": "a;b"}, {"id": "3", "name": "c"}])
        self.assertEqual(list(csviter("x,y\n", headers=["a", "b"])), [{"a": "x", "b": "y"}])
        self.assertEqual(list(csviter(b"")), [])
        self.assertIn("ignoring row 3 (length: 1, should be: 2) of http://h/f.csv",
                      logs.text())


class MiscTests(unittest.TestCase):
    """scrapy.utils.misc."""

    def test_arg_to_iter(self):
        """None is nothing; a dict, an item, a string one value; an iterable itself."""
        from tinyscrapy.utils.misc import arg_to_iter
        item = Product(name="x")
        self.assertEqual(list(arg_to_iter(None)), [])
        self.assertEqual(arg_to_iter({"a": 1}), [{"a": 1}])
        self.assertEqual(arg_to_iter(item), [item])
        self.assertEqual(arg_to_iter("ab"), ["ab"])
        self.assertEqual(list(arg_to_iter((1, 2))), [1, 2])

    def test_load_object_errors_are_scrapys_and_usage_errors(self):
        """Each failure is Scrapy's exception class, and a UsageError for the command
        line."""
        from tinyscrapy.utils.misc import load_object
        for path, kind in (("nosuchmodule999.X", ImportError), ("os.path.nothing", NameError),
                           ("nodot", ValueError), ({}, TypeError)):
            error = self.assertRaises(kind, load_object, path)
            self.assertIsInstance(error, UsageError)
        self.assertIs(load_object("os.path.join"), os.path.join)
        self.assertIs(load_object(len), len)

    def test_walk_modules(self):
        """A package and every module below it; the list form warns, as in Scrapy."""
        from tinyscrapy.utils.misc import walk_modules, walk_modules_iter
        names = {module.__name__ for module in walk_modules_iter("tinyscrapy.spiders")}
        self.assertTrue({"tinyscrapy.spiders", "tinyscrapy.spiders.crawl"} <= names)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            walk_modules("tinyscrapy.spiders")
        self.assertEqual([w.category for w in caught], [ScrapyDeprecationWarning])

    def test_generator_with_return_value(self):
        """A callback that yields and also returns a value is found out."""
        from tinyscrapy.utils.misc import is_generator_with_return_value

        def returns(self, response):
            yield 1
            return 2

        def returns_none(self, response):
            yield 1
            return None

        def nested(self, response):
            def inner():
                return 3
            yield inner()

        self.assertTrue(is_generator_with_return_value(returns))
        self.assertFalse(is_generator_with_return_value(returns_none))
        self.assertFalse(is_generator_with_return_value(nested))


class RequestTests(unittest.TestCase):
    """scrapy.utils.request."""

    def test_request_from_dict_round_trip(self):
        """to_dict and back: the class, the callbacks found on the spider by name."""
        from tinyscrapy.http import FormRequest
        from tinyscrapy.utils.request import request_from_dict
        spider = ShopSpider()
        request = FormRequest("http://h/a", formdata={"q": "1"}, callback=spider.parse_item,
                              meta={"k": "v"}, priority=3)
        again = request_from_dict(request.to_dict(spider=spider), spider=spider)
        self.assertIs(type(again), FormRequest)
        self.assertEqual((again.url, again.body, again.meta, again.priority),
                         (request.url, request.body, {"k": "v"}, 3))
        self.assertEqual(again.callback, spider.parse_item)

    def test_request_from_dict_makes_no_unknown_class(self):
        """A class that is not a request class defined here is refused, never imported;
        Scrapy's own paths are read as tinyscrapy's."""
        from tinyscrapy.utils.request import request_from_dict
        d = {"url": "http://h/", "_class": "os.system"}
        self.assertRaises(ValueError, request_from_dict, d)
        d["_class"] = "scrapy.http.request.json_request.JsonRequest"
        self.assertEqual(type(request_from_dict(d)).__name__, "JsonRequest")
        d = {"url": "http://h/", "callback": "nosuch"}
        self.assertRaises(ValueError, request_from_dict, d, spider=ShopSpider())

    def test_referer_str(self):
        """The Referer header as text, or None."""
        from tinyscrapy.utils.request import referer_str
        self.assertIsNone(referer_str(Request("http://h/")))
        self.assertEqual(referer_str(Request("http://h/", headers={"Referer": "http://r/"})),
                         "http://r/")


class ResponseTests(unittest.TestCase):
    """scrapy.utils.response."""

    def test_status_message(self):
        """A status with its reason, an unknown one so named."""
        from tinyscrapy.utils.response import response_status_message
        self.assertEqual(response_status_message(404), "404 Not Found")
        self.assertEqual(response_status_message(b"200"), "200 OK")
        self.assertEqual(response_status_message(599), "599 Unknown Status")

    def test_meta_refresh(self):
        """The refresh's delay and absolute URL (against <base href>), or (None, None)."""
        from tinyscrapy.utils.response import get_meta_refresh
        page = html("http://h/a/b", b'<head><base href="/c/"><meta http-equiv="refresh" '
                    b'content="5; url=next"></head>')
        self.assertEqual(get_meta_refresh(page), (5.0, "http://h/c/next"))
        self.assertEqual(get_meta_refresh(html("http://h/", b"<p>x</p>")), (None, None))


class ProjectTests(unittest.TestCase):
    """scrapy.utils.project and scrapy.utils.conf."""

    def make_project(self):
        folder = os.path.abspath(self.mktemp())
        os.makedirs(os.path.join(folder, "proj"))
        with open(os.path.join(folder, "scrapy.cfg"), "w", encoding="utf-8") as f:
            f.write("[settings]\ndefault = proj.settings\nother = proj.other\n")
        with open(os.path.join(folder, "proj", "__init__.py"), "w", encoding="utf-8"):
            pass
        for name, value in (("settings", "a"), ("other", "b")):
            with open(os.path.join(folder, "proj", name + ".py"), "w", encoding="utf-8") as f:
                f.write(f"BOT_NAME = {value!r}\n")
        self.addCleanup(os.chdir, os.getcwd())
        os.chdir(folder)
        for module in ("proj", "proj.settings", "proj.other"):
            self.addCleanup(__import__("sys").modules.pop, module, None)
        return folder

    def test_data_path(self):
        """In a project, under .scrapy/ beside scrapy.cfg (made on demand); outside, under
        ./.scrapy/; an absolute path as it is."""
        from tinyscrapy.utils.project import data_path, inside_project, project_data_dir
        folder = self.make_project()
        with set_environ(SCRAPY_SETTINGS_MODULE="", TINYSCRAPY_SETTINGS_MODULE=""):
            self.assertTrue(inside_project())
            self.assertEqual(project_data_dir(), os.path.join(folder, ".scrapy"))
            self.assertEqual(data_path("cache", createdir=True),
                             os.path.join(folder, ".scrapy", "cache"))
            self.assertTrue(os.path.isdir(os.path.join(folder, ".scrapy", "cache")))
            self.assertEqual(data_path("/abs/x"), "/abs/x")

    def test_get_project_settings_and_the_environment(self):
        """The project's settings module; SCRAPY_PROJECT picks another [settings] key;
        SCRAPY_SETTINGS_MODULE names the module."""
        from tinyscrapy.utils.project import get_project_settings
        self.make_project()
        with set_environ(SCRAPY_SETTINGS_MODULE="", TINYSCRAPY_SETTINGS_MODULE=""):
            os.environ.pop("SCRAPY_SETTINGS_MODULE")
            self.assertEqual(get_project_settings().get("BOT_NAME"), "a")
            os.environ.pop("SCRAPY_SETTINGS_MODULE", None)
        with set_environ(SCRAPY_PROJECT="other", SCRAPY_SETTINGS_MODULE="",
                         TINYSCRAPY_SETTINGS_MODULE=""):
            os.environ.pop("SCRAPY_SETTINGS_MODULE")
            self.assertEqual(get_project_settings().get("BOT_NAME"), "b")
            os.environ.pop("SCRAPY_SETTINGS_MODULE", None)
        with set_environ(SCRAPY_SETTINGS_MODULE="proj.other", TINYSCRAPY_SETTINGS_MODULE=""):
            self.assertEqual(get_project_settings().get("BOT_NAME"), "b")

    def test_build_component_list(self):
        """By order, None left out; an order that is no number, or two keys for one
        component, is an error."""
        from tinyscrapy.utils.conf import arglist_to_dict, build_component_list
        self.assertEqual(build_component_list({"a": 2, "b": None, "c": 1.5}), ["c", "a"])
        self.assertRaises(ValueError, build_component_list, {"a": "1"})
        self.assertRaises(ValueError, build_component_list, {"a": 1, "A": 2},
                          convert=str.lower)
        self.assertEqual(arglist_to_dict(["a=1", "b=c=d"]), {"a": "1", "b": "c=d"})

    def test_feed_options_from_the_command_line(self):
        """-o values as FEEDS: URI:FORMAT, the extension, stdout; an unknown format and
        -o with -O are usage errors."""
        from tinyscrapy.settings import Settings
        from tinyscrapy.utils.conf import feed_process_params_from_cli
        settings = Settings()
        self.assertEqual(feed_process_params_from_cli(settings, ["a.dat:csv", "b.json",
                                                                 "-:jsonlines"]),
                         {"a.dat": {"format": "csv"}, "b.json": {"format": "json"},
                          "stdout:": {"format": "jsonlines"}})
        self.assertEqual(feed_process_params_from_cli(settings, [], overwrite_output=["o.xml"]),
                         {"o.xml": {"format": "xml", "overwrite": True}})
        self.assertRaises(UsageError, feed_process_params_from_cli, settings, ["a.dat"])
        self.assertRaises(UsageError, feed_process_params_from_cli, settings, ["a.csv"],
                          overwrite_output=["b.csv"])


class SpiderOutputTests(unittest.TestCase):
    """scrapy.utils.spider."""

    def test_iterate_spider_output(self):
        """One object is a list of it; None nothing; a coroutine a Deferred of a list."""
        from tinyscrapy.utils.spider import iterate_spider_output
        request = Request("http://h/")
        self.assertEqual(list(iterate_spider_output(request)), [request])
        self.assertEqual(list(iterate_spider_output(None)), [])

        async def callback():
            return {"a": 1}

        results = []
        iterate_spider_output(callback()).addCallback(results.append)
        self.assertEqual(results, [[{"a": 1}]])

    def test_iter_spider_classes(self):
        """The named spiders a module defines."""
        from tinyscrapy.utils.spider import iter_spider_classes
        self.assertEqual(list(iter_spider_classes(__import__(__name__, fromlist=["x"]))),
                         [ShopSpider, Priced])


class SerializeTests(unittest.TestCase):
    """scrapy.utils.serialize."""

    def test_json_of_a_crawls_objects(self):
        """Sets, dates, decimals, requests, responses and items become JSON."""
        from tinyscrapy.utils.serialize import ScrapyJSONEncoder
        value = {"s": {1}, "d": datetime.date(2026, 1, 2), "n": decimal.Decimal("1.5"),
                 "r": Request("http://h/"), "p": Response("http://h/p", status=404),
                 "i": Product(name="x")}
        self.assertEqual(json.loads(json.dumps(value, cls=ScrapyJSONEncoder)),
                         {"s": [1], "d": "2026-01-02", "n": "1.5", "r": "<Request GET http://h/>",
                          "p": "<Response 404 http://h/p>", "i": {"name": "x"}})


class LogTests(unittest.TestCase):
    """scrapy.utils.log."""

    def test_logformatter_adapter(self):
        """A log formatter's dict as logger.log's arguments."""
        from tinyscrapy.utils.log import logformatter_adapter
        self.assertEqual(logformatter_adapter({"level": 10, "msg": "%s", "args": ("a",)}),
                         (10, "%s", "a"))
        self.assertEqual(logformatter_adapter({"msg": "%(a)s", "args": {"a": 1}}),
                         (logging.INFO, "%(a)s", {"a": 1}))

    def test_failure_to_exc_info_and_spider_logger(self):
        """A Failure's exc_info; spider.logger merges the caller's extra with the
        spider."""
        from tinyscrapy.utils.log import SpiderLoggerAdapter, failure_to_exc_info
        try:
            raise ZeroDivisionError("x")
        except ZeroDivisionError:
            failure = Failure()
        self.assertIs(failure_to_exc_info(failure)[0], ZeroDivisionError)
        self.assertIsNone(failure_to_exc_info(ValueError()))
        spider = ShopSpider()
        self.assertIsInstance(spider.logger, SpiderLoggerAdapter)
        logs = capture_logs(self, spider.name)
        spider.logger.info("hello", extra={"k": 1})
        record = logs.records[-1]
        self.assertEqual((record.k, record.spider), (1, spider))


class DeferTests(unittest.TestCase):
    """scrapy.utils.defer."""

    def test_parallel_keeps_to_its_count(self):
        """At most count calls at a time; the list fires once all are done."""
        from twisted.internet import reactor

        from tinyscrapy.utils.defer import parallel
        state = {"active": 0, "peak": 0, "calls": []}

        def finish(d):
            state["active"] -= 1
            d.callback(None)

        def call(value):
            state["active"] += 1
            state["peak"] = max(state["peak"], state["active"])
            state["calls"].append(value)
            d = defer.Deferred()
            reactor.callLater(0, finish, d)
            return d

        def check(_):
            self.assertEqual((state["calls"], state["peak"]), ([0, 1, 2, 3, 4], 2))

        return parallel(range(5), 2, call).addCallback(check)

    def test_iter_errback(self):
        """An error while iterating goes to the errback, and the values before it
        come."""
        from tinyscrapy.utils.defer import iter_errback
        failures = []

        def values():
            yield 1
            raise ValueError("x")

        self.assertEqual(list(iter_errback(values(), failures.append)), [1])
        self.assertTrue(failures[0].check(ValueError))

    def test_deferred_from_coro_and_ensure_awaitable(self):
        """Anything that is not awaitable comes back as it is; a value can be awaited."""
        from tinyscrapy.utils.defer import deferred_from_coro, ensure_awaitable
        self.assertEqual(deferred_from_coro(5), 5)

        async def main():
            return await ensure_awaitable(7)

        results = []
        deferred_from_coro(main()).addCallback(results.append)
        self.assertEqual(results, [7])


class DatatypeTests(unittest.TestCase):
    """scrapy.utils.datatypes and scrapy.utils.python."""

    def test_case_insensitive_dict(self):
        """Keys found in any casing, kept as last set."""
        from tinyscrapy.utils.datatypes import CaseInsensitiveDict
        d = CaseInsensitiveDict({"Content-Type": "a"})
        d["content-type"] = "b"
        self.assertEqual((d["CONTENT-TYPE"], list(d), "Content-type" in d),
                         ("b", ["content-type"], True))

    def test_local_caches(self):
        """At most limit keys, the oldest first out; weak keys go with their object."""
        from tinyscrapy.utils.datatypes import LocalCache, LocalWeakReferencedCache
        cache = LocalCache(limit=2)
        for key in "abc":
            cache[key] = key
        self.assertEqual(list(cache), ["b", "c"])
        weak = LocalWeakReferencedCache(limit=2)
        spider = ShopSpider()
        weak[spider] = 1
        weak["not weak"] = 2
        self.assertEqual((weak[spider], weak["not weak"]), (1, None))

    def test_python_helpers(self):
        """unique, binary_is_text, without_none_values, get_func_args."""
        from tinyscrapy.utils.python import (
            binary_is_text,
            get_func_args,
            unique,
            without_none_values,
        )
        self.assertEqual(unique([3, 1, 3, 2, 1]), [3, 1, 2])
        self.assertTrue(binary_is_text(b"a\tb\r\n"))
        self.assertFalse(binary_is_text(b"\x89PNG\x1a"))
        self.assertEqual(without_none_values({"a": None, "b": 0}), {"b": 0})
        self.assertEqual(get_func_args(ShopSpider.parse_item, stripself=True), ["response"])


class DeprecateTests(unittest.TestCase):
    """scrapy.utils.deprecate."""

    def test_create_deprecated_class(self):
        """The old name warns when subclassed or made, and isinstance/issubclass hold
        for the new class too."""
        from tinyscrapy.utils.deprecate import create_deprecated_class

        class New:
            pass

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            Old = create_deprecated_class("Old", New)  # noqa: N806

            class Sub(Old):
                pass

            Old()
            Sub()
        self.assertEqual(len(caught), 2)
        self.assertIn("inherits from deprecated class", str(caught[0].message))
        self.assertIn("is deprecated, instantiate", str(caught[1].message))
        self.assertTrue(isinstance(New(), Old) and issubclass(Sub, New))
        self.assertEqual(Old.__module__, __name__)


class SignalTests(unittest.TestCase):
    """scrapy.utils.signal, on a crawler's own signals."""

    def test_send_catch_log_to_a_crawlers_receivers(self):
        """sender=crawler reaches crawler.signals' receivers; one that raises is logged
        and its exception is its result."""
        from tinyscrapy.utils.signal import send_catch_log
        from tinyscrapy.utils.test import get_crawler
        crawler = get_crawler(ShopSpider)
        got = []

        def receiver(spider):
            got.append(spider)
            return "ok"

        def broken():
            raise ValueError("receiver broke")

        crawler.signals.connect(receiver, signals.spider_opened)
        crawler.signals.connect(broken, signals.spider_opened)
        logs = capture_logs(self, "tinyscrapy.signalmanager")
        results = send_catch_log(signals.spider_opened, sender=crawler, spider="s")
        self.assertEqual(got, ["s"])
        self.assertEqual(results[0], (receiver, "ok"))
        self.assertIsInstance(results[1][1], ValueError)
        self.assertIn("signal spider_opened: receiver", logs.text())
        self.assertIn("broken", logs.text())


class QueueTests(unittest.TestCase):
    """scrapy.squeues."""

    def test_memory_queues(self):
        """First in first out, or last in first out; None when empty."""
        from tinyscrapy.squeues import FifoMemoryQueue, LifoMemoryQueue
        for cls, expected in ((FifoMemoryQueue, [1, 2]), (LifoMemoryQueue, [2, 1])):
            queue = cls.from_crawler(None)
            queue.push(1)
            queue.push(2)
            self.assertEqual([queue.pop(), queue.pop(), queue.pop()], [*expected, None])

    def test_disk_queue_keeps_requests_as_data(self):
        """Requests survive a reopen, callbacks bound to the spider again; the file is
        0600, and an entry this code did not write (a pickle) is refused."""
        import pickle
        import sqlite3

        from tinyscrapy.frontier.codec import StoredRequestError
        from tinyscrapy.squeues import PickleLifoDiskQueue
        from tinyscrapy.utils.test import get_crawler
        crawler = get_crawler(ShopSpider)
        crawler.spider = ShopSpider()
        path = os.path.join(self.mktemp(), "q", "requests")
        queue = PickleLifoDiskQueue.from_crawler(crawler, path)
        queue.push(Request("http://h/1", callback=crawler.spider.parse_item))
        queue.push(Request("http://h/2", meta={"a": [1]}))
        queue.close()
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        queue = PickleLifoDiskQueue(crawler, path)
        self.assertEqual(len(queue), 2)
        self.assertEqual((queue.peek().url, queue.pop().meta), ("http://h/2", {"a": [1]}))
        self.assertEqual(queue.pop().callback, crawler.spider.parse_item)
        self.assertIsNone(queue.pop())
        queue.close()
        db = sqlite3.connect(path)
        db.execute("INSERT INTO queue (item) VALUES (?)", (pickle.dumps(Request("http://x/")),))
        db.commit()
        db.close()
        queue = PickleLifoDiskQueue(crawler, path)
        self.addCleanup(queue.close)
        self.assertRaises(StoredRequestError, queue.pop)


class Priced(Spider):
    """Yields a page's two prices as items, and a request that copies the whole meta."""

    name = "priced"

    def parse(self, response):
        for price in response.css("b::text").getall():
            yield {"price": price}
        yield Request(response.urljoin("/next"), meta=dict(response.meta),
                      callback=self.parse_next)

    def parse_next(self, response):
        return None


class ToFloat(BaseSpiderMiddleware):
    """A user's middleware on Scrapy's base class: items processed one by one."""

    def get_processed_item(self, item, response):
        return {"price": float(item["price"])} if item["price"] != "0" else None


class SpiderMiddlewareBaseTests(unittest.TestCase):
    """BaseSpiderMiddleware and MetaCopyDetectionMiddleware in a real crawl."""

    @defer.inlineCallbacks
    def test_processed_items_and_the_meta_copy_warning(self):
        """get_processed_item changes or drops each item; a request carrying the
        middlewares' meta keys is warned about once."""
        from .servers import Redirect
        server = serve(self)
        server.add("/", Redirect("/shop"))
        server.add_page("/shop", body="<b>1.5</b><b>0</b>")
        server.add_page("/next")
        logs = capture_logs(self, "tinyscrapy.spidermiddlewares.metacopy")
        Priced.start_urls = [server.url("/")]
        crawler, items = yield crawl_and_collect(Priced, {"SPIDER_MIDDLEWARES": {
            "tinyscrapy.spidermiddlewares.base.BaseSpiderMiddleware": 10,
            f"{__name__}.ToFloat": 20,
            "scrapy.spidermiddlewares.metacopy.MetaCopyDetectionMiddleware": 30}})
        self.assertEqual(items, [{"price": 1.5}])
        self.assertIn("Priced yielded a request containing internal meta keys",
                      logs.text())
        self.assertIn("'redirect_urls'", logs.text())
        self.assertEqual(len(logs.records), 1)
        self.assertEqual(crawler.stats.get_value("response_received_count"), 2)


class ExtensionManagerTests(unittest.TestCase):
    """scrapy.extension."""

    @defer.inlineCallbacks
    def test_from_crawler(self):
        """The crawl's extensions, in order, each built once for the crawler."""
        from tinyscrapy.extension import ExtensionManager
        server = serve(self)
        server.add_page("/")
        Priced.start_urls = [server.url("/")]
        crawler = yield crawl(Priced)
        manager = ExtensionManager.from_crawler(crawler)
        self.assertEqual(len(manager.middlewares), len(crawler.extensions.middlewares))
        self.assertEqual(manager.paths[0], "tinyscrapy.extensions.corestats.CoreStats")

"""
Item pipelines: order, open and close, DropItem, Deferreds, wrong outputs, item kinds,
and back-pressure (a slow pipeline holds the crawl back instead of piling items up).
"""

import logging
from dataclasses import dataclass

import attrs
from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy import DropItem, Request, Spider, signals

from .helpers import crawl, make_engine, serve
from .logs import capture_logs


class ItemsSpider(Spider):
    """C{pages} start URLs on the fake downloader, C{per_page} items each."""

    name = "items"
    pages = 1
    per_page = 1

    def start_requests(self):
        for page in range(self.pages):
            yield Request(f"http://127.0.0.1/{page}")

    def parse(self, response):
        for n in range(self.per_page):
            yield {"page": response.url, "n": n}


def tagger(name, log):
    """A pipeline class that appends its name to item["seen"] and to C{log}."""

    class Tagger:
        def open_spider(self, spider):
            log.append(f"open {name}")

        def close_spider(self, spider):
            log.append(f"close {name}")

        def process_item(self, item, spider):
            item.setdefault("seen", []).append(name)
            return item

    Tagger.__qualname__ = f"Tagger_{name}"
    return Tagger


def run(engine, clock, downloader, turns=50):
    """Answer every download and turn the clock until the crawl closes (bounded)."""
    for _ in range(turns):
        clock.advance(0)
        downloader.answer_all()
        clock.advance(0)
        if engine.start().called:
            return
        clock.advance(1)


class PipelineTests(unittest.TestCase):
    """The contract of ITEM_PIPELINES."""

    def test_order_and_open_close(self):
        """Pipelines run in ITEM_PIPELINES order; each opens before and closes after."""
        log = []
        pipelines = {tagger("third", log): 300, tagger("first", log): 100,
                     tagger("second", log): 200}
        items = []
        engine, clock, downloader, crawler = make_engine(
            ItemsSpider, {"ITEM_PIPELINES": pipelines})
        crawler.signals.connect(lambda item, **kw: items.append(item), signals.item_scraped)
        self.successResultOf(engine.scraper.open_spider(crawler.spider))
        run(engine, clock, downloader)
        self.assertEqual(items[0]["seen"], ["first", "second", "third"])
        self.assertEqual(log, ["open first", "open second", "open third",
                               "close first", "close second", "close third"])

    def test_signatures_with_and_without_spider(self):
        """Scrapy 2.13's process_item(item), open_spider(), close_spider() are called
        without the spider; the old signatures still get it."""
        calls = []

        class New:
            def open_spider(self):
                calls.append("open")

            def close_spider(self):
                calls.append("close")

            def process_item(self, item):
                calls.append("item")
                return item

        class Old:
            def process_item(self, item, spider):
                calls.append(spider.name)
                return item

        engine, clock, downloader, crawler = make_engine(
            ItemsSpider, {"ITEM_PIPELINES": {New: 1, Old: 2}})
        self.successResultOf(engine.scraper.open_spider(crawler.spider))
        run(engine, clock, downloader)
        self.assertEqual(calls, ["open", "item", "items", "close"])
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 1)

    def test_async_process_item_awaited(self):
        """An async def process_item is awaited: the next pipeline gets its result."""
        items = []

        class Async:
            async def process_item(self, item):
                later = defer.Deferred()
                clock.callLater(1, later.callback, "done")
                return {**item, "awaited": await later}

        engine, clock, downloader, crawler = make_engine(
            ItemsSpider, {"ITEM_PIPELINES": {Async: 1}})
        crawler.signals.connect(lambda item: items.append(item), signals.item_scraped)
        clock.advance(0)
        downloader.answer()
        self.assertEqual(items, [])
        clock.advance(1)
        self.assertEqual(items, [{"page": "http://127.0.0.1/0", "n": 0, "awaited": "done"}])

    def test_drop_item(self):
        """DropItem stops the item: later pipelines never see it; counted and signalled."""
        log = []
        dropped = []

        class DropOdd:
            def process_item(self, item, spider):
                if item["n"] % 2:
                    raise DropItem(f"odd {item['n']}")
                return item

        engine, clock, downloader, crawler = make_engine(
            ItemsSpider, {"ITEM_PIPELINES": {DropOdd: 1, tagger("after", log): 2}},
            per_page=5)
        crawler.signals.connect(lambda exception, **kw: dropped.append(str(exception)),
                                signals.item_dropped)
        run(engine, clock, downloader)
        stats = crawler.stats
        self.assertEqual(stats.get_value("item_scraped_count"), 3)
        self.assertEqual(stats.get_value("item_dropped_count"), 2)
        self.assertEqual(stats.get_value("item_dropped_reasons_count/DropItem"), 2)
        self.assertEqual(dropped, ["odd 1", "odd 3"])

    def test_drop_item_log_level(self):
        """DropItem(log_level=...) sets its Dropped line's level; without one the line is
        at DEFAULT_DROPITEM_LOG_LEVEL, a name or a number."""

        class Drop:
            def process_item(self, item):
                raise DropItem("quiet" if item["n"] == 0 else "loud",
                               log_level="DEBUG" if item["n"] == 0 else None)

        engine, clock, downloader, crawler = make_engine(
            ItemsSpider, {"ITEM_PIPELINES": {Drop: 1}, "DEFAULT_DROPITEM_LOG_LEVEL": "INFO"},
            per_page=2)
        logs = capture_logs(self, "tinyscrapy")
        run(engine, clock, downloader)
        levels = {record.getMessage().split()[1]: record.levelno for record in logs.records
                  if record.getMessage().startswith("Dropped:")}
        self.assertEqual(levels, {"quiet": logging.DEBUG, "loud": logging.INFO})

    def test_deferred_process_item(self):
        """A Deferred from process_item: the next pipeline gets what it fires with."""
        items = []

        class Later:
            def process_item(self, item, spider):
                d = defer.Deferred()
                clock.callLater(2, d.callback, {**item, "later": True})
                return d

        engine, clock, downloader, crawler = make_engine(
            ItemsSpider, {"ITEM_PIPELINES": {Later: 1}})
        crawler.signals.connect(lambda item, **kw: items.append(item), signals.item_scraped)
        clock.advance(0)
        downloader.answer()
        self.assertEqual(items, [])
        clock.advance(2)
        self.assertEqual(items, [{"page": "http://127.0.0.1/0", "n": 0, "later": True}])
        clock.advance(0)
        self.assertTrue(engine.start().called)

    def test_failing_and_wrong_pipelines_counted(self):
        """A pipeline that raises, or returns None, is counted by class and named in the
        log; the crawl goes on."""

        class Forgetful:
            def process_item(self, item, spider):
                if item["n"] == 1:
                    raise KeyError("boom")
                if item["n"] == 2:
                    return defer.succeed(None)  # a Deferred that forgets the item
                item["x"] = 1  # and forgets to return it

        engine, clock, downloader, crawler = make_engine(
            ItemsSpider, {"ITEM_PIPELINES": {Forgetful: 1}}, per_page=3)
        run(engine, clock, downloader)
        stats = crawler.stats
        self.assertEqual(stats.get_value("pipeline_exceptions/PipelineOutputError"), 2)
        self.assertEqual(stats.get_value("pipeline_exceptions/KeyError"), 1)
        self.assertIsNone(stats.get_value("item_scraped_count"))
        self.assertTrue(engine.start().called)

    def test_dataclass_and_attrs_items(self):
        """Dataclass and attrs instances are items: pipelines and signals get them."""

        @dataclass
        class Book:
            title: str
            price: float = 0.0

        @attrs.define
        class Quote:
            text: str

        class Both(Spider):
            name = "both"

            def start_requests(self):
                yield Request("http://127.0.0.1/")

            def parse(self, response):
                yield Book("Dune", 9.5)
                yield Quote("hi")

        seen = []

        class Recorder:
            def process_item(self, item, spider):
                seen.append(type(item).__name__)
                return item

        engine, clock, downloader, crawler = make_engine(
            Both, {"ITEM_PIPELINES": {Recorder: 1}})
        run(engine, clock, downloader)
        self.assertEqual(seen, ["Book", "Quote"])
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 2)


class BackPressureTests(unittest.TestCase):
    """A slow pipeline slows the crawl instead of piling items up in memory."""

    def test_items_waiting_stay_bounded(self):
        """100 pages of 10 items through a 0.2 s pipeline with 4 pages at once: never more
        than 4 items wait, no page is fetched while 4 are being scraped, all 1000 arrive."""
        produced = []
        waiting = []

        class Slow:
            def process_item(self, item, spider):
                waiting.append(len(produced) - len(scraped))
                d = defer.Deferred()
                clock.callLater(0.2, d.callback, item)
                return d

        class Counting(ItemsSpider):
            def parse(self, response):
                for item in super().parse(response):
                    produced.append(item)
                    yield item

        scraped = []
        engine, clock, downloader, crawler = make_engine(
            Counting, {"ITEM_PIPELINES": {Slow: 1}, "CONCURRENT_REQUESTS": 4},
            pages=100, per_page=10)
        crawler.signals.connect(lambda item, **kw: scraped.append(item), signals.item_scraped)
        clock.advance(0)
        for _ in range(5000):
            downloader.answer_all()
            self.assertLessEqual(len(engine.in_flight), 4)
            self.assertLessEqual(len(produced) - len(scraped), 4)
            clock.advance(0.1)
            if engine.start().called:
                break
        self.assertEqual(len(scraped), 1000)
        self.assertLessEqual(max(waiting), 4)
        self.assertEqual(engine.scraper.itemproc.statistics().peak_waiting, 4)
        self.assertEqual(len(downloader.fetched), 100)

    def test_fired_deferred_then_slow_pipeline_still_holds_back(self):
        """A pipeline answering with an already-fired Deferred, followed by a slow one: the
        item still counts as waiting, and the generator does not run ahead."""
        yielded = []

        class Quick:
            def process_item(self, item, spider):
                return defer.succeed(item)

        class Slow:
            def process_item(self, item, spider):
                d = defer.Deferred()
                clock.callLater(1, d.callback, item)
                return d

        class Gen(ItemsSpider):
            def parse(self, response):
                for item in super().parse(response):
                    yielded.append(item)
                    yield item

        engine, clock, downloader, crawler = make_engine(
            Gen, {"ITEM_PIPELINES": {Quick: 1, Slow: 2}}, per_page=3)
        clock.advance(0)
        downloader.answer()
        self.assertEqual(len(yielded), 1)
        self.assertEqual(engine.scraper.itemproc.statistics().waiting, 1)
        self.assertEqual(len(engine.in_flight), 1)
        for _ in range(3):
            clock.advance(1)
        clock.advance(0)
        self.assertEqual(len(yielded), 3)
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 3)
        self.assertTrue(engine.start().called)


class SlowPipeline:
    """Holds each item 0.2 s (the real reactor) and counts how many wait at once."""

    waiting = 0
    peak = 0

    def process_item(self, item, spider):
        cls = type(self)
        cls.waiting += 1
        cls.peak = max(cls.peak, cls.waiting)
        d = defer.Deferred()
        reactor.callLater(0.2, self._release, d, item)
        return d

    def _release(self, d, item):
        type(self).waiting -= 1
        d.callback(item)


class LinkItemsSpider(Spider):
    """Three items per page, then the links."""

    name = "linkitems"

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        for n in range(3):
            yield {"url": response.url, "n": n}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


class BackPressureCrawlTests(unittest.TestCase):
    """The same, in a real crawl against a local server."""

    def setUp(self):
        self.server = serve(self)

    @defer.inlineCallbacks
    def test_slow_pipeline_bounds_a_real_crawl(self):
        """With 2 pages at once and a 0.2 s pipeline, at most 2 items wait and at most 2
        requests reach the server at once; every item arrives."""
        pages = [f"/p{i}" for i in range(6)]
        start = self.server.add_page("/", links=pages)
        for path in pages:
            self.server.add_page(path)
        SlowPipeline.waiting = SlowPipeline.peak = 0
        crawler = yield crawl(LinkItemsSpider, {
            "ITEM_PIPELINES": {SlowPipeline: 1}, "CONCURRENT_REQUESTS": 2}, start=start)
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 21)
        self.assertLessEqual(SlowPipeline.peak, 2)
        self.assertLessEqual(self.server.max_in_flight, 2)
        self.assertEqual(crawler.stats.get_value("pipelines/peak_waiting"), SlowPipeline.peak)

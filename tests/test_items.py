"""
Declared items and item loaders, as Scrapy's: L{Item} and L{Field} on their own, what
itemadapter sees of them, L{ItemLoader} on a response, a selector and nested; and a real
crawl whose Items, from a loader, pass through a pipeline without a spider argument and
an C{async def} one into every feed format.
"""

import copy
import csv
import json
import os
import pickle
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from itemadapter import ItemAdapter, is_item
from itemloaders.processors import Join, MapCompose, TakeFirst
from twisted.internet import defer, reactor, task
from twisted.trial import unittest

import tinyscrapy
from tinyscrapy import DropItem, Request, Spider
from tinyscrapy.http import HttpResponse
from tinyscrapy.item import Field, Item, register_item_class
from tinyscrapy.loader import ItemLoader

from .helpers import crawl, run_command, serve


class Quote(Item):
    text = Field(input_processor=MapCompose(str.strip), output_processor=TakeFirst())
    author = Field(output_processor=TakeFirst())
    tags = Field()
    url = Field(output_processor=TakeFirst())


class LongQuote(Quote):
    born = Field()
    text = Field(output_processor=Join(" "))


class ItemTests(unittest.TestCase):
    """Item and Field behave as Scrapy's."""

    def test_declared_fields_in_order_with_metadata(self):
        """fields lists the declared fields in order, inherited first, with metadata."""
        self.assertEqual(list(Quote.fields), ["text", "author", "tags", "url"])
        self.assertEqual(list(LongQuote.fields), ["text", "author", "tags", "url", "born"])
        self.assertIsInstance(LongQuote.fields["text"]["output_processor"], Join)
        self.assertIsInstance(Quote.fields["text"]["output_processor"], TakeFirst)

    def test_undeclared_field_is_a_clear_key_error(self):
        """Setting a field that is not declared raises KeyError naming class and field."""
        quote = Quote()
        with self.assertRaises(KeyError) as caught:
            quote["txet"] = "x"
        self.assertEqual(caught.exception.args[0], "Quote does not support field: txet")
        self.assertRaises(KeyError, Quote, txet="x")

    def test_mapping_behaviour(self):
        """keys() holds the set fields only; get, in, len, == dict work; unset is KeyError."""
        quote = Quote(text="a", tags=["x"])
        self.assertEqual(list(quote.keys()), ["text", "tags"])
        self.assertEqual(len(quote), 2)
        self.assertIn("text", quote)
        self.assertNotIn("author", quote)
        self.assertIsNone(quote.get("author"))
        self.assertRaises(KeyError, quote.__getitem__, "author")
        self.assertEqual(quote, {"text": "a", "tags": ["x"]})
        self.assertNotIsInstance(quote, dict)
        del quote["tags"]
        self.assertEqual(dict(quote), {"text": "a"})

    def test_attributes_point_to_item_access(self):
        """quote.text and quote.text = ... say to use quote['text'], as Scrapy does."""
        quote = Quote(text="a")
        with self.assertRaises(AttributeError) as read:
            getattr(quote, "text")  # noqa: B009
        self.assertEqual(str(read.exception), "Use item['text'] to get field value")
        with self.assertRaises(AttributeError) as write:
            quote.text = "b"
        self.assertEqual(str(write.exception), "Use item['text'] = 'b' to set field value")
        self.assertFalse(hasattr(Quote, "text"))

    def test_copy_and_deepcopy(self):
        """copy() shares the values, deepcopy() does not; both keep the class."""
        quote = Quote(text="a", tags=["x"])
        shallow, deep = quote.copy(), quote.deepcopy()
        self.assertIs(type(shallow), Quote)
        self.assertIs(shallow["tags"], quote["tags"])
        self.assertIsNot(deep["tags"], quote["tags"])
        self.assertEqual(copy.deepcopy(quote), quote)
        self.assertEqual(pickle.loads(pickle.dumps(quote)), quote)

    def test_repr_is_the_values(self):
        """repr shows the values as a (pretty-printed, sorted) dict."""
        self.assertEqual(repr(Quote(text="a", author="b")), "{'author': 'b', 'text': 'a'}")
        self.assertEqual(repr(Quote()), "{}")

    def test_top_level_names(self):
        """tinyscrapy.Item and tinyscrapy.Field are the declared item classes."""
        self.assertIs(tinyscrapy.Item, Item)
        self.assertIs(tinyscrapy.Field, Field)


@dataclass
class Book:
    title: str


class RegistryTests(unittest.TestCase):
    """Item.classes names item classes for the frontier's codec."""

    def test_item_classes_named_by_module_and_qualname(self):
        """Every Item subclass is in Item.classes under module.QualName."""
        self.assertIs(Item.classes[f"{__name__}.Quote"], Quote)
        self.assertIs(Item.classes[f"{__name__}.LongQuote"], LongQuote)

    def test_register_item_class(self):
        """register_item_class adds a dataclass to the same registry and returns it."""
        self.assertIs(register_item_class(Book), Book)
        self.assertIs(Item.classes[f"{__name__}.Book"], Book)


class AdapterTests(unittest.TestCase):
    """itemadapter sees our items with their field metadata."""

    def test_is_item_and_field_meta(self):
        """is_item, field_names and get_field_meta answer for an Item."""
        quote = Quote(text="a")
        self.assertTrue(is_item(quote))
        self.assertTrue(ItemAdapter.is_item_class(Quote))
        adapter = ItemAdapter(quote)
        self.assertEqual(list(adapter.field_names()), ["text", "author", "tags", "url"])
        self.assertIsInstance(adapter.get_field_meta("author")["output_processor"], TakeFirst)
        self.assertEqual(adapter.asdict(), {"text": "a"})
        adapter["author"] = "b"
        self.assertEqual(quote["author"], "b")


PAGE = b"""<html><body>
<div class="quote"><span class="text">  Hello  </span><small>Ann</small><small>Bo</small>
<a class="tag">x</a><a class="tag">y</a></div>
</body></html>"""


def page(body=PAGE, url="http://127.0.0.1/q"):
    return HttpResponse(url, 200, {"Content-Type": "text/html; charset=utf-8"}, body)


class QuoteLoader(ItemLoader):
    default_item_class = Quote
    tags_out = Join("|")


class LoaderTests(unittest.TestCase):
    """ItemLoader gives what Scrapy's gives."""

    def test_from_response_with_field_processors(self):
        """Field processors apply: TakeFirst gives a string, MapCompose strips."""
        loader = ItemLoader(item=Quote(), response=page())
        loader.add_css("text", "span.text::text")
        loader.add_xpath("author", "//small/text()")
        loader.add_css("tags", "a.tag::text")
        loader.add_value("url", "http://127.0.0.1/q")
        item = loader.load_item()
        self.assertIs(type(item), Quote)
        self.assertEqual(dict(item), {"text": "Hello", "author": "Ann", "tags": ["x", "y"],
                                      "url": "http://127.0.0.1/q"})

    def test_loader_class_processors_and_default_item(self):
        """The loader class's default_item_class and field_out processors apply."""
        loader = QuoteLoader(response=page())
        loader.add_css("tags", "a.tag::text")
        item = loader.load_item()
        self.assertIs(type(item), Quote)
        self.assertEqual(item["tags"], "x|y")

    def test_from_selector_and_nested(self):
        """A loader on a selector, and a nested loader, fill the same item."""
        response = page()
        loader = ItemLoader(item=Quote(), selector=response.css("div.quote")[0])
        loader.add_css("text", "span::text")
        nested = loader.nested_css("div.quote")
        self.assertEqual(nested.item, loader.item)
        loader = ItemLoader(item=Quote(), response=response)
        nested = loader.nested_xpath("//div[@class='quote']")
        nested.add_css("author", "small::text")
        self.assertEqual(dict(loader.load_item()), {"author": "Ann"})

    def test_default_item_and_context(self):
        """Without an item the loader makes an Item; the response is in the context."""
        response = page()
        loader = ItemLoader(response=response)
        self.assertIs(type(loader.item), Item)
        self.assertIs(loader.context["response"], response)

    def test_dict_item_values_are_lists(self):
        """A dict item has no field metadata: values stay lists, as in Scrapy."""
        loader = ItemLoader(item={}, response=page())
        loader.add_css("text", "span.text::text")
        self.assertEqual(loader.load_item(), {"text": ["  Hello  "]})


# the crawl: a two-page quotes site, Items from a loader, two pipelines, four feeds

QUOTES = """<div class="quote"><span class="text">{text}</span><small>{author}</small>
{tags}</div>"""


def quotes_page(quotes, next_href=None):
    html = "".join(QUOTES.format(text=text, author=author,
                                 tags="".join(f'<a class="tag">{t}</a>' for t in tags))
                   for text, author, tags in quotes)
    if next_href:
        html += f'<li class="next"><a href="{next_href}">Next</a></li>'
    return html


class QuotesSpider(Spider):
    name = "quotes"

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        for quote in response.css("div.quote"):
            loader = ItemLoader(item=Quote(), selector=quote)
            loader.add_css("text", "span.text::text")
            loader.add_css("author", "small::text")
            loader.add_css("tags", "a.tag::text")
            loader.add_value("url", response.url)
            yield loader.load_item()
        next_page = response.css("li.next a::attr(href)").get()
        if next_page:
            yield response.follow(next_page)


class NoSpiderPipeline:
    """Scrapy 2.13's signatures: no spider argument anywhere."""

    opened = closed = 0

    def open_spider(self):
        type(self).opened += 1

    def close_spider(self):
        type(self).closed += 1

    def process_item(self, item):
        if item["author"] == "Nobody":
            raise DropItem("anonymous")
        item["author"] = item["author"].upper()
        return item


class AsyncPipeline:
    """An async def process_item that awaits before answering."""

    async def process_item(self, item, spider):
        await task.deferLater(reactor, 0, lambda: None)
        item["tags"] = sorted(item.get("tags", []))
        return item


class CrawlTests(unittest.TestCase):
    """Items, a loader, two pipelines and the feeds, end to end."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/", body=quotes_page(
            [("  Be kind & brave ", "Ann", ["b", "a"]), ("Ignore me", "Nobody", [])],
            next_href="/page/2/"))
        self.server.add_page("/page/2/", body=quotes_page([("Two &lt;less&gt;", "Bo", [])]))
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    @defer.inlineCallbacks
    def test_items_through_pipelines_into_every_feed(self):
        """Loader Items pass the no-spider and async pipelines into jsonl, json, csv and
        xml feeds, written as Scrapy writes them."""
        NoSpiderPipeline.opened = NoSpiderPipeline.closed = 0
        feeds = {os.path.join(self.tmp, f"q.{ext}"): {} for ext in ("jsonl", "json", "csv",
                                                                     "xml")}
        crawler = yield crawl(QuotesSpider, {
            "FEEDS": feeds, "CONCURRENT_REQUESTS": 1,
            "ITEM_PIPELINES": {NoSpiderPipeline: 100, AsyncPipeline: 200},
        }, start=self.start)
        self.assertEqual((NoSpiderPipeline.opened, NoSpiderPipeline.closed), (1, 1))
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 2)
        self.assertEqual(crawler.stats.get_value("item_dropped_count"), 1)
        first = {"text": "Be kind & brave", "author": "ANN", "tags": ["a", "b"],
                 "url": self.start}
        second = {"text": "Two <less>", "author": "BO", "tags": [],
                  "url": self.server.url("/page/2/")}
        path = os.path.join(self.tmp, "q.")
        with open(path + "jsonl", encoding="utf-8") as f:
            self.assertEqual([json.loads(line) for line in f], [first, second])
        with open(path + "json", encoding="utf-8") as f:
            self.assertEqual(json.load(f), [first, second])
        with open(path + "csv", encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows, [["text", "author", "tags", "url"],
                                ["Be kind & brave", "ANN", "a,b", self.start],
                                ["Two <less>", "BO", "", second["url"]]])
        with open(path + "xml", "rb") as f:
            xml = f.read()
        self.assertTrue(xml.startswith(b'<?xml version="1.0" encoding="utf-8"?>\n<items>\n'
                                       b"<item><text>Be kind &amp; brave</text>"))
        root = ET.fromstring(xml)
        self.assertEqual([item.findtext("author") for item in root], ["ANN", "BO"])
        self.assertEqual([v.text for v in root[0].find("tags")], ["a", "b"])

    @defer.inlineCallbacks
    def test_async_pipeline_drops_after_awaiting(self):
        """An async def process_item that raises DropItem after an await drops the item."""
        crawler = yield crawl(QuotesSpider, {"ITEM_PIPELINES": {AsyncDropper: 1}},
                              start=self.start)
        self.assertEqual(crawler.stats.get_value("item_dropped_count"), 3)
        self.assertIsNone(crawler.stats.get_value("item_scraped_count"))


class AsyncDropper:
    async def process_item(self, item):
        await task.deferLater(reactor, 0, lambda: None)
        raise DropItem("every one")


PORTED_SPIDER = '''
import tinyscrapy as scrapy
from itemloaders.processors import TakeFirst
from tinyscrapy.loader import ItemLoader


class Quote(scrapy.Item):
    text = scrapy.Field(output_processor=TakeFirst())
    author = scrapy.Field(output_processor=TakeFirst())


class Upper:
    def process_item(self, item):
        item["author"] = item["author"].upper()
        return item


class QuotesSpider(scrapy.Spider):
    name = "quotes"
    custom_settings = {"ITEM_PIPELINES": {Upper: 300}}

    def start_requests(self):
        yield scrapy.Request(self.start)

    def parse(self, response):
        for quote in response.css("div.quote"):
            loader = ItemLoader(item=Quote(), selector=quote)
            loader.add_css("text", "span.text::text")
            loader.add_css("author", "small::text")
            yield loader.load_item()
'''


class CommandTests(unittest.TestCase):
    """A Scrapy-style spider file with an Item, a loader and a pipeline, from the shell."""

    @defer.inlineCallbacks
    def test_runspider_into_an_xml_feed(self):
        """runspider FILE -O out.xml writes the loader's Items through the pipeline."""
        server = serve(self)
        start = server.add_page("/", body=quotes_page([("One", "ann", []), ("Two", "bo", [])]))
        tmp = os.path.abspath(self.mktemp())
        os.makedirs(tmp)
        with open(os.path.join(tmp, "quotes.py"), "w") as f:
            f.write(PORTED_SPIDER)
        code, _, err = yield run_command(reactor, [
            "runspider", "quotes.py", "-a", f"start={start}", "-O", "out.xml"], cwd=tmp)
        self.assertEqual(code, 0, err)
        root = ET.parse(os.path.join(tmp, "out.xml")).getroot()
        self.assertEqual([(e.findtext("text"), e.findtext("author")) for e in root],
                         [("One", "ANN"), ("Two", "BO")])

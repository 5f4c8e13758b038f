"""
The details a Scrapy spider relies on: its name, C{start_urls}, C{update_settings()},
settings written in C{from_crawler}, its logger, C{response.meta["depth"]}, and Scrapy's
component paths in settings.
"""

import logging

from twisted.internet import defer
from twisted.trial import unittest

from tinyscrapy import Request, Spider
from tinyscrapy.crawler import Crawler
from tinyscrapy.exceptions import UsageError
from tinyscrapy.middleware import ordered_paths
from tinyscrapy.settings import Settings

from .helpers import crawl_and_collect as run
from .helpers import serve
from .logs import capture_logs


class Depths(Spider):
    """Records response.meta['depth'] of each page; follows links both ways."""

    name = "depths"

    def parse(self, response):
        yield {"path": response.url.rsplit("/", 1)[1], "depth": response.meta["depth"]}
        for href in response.css("a::attr(href)").getall():
            if "by-hand" in href:
                yield Request(response.urljoin(href), meta=response.meta)
            else:
                yield response.follow(href)


class SpiderTests(unittest.TestCase):
    """The base Spider as Scrapy defines it."""

    def test_a_spider_needs_a_name(self):
        """No name: Scrapy's ValueError; a name given as an argument is enough."""
        class Nameless(Spider):
            pass
        e = self.assertRaises(ValueError, Nameless)
        self.assertEqual(str(e), "Nameless must have a name")
        self.assertEqual(Nameless(name="given").name, "given")

    def test_start_urls_default_to_a_list(self):
        """start_urls is a list of each spider's own, ready to append to."""
        class Appends(Spider):
            name = "appends"
        one, two = Appends(), Appends()
        one.start_urls.append("http://127.0.0.1/")
        self.assertEqual((one.start_urls, two.start_urls), (["http://127.0.0.1/"], []))

    def test_logger_is_named_after_the_spider(self):
        """spider.logger logs under the spider's name; log() at DEBUG by default."""
        logs = capture_logs(self, "books")
        spider = Spider(name="books")
        spider.logger.info("hello")
        spider.log("quiet")
        spider.log("loud", logging.WARNING)
        self.assertEqual([(r.name, r.levelno, r.getMessage()) for r in logs.records], [
            ("books", logging.INFO, "hello"), ("books", logging.DEBUG, "quiet"),
            ("books", logging.WARNING, "loud")])
        self.assertIs(logs.records[0].spider, spider)

    def test_update_settings(self):
        """An update_settings() classmethod changes the crawl's settings, at spider level."""
        class Tuned(Spider):
            name = "tuned"
            custom_settings = {"DOWNLOAD_DELAY": 0.5}

            @classmethod
            def update_settings(cls, settings):
                super().update_settings(settings)
                settings.set("CONCURRENT_REQUESTS", 3, priority="spider")
                settings.setdict({"DEPTH_LIMIT": 2}, priority="spider")
        crawler = Crawler(Tuned, Settings({"CONCURRENT_REQUESTS": 8}))
        self.assertEqual(crawler.settings.getint("CONCURRENT_REQUESTS"), 3)
        self.assertEqual(crawler.settings.getfloat("DOWNLOAD_DELAY"), 0.5)
        self.assertEqual(crawler.settings.priority("CONCURRENT_REQUESTS"), "spider")
        self.assertEqual(crawler.settings.getint("DEPTH_LIMIT"), 2)

    @defer.inlineCallbacks
    def test_settings_writable_in_from_crawler(self):
        """from_crawler may still set settings; the crawl uses them, then they freeze."""
        server = serve(self)
        server.add_page("/a")
        seen = []

        class Configures(Spider):
            name = "configures"

            @classmethod
            def from_crawler(cls, crawler, *args, **kwargs):
                crawler.settings["CONCURRENT_REQUESTS"] = 2
                return super().from_crawler(crawler, *args, **kwargs)

            def parse(self, response):
                seen.append(self.crawler.engine.max)
                try:
                    self.settings.set("CONCURRENT_REQUESTS", 5)
                except TypeError:
                    seen.append("frozen")
        yield run(Configures, start_urls=[server.url("/a")])
        self.assertEqual(seen, [2, "frozen"])

    @defer.inlineCallbacks
    def test_response_meta_depth(self):
        """meta['depth']: 0 on a start page, one more a link, also for Request(meta=...)."""
        server = serve(self)
        start = server.add_page("/start", links=["/one"])
        server.add_page("/one", links=["/by-hand"])
        server.add_page("/by-hand")
        _, items = yield run(Depths, start_urls=[start])
        self.assertEqual(sorted((i["depth"], i["path"]) for i in items),
                         [(0, "start"), (1, "one"), (2, "by-hand")])


class ScrapyComponentPathTests(unittest.TestCase):
    """Scrapy's built-in paths in component settings mean tinyscrapy's equivalents."""

    def test_switching_off_by_scrapys_path(self):
        """Scrapy's UserAgentMiddleware path set to None switches ours off (the same path
        under tinyscrapy.)."""
        settings = Settings({"DOWNLOADER_MIDDLEWARES": {
            "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None,
            "scrapy.downloadermiddlewares.retry.RetryMiddleware": 10}})
        for _ in range(2):
            paths = ordered_paths(settings, "DOWNLOADER_MIDDLEWARES")
        self.assertNotIn("tinyscrapy.downloadermiddlewares.useragent.UserAgentMiddleware", paths)
        self.assertEqual(paths[0], "tinyscrapy.downloadermiddlewares.retry.RetryMiddleware")

    @defer.inlineCallbacks
    def test_switched_off_in_a_crawl(self):
        """In a crawl, the server sees no User-Agent of ours once it is switched off."""
        server = serve(self)
        start = server.add_page("/a")
        crawler, _ = yield run(Depths, {"DOWNLOADER_MIDDLEWARES": {
            "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None}},
            start_urls=[start])
        self.assertNotIn("tinyscrapy", server.requests[0].headers.get("user-agent", ""))
        self.assertEqual(crawler.stats.get_value("item_scraped_count"), 1)

    def test_scrapy_parts_tinyscrapy_lacks(self):
        """Switching off a part tinyscrapy lacks is nothing; asking for it is an error."""
        remote_control = "scrapy.extensions.remote_control.RemoteControl"
        off = Settings({"EXTENSIONS": {remote_control: None}})
        self.assertNotIn(remote_control, ordered_paths(off, "EXTENSIONS"))
        on = Settings({"EXTENSIONS": {remote_control: 500}})
        e = self.assertRaises(UsageError, ordered_paths, on, "EXTENSIONS")
        self.assertIn("has no equivalent in tinyscrapy", str(e))

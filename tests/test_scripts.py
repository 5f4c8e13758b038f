"""
Scrapy's script idioms in child processes: C{CrawlerProcess(settings={...})},
C{CrawlerRunner} in a reactor the script runs, and the asyncio reactor
(C{TWISTED_REACTOR}) from a script and from a spider's C{custom_settings}.
"""

import json
import os
import textwrap

from twisted.internet import defer, reactor
from twisted.trial import unittest

from .helpers import run_command, run_python, serve

SPIDER = """
import tinyscrapy as scrapy


class PagesSpider(scrapy.Spider):
    name = "pages"

    def start_requests(self):
        yield scrapy.Request(self.base + "a")

    def parse(self, response):
        self.logger.info("parsed %s", response.url)
        yield {"url": response.url, "tag": getattr(self, "tag", None)}
"""

PROCESS_SCRIPT = SPIDER + """
from tinyscrapy.crawler import CrawlerProcess

process = CrawlerProcess(settings={"FEEDS": {OUT: {"format": "jsonlines"}}})
process.crawl(PagesSpider, base=BASE, tag="from-kwargs")
process.start()
"""

RUNNER_SCRIPT = SPIDER + """
from twisted.internet import reactor
from tinyscrapy.crawler import CrawlerRunner
from tinyscrapy.utils.log import configure_logging

configure_logging({"LOG_LEVEL": "INFO"})
runner = CrawlerRunner({"FEEDS": {OUT: {"format": "jsonlines"}}})
runner.crawl(PagesSpider, base=BASE, tag="one")
runner.crawl(PagesSpider, base=BASE, tag="two")


def stop(_):
    reactor.stop()


runner.join().addBoth(stop)
reactor.run()
"""

QUIET_SCRIPT = SPIDER + """
from tinyscrapy.crawler import CrawlerProcess


class QuietSpider(PagesSpider):
    custom_settings = {"LOG_LEVEL": "WARNING"}

    def parse(self, response):
        self.logger.warning("warned %s", response.url)
        return super().parse(response)


process = CrawlerProcess(settings={"LOG_FILE": LOGPATH})
process.crawl(QuietSpider, base=BASE)
process.start()
"""

ASYNC_PROCESS_SCRIPT = SPIDER + """
from tinyscrapy.crawler import AsyncCrawlerProcess

process = AsyncCrawlerProcess(settings={"FEEDS": {OUT: {"format": "jsonlines"}}})
process.crawl(PagesSpider, base=BASE, tag="async-process")
process.start()
"""

ASYNC_RUNNER_SCRIPT = SPIDER + """
from tinyscrapy.utils.reactor import install_reactor

install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")

from twisted.internet import reactor
from tinyscrapy.crawler import AsyncCrawlerRunner
from tinyscrapy.utils.defer import deferred_from_coro

runner = AsyncCrawlerRunner({"FEEDS": {OUT: {"format": "jsonlines"}}})


async def crawl():
    await runner.crawl(PagesSpider, base=BASE, tag="first")
    await runner.crawl(PagesSpider, base=BASE, tag="second")  # after the first ended
    await runner.join()


def stop(_):
    reactor.stop()


deferred_from_coro(crawl()).addBoth(stop)
reactor.run()
"""

ASYNCIO_SPIDER = """
import asyncio

import tinyscrapy as scrapy
from twisted.internet import task
from tinyscrapy.utils.defer import maybe_deferred_to_future
from tinyscrapy.utils.reactor import is_asyncio_reactor_installed


class AsyncioSpider(scrapy.Spider):
    name = "aio"
    custom_settings = CUSTOM

    async def start(self):
        await asyncio.sleep(0.01)
        yield scrapy.Request(self.base + "a")

    async def parse(self, response):
        from twisted.internet import reactor
        await asyncio.sleep(0.01)
        await maybe_deferred_to_future(task.deferLater(reactor, 0.01, lambda: None))
        yield {"url": response.url, "asyncio": is_asyncio_reactor_installed()}
"""

ASYNCIO_SCRIPT = ASYNCIO_SPIDER.replace("CUSTOM", "{}") + """
from tinyscrapy.crawler import CrawlerProcess


class SleepsBeforeRequests:
    async def process_request(self, request, spider):
        await asyncio.sleep(0.01)


class SleepsOverOutput:
    async def process_spider_output(self, response, result, spider):
        for each in result:
            await asyncio.sleep(0.01)
            each["seen_by_middleware"] = True
            yield each


process = CrawlerProcess(settings={
    "FEEDS": {OUT: {"format": "jsonlines"}},
    "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
    "DOWNLOADER_MIDDLEWARES": {SleepsBeforeRequests: 10},
    "SPIDER_MIDDLEWARES": {SleepsOverOutput: 10},
})
process.crawl(AsyncioSpider, base=BASE)
process.start()
"""


GC_SCRIPT = """
import gc
import tinyscrapy as scrapy
from tinyscrapy.crawler import CrawlerProcess, CrawlerRunner

DISABLE


class GcSpider(scrapy.Spider):
    name = "gc"

    def start_requests(self):
        yield scrapy.Request(BASE + "a")

    def parse(self, response):
        yield {"threshold": gc.get_threshold()[0], "frozen": gc.get_freeze_count(),
               "enabled": gc.isenabled()}


CrawlerRunner({})  # a runner alone changes nothing
assert gc.get_threshold()[0] == 700 and gc.get_freeze_count() == 0
process = CrawlerProcess(settings={"FEEDS": {OUT: {"format": "jsonlines"}}})
process.crawl(GcSpider)
process.start()
"""


def run_script(path, timeout=60):
    """
    Run C{python PATH} with C{reactor.spawnProcess}, in the script's folder.

    @return: a Deferred firing with C{(exit status, stdout, stderr)}.
    """
    return run_python(reactor, [path], os.path.dirname(path), timeout)


class ScriptTests(unittest.TestCase):
    """Scripts written the way Scrapy's docs write them."""

    def setUp(self):
        self.server = serve(self)
        self.server.add_page("/a")
        self.base = self.server.url("/")
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)
        self.out = os.path.join(self.tmp, "items.jsonl")
        self.log = os.path.join(self.tmp, "crawl.log")

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        text = textwrap.dedent(text).replace("OUT", repr(self.out)).replace(
            "BASE", repr(self.base)).replace("LOGPATH", repr(self.log))
        with open(path, "w") as f:
            f.write(text)
        return path

    def items(self):
        with open(self.out) as f:
            return [json.loads(line) for line in f]

    @defer.inlineCallbacks
    def test_crawler_process_with_a_dict(self):
        """CrawlerProcess(settings={...}), crawl(cls, **kwargs), start(): items, logging
        on stderr with the spider's logger named after the spider."""
        code, _, err = yield run_script(self.write("script.py", PROCESS_SCRIPT))
        self.assertEqual(code, 0, err)
        self.assertEqual(self.items(), [{"url": self.base + "a", "tag": "from-kwargs"}])
        self.assertIn(f"[pages] INFO: parsed {self.base}a", err)
        self.assertIn("[tinyscrapy.crawler] INFO:", err)

    @defer.inlineCallbacks
    def test_log_file_and_a_spiders_log_level(self):
        """LOG_FILE takes the log off stderr; a spider's custom_settings LOG_LEVEL rules."""
        code, _, err = yield run_script(self.write("script.py", QUIET_SCRIPT))
        self.assertEqual(code, 0, err)
        with open(self.log) as f:
            log = f.read()
        self.assertIn(f"[pages] WARNING: warned {self.base}a", log)
        self.assertNotIn("INFO", log)
        self.assertNotIn("warned", err)

    @defer.inlineCallbacks
    def test_crawler_runner_in_the_scripts_reactor(self):
        """CrawlerRunner: two crawls in the script's reactor; join() fires after both."""
        code, _, err = yield run_script(self.write("script.py", RUNNER_SCRIPT))
        self.assertEqual(code, 0, err)
        self.assertEqual(sorted(i["tag"] for i in self.items()), ["one", "two"])
        self.assertIn("[pages] INFO: parsed", err)

    @defer.inlineCallbacks
    def test_asyncio_reactor_from_a_script(self):
        """TWISTED_REACTOR in the script's settings: start(), callbacks and middlewares
        await asyncio."""
        code, _, err = yield run_script(self.write("script.py", ASYNCIO_SCRIPT))
        self.assertEqual(code, 0, err)
        self.assertEqual(self.items(), [{"url": self.base + "a", "asyncio": True,
                                         "seen_by_middleware": True}])

    @defer.inlineCallbacks
    def test_async_crawler_process(self):
        """AsyncCrawlerProcess installs the asyncio reactor and crawls."""
        code, _, err = yield run_script(self.write("script.py", ASYNC_PROCESS_SCRIPT))
        self.assertEqual(code, 0, err)
        self.assertEqual(self.items(), [{"url": self.base + "a", "tag": "async-process"}])

    @defer.inlineCallbacks
    def test_async_crawler_runner_in_sequence(self):
        """AsyncCrawlerRunner: crawl() is awaitable, so crawls run one after another."""
        code, _, err = yield run_script(self.write("script.py", ASYNC_RUNNER_SCRIPT))
        self.assertEqual(code, 0, err)
        self.assertEqual([i["tag"] for i in self.items()], ["first", "second"])

    @defer.inlineCallbacks
    def test_asyncio_reactor_from_custom_settings(self):
        """runspider with TWISTED_REACTOR in custom_settings: the asyncio reactor runs it."""
        spider = self.write("aio.py", ASYNCIO_SPIDER.replace(
            "CUSTOM", '{"TWISTED_REACTOR": '
                      '"twisted.internet.asyncioreactor.AsyncioSelectorReactor"}'))
        code, _, err = yield run_command(reactor, ["runspider", spider, "-a",
                                                   f"base={self.base}", "-O", self.out])
        self.assertEqual(code, 0, err)
        self.assertEqual(self.items(), [{"url": self.base + "a", "asyncio": True}])

    @defer.inlineCallbacks
    def test_asyncio_reactor_for_the_demo_spiders(self):
        """run -s TWISTED_REACTOR=...: installed before the demo site is served."""
        code, _, err = yield run_command(reactor, [
            "run", "-s", "TWISTED_REACTOR=twisted.internet.asyncioreactor."
            "AsyncioSelectorReactor", "-s", "CLOSESPIDER_ITEMCOUNT=5", "-O", self.out])
        self.assertEqual(code, 0, err)
        self.assertGreaterEqual(len(self.items()), 10)

    @defer.inlineCallbacks
    def test_bad_reactor_is_a_usage_error(self):
        """TWISTED_REACTOR naming no reactor: one line naming the setting, exit 2."""
        spider = self.write("pages.py", SPIDER)
        code, _, err = yield run_command(reactor, [
            "runspider", spider, "-a", f"base={self.base}", "-s",
            "TWISTED_REACTOR=twisted.internet.nope.NopeReactor"])
        self.assertEqual(code, 2, err)
        self.assertEqual(err.strip().splitlines()[-1],
                         "tinyscrapy: error: setting TWISTED_REACTOR='twisted.internet.nope."
                         "NopeReactor': not a reactor that can be installed (its module has "
                         "no install())")

    @defer.inlineCallbacks
    def test_nameless_spider_is_a_usage_error(self):
        """runspider of a spider without a name: Scrapy's message, one line, exit 2."""
        spider = self.write("nameless.py", SPIDER.replace('    name = "pages"\n', ""))
        code, _, err = yield run_command(reactor, ["runspider", spider, "-a",
                                                   f"base={self.base}"])
        self.assertEqual(code, 2, err)
        self.assertEqual(err.strip().splitlines()[-1],
                         "tinyscrapy: error: PagesSpider must have a name")

    @defer.inlineCallbacks
    def test_a_spider_that_imports_asyncio_gets_its_reactor(self):
        """No TWISTED_REACTOR, but the spider's module imports asyncio: it runs on the
        asyncio reactor, as under Scrapy's default."""
        spider = self.write("aio.py", ASYNCIO_SPIDER.replace("CUSTOM", "{}"))
        code, _, err = yield run_command(reactor, ["runspider", spider, "-a",
                                                   f"base={self.base}", "-O", self.out])
        self.assertEqual(code, 0, err)
        self.assertEqual(self.items(), [{"url": self.base + "a", "asyncio": True}])
        self.assertIn("AsyncioSpider uses asyncio: running on the asyncio reactor", err)

    @defer.inlineCallbacks
    def test_unknown_scrapy_component_is_a_usage_error(self):
        """A scrapy.* component path with no equivalent: one line, exit 2."""
        spider = self.write("pages.py", SPIDER)
        code, _, err = yield run_command(reactor, [
            "runspider", spider, "-a", f"base={self.base}", "-s",
            'DOWNLOADER_MIDDLEWARES={"scrapy.downloadermiddlewares.nope.Nope": 100}'])
        self.assertEqual(code, 2, err)
        self.assertEqual(err.strip().splitlines()[-1],
                         "tinyscrapy: error: setting DOWNLOADER_MIDDLEWARES: "
                         "'scrapy.downloadermiddlewares.nope.Nope' is not one of Scrapy's "
                         "built-in components that tinyscrapy has (docs/spiders.md)")
        self.assertNotIn("Traceback", err)

    @defer.inlineCallbacks
    def test_crawler_process_tunes_the_collector(self):
        """CrawlerProcess.start freezes the objects made before the crawl and collects the
        youngest generation every 20,000 allocations, unless the script disabled the
        collector."""
        from tinyscrapy.utils.gc import YOUNG_THRESHOLD
        code, _, err = yield run_script(self.write("script.py",
                                                   GC_SCRIPT.replace("DISABLE", "")))
        self.assertEqual(code, 0, err)
        [item] = self.items()
        self.assertEqual(item["threshold"], YOUNG_THRESHOLD)
        self.assertGreater(item["frozen"], 10000)  # modules, classes, functions
        os.remove(self.out)
        code, _, err = yield run_script(self.write("script.py", GC_SCRIPT.replace(
            "DISABLE", "gc.disable()")))
        self.assertEqual(code, 0, err)
        self.assertEqual(self.items(), [{"threshold": 700, "frozen": 0, "enabled": False}])

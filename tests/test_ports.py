"""
Spiders written for Scrapy, ported by the import rule alone, yield what Scrapy yields.

Each spider of C{tests/ports/} is written as a Scrapy user writes one (the tutorial,
quotesbot's CSS and XPath spiders, a login with C{FormRequest.from_response}, the quotes
API, items and loaders, a C{CrawlSpider}, C{SitemapSpider}s, a C{CrawlerProcess} script,
a project). Here it is pointed at the local replicas of C{tests/replicas.py}, its imports
rewritten by the rule (L{port_imports}), run by tinyscrapy, and its items compared with
C{tests/ports/expected/NAME.json}: what Scrapy 2.19 yielded for the same spider against
the same replicas (made by C{python -m tests.portcheck --write}, which runs both).

Most run in this process; the script and the project, whose ways of starting are the
point, run as child processes.
"""

import importlib.util
import json
import os
import shutil
import sys

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy.crawler import Crawler
from tinyscrapy.http import FormRequest
from tinyscrapy.settings import Settings
from tinyscrapy.spiders import Spider

from .helpers import needs_processes, run_command
from .portcheck import EXPECTED, PORTS, canonical
from .replicas import localize, port_imports, start_replicas


def expected(name):
    with open(os.path.join(EXPECTED, name + ".json"), encoding="utf-8") as stream:
        return json.load(stream)


def ported_source(name, ports):
    """The spider file C{name}, pointed at the replicas and ported by the import rule."""
    with open(os.path.join(PORTS, name + ".py"), encoding="utf-8") as stream:
        return port_imports(localize(stream.read(), ports))


class PortedSpiderTests(unittest.TestCase):
    """Each ported spider, run by tinyscrapy, yields Scrapy's items."""

    def setUp(self):
        self.servers = start_replicas(reactor)
        for server in self.servers.values():
            self.addCleanup(server.stop)
        self.ports = {domain: server.port for domain, server in self.servers.items()}
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    def load(self, name):
        """Import the ported spider file C{name}; return its spider class."""
        path = os.path.join(self.tmp, name + ".py")
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(ported_source(name, self.ports))
        module_name = name  # as runspider imports it: a setting may name the module
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        self.addCleanup(sys.modules.pop, module_name, None)
        spec.loader.exec_module(module)
        found = [value for value in vars(module).values()
                 if isinstance(value, type) and issubclass(value, Spider)
                 and value.__module__ == module_name]
        self.assertEqual(len(found), 1, found)
        return found[0]

    @defer.inlineCallbacks
    def run_spider(self, name):
        """Crawl the ported spider C{name} here, its items fed to a JSON lines file (as
        C{-O out.jsonl} does); fire with them."""
        spidercls = self.load(name)
        out = os.path.join(self.tmp, name + ".jsonl")
        settings = {"LOG_LEVEL": "WARNING", "FEEDS": {out: {"format": "jsonlines"}}}
        crawler = Crawler(spidercls, Settings(settings, "cmdline"))
        yield crawler.crawl()
        self.assertEqual(crawler.stats.get_value("spider_exceptions/count", 0), 0)
        with open(out, encoding="utf-8") as stream:
            return [json.loads(line) for line in stream]

    @defer.inlineCallbacks
    def check(self, name):
        items = yield self.run_spider(name)
        self.assertEqual(canonical(items, self.ports), canonical(expected(name)))

    def test_tutorial_quotes(self):
        """The Scrapy tutorial's spider: async def start(), css, response.follow."""
        return self.check("tutorial_quotes")

    def test_quotesbot_css(self):
        """quotesbot's CSS spider: extract_first(), urljoin, scrapy.Request."""
        return self.check("quotesbot_css")

    def test_quotesbot_xpath(self):
        """quotesbot's XPath spider."""
        return self.check("quotesbot_xpath")

    def test_authors(self):
        """The tutorial's author spider: follow_all (links and css=), duplicates filtered."""
        return self.check("authors")

    def test_login(self):
        """A login with FormRequest.from_response, the CSRF token and the session cookie."""
        if not hasattr(FormRequest, "from_response"):
            raise unittest.SkipTest("FormRequest.from_response is not there yet (the "
                                    "HTTP-parity work adds it)")
        return self.check("login")

    def test_api_quotes(self):
        """The quotes API spider: json.loads(response.text), has_next."""
        return self.check("api_quotes")

    def test_api_json(self):
        """start() beside start_requests() (only start() runs), JsonRequest, cb_kwargs."""
        return self.check("api_json")

    def test_tag_argument(self):
        """The tutorial's tag spider: getattr(self, 'tag', ...), meta['depth']."""
        return self.check("tag_argument")

    def test_status_errback(self):
        """handle_httpstatus_list, HttpError in an errback, redirect_urls, Selector(text=)."""
        return self.check("status_errback")

    def test_signals_js(self):
        """from_crawler and signals, custom_settings, dataclass items, data in a script."""
        return self.check("signals_js")

    def test_pipeline_in_file(self):
        """A pipeline named by the spider file's module, a field serializer, DropItem, a
        LinkExtractor called by hand, a plain FormRequest login, closed()."""
        return self.check("pipeline_in_file")

    def test_loader_re(self):
        """ItemLoader default processors and re=, .re(), normalize-space, cb_kwargs."""
        return self.check("loader_re")

    def test_follow_all_xpath(self):
        """follow_all(xpath=, cb_kwargs=), SelectorList.attrib, callbacks returning lists."""
        return self.check("follow_all_xpath")

    def test_crawl_rules(self):
        """CrawlSpider rules with cb_kwargs, process_request, errback, LinkExtractor
        options, and loader-context processors."""
        return self.check("crawl_rules")

    def test_xml_feed(self):
        """An XMLFeedSpider over RSS, node by node, a namespaced tag in each node."""
        return self.check("xml_feed")

    def test_xml_index(self):
        """An XMLFeedSpider with iterator 'xml' and a namespace prefix in itertag."""
        return self.check("xml_index")

    def test_csv_feed(self):
        """A CSVFeedSpider: rows by header, a broken row skipped, process_results."""
        return self.check("csv_feed")

    def test_books_basic(self):
        """The books tutorial spider: pods, the rating class, next pages."""
        return self.check("books_basic")

    def test_books_loader(self):
        """Item and ItemLoader: field processors, an item in meta, a nested loader."""
        return self.check("books_loader")

    def test_books_crawl(self):
        """A CrawlSpider: rules with restrict_css/xpaths, allow/deny, process_links."""
        return self.check("books_crawl")

    def test_books_categories(self):
        """Category links, meta carried on, breadcrumbs, re_first, DEPTH_LIMIT."""
        return self.check("books_categories")

    def test_sitemap_shop(self):
        """A SitemapSpider from robots.txt: an index, a gzipped sitemap, sitemap_rules."""
        return self.check("sitemap_shop")

    def test_sitemap_filter(self):
        """A SitemapSpider with sitemap_follow and sitemap_filter on lastmod."""
        return self.check("sitemap_filter")

    @defer.inlineCallbacks
    def test_runspider_command(self):
        """runspider FILE -O out.jsonl on a ported file writes Scrapy's items."""
        path = os.path.join(self.tmp, "quotesbot_xpath.py")
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(ported_source("quotesbot_xpath", self.ports))
        code, _, err = yield run_command(reactor, ["runspider", path, "-O", "out.jsonl"],
                                         cwd=self.tmp)
        self.assertEqual(code, 0, err)
        self.assertEqual(self.read_items("out.jsonl"),
                         canonical(expected("quotesbot_xpath")))

    @defer.inlineCallbacks
    def test_crawler_process_script(self):
        """A CrawlerProcess script, run with python, writes its FEEDS as Scrapy's does."""
        path = os.path.join(self.tmp, "script_process.py")
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(ported_source("script_process", self.ports))
        code, err = yield self.run_python([path])
        self.assertEqual(code, 0, err)
        self.assertEqual(self.read_items("items.jsonl"), canonical(expected("script_process")))

    @defer.inlineCallbacks
    def test_project(self):
        """A Scrapy project (scrapy.cfg, settings, items, pipelines): crawl NAME."""
        project = os.path.join(self.tmp, "bookshop")
        shutil.copytree(os.path.join(PORTS, "bookshop"), project)
        for folder, _, files in os.walk(project):
            for filename in files:
                if filename.endswith(".py"):
                    path = os.path.join(folder, filename)
                    with open(path, encoding="utf-8") as stream:
                        source = stream.read()
                    with open(path, "w", encoding="utf-8") as stream:
                        stream.write(port_imports(localize(source, self.ports)))
        out = os.path.join(self.tmp, "out.jsonl")
        code, _, err = yield run_command(reactor, ["crawl", "catalogue", "-O", out],
                                         cwd=project)
        self.assertEqual(code, 0, err)
        self.assertEqual(self.read_items("out.jsonl"), canonical(expected("bookshop")))

    def read_items(self, name):
        with open(os.path.join(self.tmp, name), encoding="utf-8") as stream:
            return canonical([json.loads(line) for line in stream], self.ports)

    def run_python(self, args):
        """Run C{python ARGS} in the temporary folder, as L{run_command} runs commands."""
        from twisted.internet import protocol

        from .helpers import subprocess_env

        class Collect(protocol.ProcessProtocol):
            def __init__(self):
                self.err = []
                self.done = defer.Deferred()

            def errReceived(self, data):
                self.err.append(data)

            def processEnded(self, reason):
                if timer.active():
                    timer.cancel()
                self.done.callback((reason.value.exitCode, b"".join(self.err).decode()))

        needs_processes("python")
        collect = Collect()
        transport = reactor.spawnProcess(collect, sys.executable, [sys.executable, *args],
                                         env=subprocess_env(), path=self.tmp)
        timer = reactor.callLater(60, transport.signalProcess, "KILL")
        return collect.done

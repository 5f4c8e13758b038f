"""
Projects as Scrapy users organise them: C{startproject}, C{genspider}, C{tinyscrapy.cfg}
and its settings module, spiders by name (C{run NAME}, C{crawl NAME}, C{list}) and
C{parse URL}, each end to end in a child process against a local server.
"""

import json
import os
import textwrap

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy.exceptions import UsageError
from tinyscrapy.utils.conf import find_config
from tinyscrapy.utils.project import get_project_settings

from .helpers import run_command, serve

SPIDER = """
import tinyscrapy


class PagesSpider(tinyscrapy.Spider):
    name = "pages"
    allowed_domains = ["127.0.0.1"]

    def start_requests(self):
        yield tinyscrapy.Request(self.settings.get("START_URL"))

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get(),
               "bot": self.settings.get("BOT_NAME")}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse_leaf)

    def parse_leaf(self, response):
        yield {"leaf": response.url}
"""


class ProjectTests(unittest.TestCase):
    """A project written by startproject runs its spiders by name, with its settings."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/", links=["/a", "/b"], title="home")
        self.server.add_page("/a", title="a")
        self.server.add_page("/b", title="b")
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)
        self.project = os.path.join(self.tmp, "shop")

    @defer.inlineCallbacks
    def make_project(self):
        code, out, err = yield run_command(reactor, ["startproject", "shop"], cwd=self.tmp)
        self.assertEqual(code, 0, err)
        with open(os.path.join(self.project, "shop", "spiders", "pages.py"), "w") as f:
            f.write(textwrap.dedent(SPIDER))
        with open(os.path.join(self.project, "shop", "settings.py"), "a") as f:
            f.write(f"\nSTART_URL = {self.start!r}\nROBOTSTXT_OBEY = False\n")
        return out

    @defer.inlineCallbacks
    def test_startproject_writes_a_project(self):
        """startproject NAME writes the config, settings, spiders, pipelines, middlewares."""
        out = yield self.make_project()
        for name in ("tinyscrapy.cfg", "shop/__init__.py", "shop/settings.py",
                     "shop/items.py", "shop/pipelines.py", "shop/middlewares.py",
                     "shop/spiders/__init__.py"):
            self.assertTrue(os.path.isfile(os.path.join(self.project, name)), name)
        with open(os.path.join(self.project, "tinyscrapy.cfg")) as f:
            self.assertIn("default = shop.settings", f.read())
        self.assertIn("genspider", out)
        self.assertEqual(find_config(os.path.join(self.project, "shop", "spiders")),
                         os.path.join(self.project, "tinyscrapy.cfg"))

    def test_scrapy_cfg_makes_a_project(self):
        """A Scrapy project ported by its imports alone (its scrapy.cfg kept) is a project."""
        os.makedirs(os.path.join(self.project, "shop"))
        with open(os.path.join(self.project, "scrapy.cfg"), "w") as f:
            f.write("[settings]\ndefault = shop.settings\n")
        self.assertEqual(find_config(os.path.join(self.project, "shop")),
                         os.path.join(self.project, "scrapy.cfg"))
        with open(os.path.join(self.project, "tinyscrapy.cfg"), "w") as f:
            f.write("[settings]\ndefault = shop.settings\n")
        self.assertEqual(find_config(self.project),
                         os.path.join(self.project, "tinyscrapy.cfg"))

    @defer.inlineCallbacks
    def test_startproject_refuses_an_existing_project(self):
        """A second startproject into the same folder is one line, exit 2."""
        yield self.make_project()
        code, _, err = yield run_command(reactor, ["startproject", "shop"], cwd=self.tmp)
        self.assertEqual(code, 2)
        self.assertIn("already exists", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)

    @defer.inlineCallbacks
    def test_startproject_refuses_a_bad_name(self):
        """A project name that is not an identifier, or an existing module, is refused."""
        for name in ("my-shop", "json"):
            code, _, err = yield run_command(reactor, ["startproject", name], cwd=self.tmp)
            self.assertEqual(code, 2, name)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertEqual(os.listdir(self.tmp), [])

    @defer.inlineCallbacks
    def test_run_by_name_uses_the_project_settings(self):
        """run NAME, from a subfolder of the project, runs it with the settings module."""
        yield self.make_project()
        out = os.path.join(self.tmp, "items.jsonl")
        code, _, err = yield run_command(reactor, ["run", "pages", "-O", out],
                                         cwd=os.path.join(self.project, "shop"))
        self.assertEqual(code, 0, err)
        with open(out) as f:
            items = [json.loads(line) for line in f]
        self.assertEqual(items[0]["bot"], "shop")
        self.assertEqual(sorted(i["leaf"] for i in items[1:]),
                         [self.server.url("/a"), self.server.url("/b")])

    @defer.inlineCallbacks
    def test_run_without_names_runs_every_spider_of_the_project(self):
        """Inside a project, run with no spider named runs all of the project's spiders."""
        yield self.make_project()
        out = os.path.join(self.tmp, "items.jsonl")
        code, _, err = yield run_command(reactor, ["run", "-O", out], cwd=self.project)
        self.assertEqual(code, 0, err)
        with open(out) as f:
            items = [json.loads(line) for line in f]
        self.assertEqual(sorted(i["leaf"] for i in items[1:]),
                         [self.server.url("/a"), self.server.url("/b")])
        self.assertIn("Spider closed (finished): <PagesSpider 'pages'>", err)

    @defer.inlineCallbacks
    def test_crawl_name_runs_the_spider(self):
        """Inside a project, crawl NAME runs that spider, as Scrapy's crawl does."""
        yield self.make_project()
        out = os.path.join(self.tmp, "items.jsonl")
        code, _, err = yield run_command(reactor, ["crawl", "pages", "-O", out],
                                         cwd=self.project)
        self.assertEqual(code, 0, err)
        with open(out) as f:
            self.assertEqual(len(f.readlines()), 3)

    @defer.inlineCallbacks
    def test_unknown_spider_name(self):
        """A name no spider has is one line, exit 2, with a guess."""
        yield self.make_project()
        code, _, err = yield run_command(reactor, ["run", "pagez"], cwd=self.project)
        self.assertEqual(code, 2)
        self.assertIn("did you mean 'pages'", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)

    @defer.inlineCallbacks
    def test_list_and_genspider(self):
        """genspider writes into NEWSPIDER_MODULE (-t crawl, -t sitemap); list names all."""
        yield self.make_project()
        kinds = [("shelf", "basic"), ("cats", "crawl"), ("maps", "sitemap")]
        for name, template in kinds:
            code, _, err = yield run_command(
                reactor, ["genspider", "-t", template, name, "books.example"],
                cwd=self.project)
            self.assertEqual(code, 0, err)
            path = os.path.join(self.project, "shop", "spiders", name + ".py")
            with open(path) as f:
                text = f.read()
            self.assertIn(f'name = "{name}"', text)
            self.assertIn('allowed_domains = ["books.example"]', text)
        code, out, err = yield run_command(reactor, ["list"], cwd=self.project)
        self.assertEqual(code, 0, err)
        self.assertEqual(out.split(), ["cats", "maps", "pages", "shelf"])
        code, _, err = yield run_command(reactor, ["genspider", "shelf", "x.example"],
                                         cwd=self.project)
        self.assertEqual(code, 2)
        self.assertIn("already exists", err)

    @defer.inlineCallbacks
    def test_parse_shows_items_and_requests_by_level(self):
        """parse URL prints what the callback yields, level by level, down to --depth."""
        yield self.make_project()
        code, out, err = yield run_command(reactor, ["parse", self.start, "-d", "2", "-v"],
                                           cwd=self.project)
        self.assertEqual(code, 0, err)
        level1, _, level2 = out.partition(">>> DEPTH LEVEL: 2 <<<")
        self.assertIn(">>> DEPTH LEVEL: 1 <<<", level1)
        self.assertIn("'title': 'home'", level1)
        self.assertIn(f"<GET {self.server.url('/a')}>", level1)
        self.assertIn(f"'leaf': '{self.server.url('/b')}'", level2)
        code, out, err = yield run_command(
            reactor, ["parse", self.server.url("/a"), "--spider", "pages", "-c",
                      "parse_leaf"], cwd=self.project)
        self.assertEqual(code, 0, err)
        self.assertIn(f"'leaf': '{self.server.url('/a')}'", out)
        self.assertIn(">>> STATUS DEPTH LEVEL 1 <<<", out)
        code, _, err = yield run_command(
            reactor, ["parse", self.start, "-c", "nosuch"], cwd=self.project)
        self.assertEqual(code, 2)
        self.assertIn("Cannot find callback 'nosuch' in spider: pages", err)

    @defer.inlineCallbacks
    def test_genspider_templates_and_a_hyphenated_name(self):
        """genspider -l lists the templates; a hyphenated name is the spider's name, its
        module has underscores, and run finds it by the name."""
        yield self.make_project()
        code, out, err = yield run_command(reactor, ["genspider", "-l"], cwd=self.project)
        self.assertEqual(code, 0, err)
        self.assertEqual(out.split()[-5:], ["basic", "crawl", "csvfeed", "sitemap", "xmlfeed"])
        code, _, err = yield run_command(reactor, ["genspider", "shop-front", "x.example"],
                                         cwd=self.project)
        self.assertEqual(code, 0, err)
        with open(os.path.join(self.project, "shop", "spiders", "shop_front.py")) as f:
            text = f.read()
        self.assertIn('name = "shop-front"', text)
        self.assertIn("class ShopFrontSpider", text)
        code, out, err = yield run_command(reactor, ["list"], cwd=self.project)
        self.assertIn("shop-front", out.split())

    @defer.inlineCallbacks
    def test_parse_with_pipelines(self):
        """parse --pipelines sends the items through ITEM_PIPELINES too; without it, none
        reaches them."""
        yield self.make_project()
        marker = os.path.join(self.tmp, "piped.txt")
        with open(os.path.join(self.project, "shop", "pipelines.py"), "a") as f:
            f.write(f"\n\nclass Mark:\n    def process_item(self, item):\n"
                    f"        open({marker!r}, 'a').write('x')\n        return item\n")
        with open(os.path.join(self.project, "shop", "settings.py"), "a") as f:
            f.write("\nITEM_PIPELINES = {'shop.pipelines.Mark': 1}\n")
        code, out, err = yield run_command(reactor, ["parse", self.start, "-c", "parse"],
                                           cwd=self.project)
        self.assertEqual(code, 0, err)
        self.assertFalse(os.path.exists(marker))
        code, out, err = yield run_command(reactor, ["parse", self.start, "--pipelines"],
                                           cwd=self.project)
        self.assertEqual(code, 0, err)
        self.assertIn("'title': 'home'", out)
        with open(marker) as f:
            self.assertEqual(f.read(), "x")

    def test_settings_module_from_the_environment(self):
        """TINYSCRAPY_SETTINGS_MODULE names the settings module, as SCRAPY_SETTINGS_MODULE."""
        folder = os.path.join(self.tmp, "envproject")
        os.makedirs(folder)
        with open(os.path.join(folder, "envproject_settings.py"), "w") as f:
            f.write("DOWNLOAD_DELAY = 1.5\nBOT_NAME = 'env'\n")
        self.patch(os.sys, "path", [folder] + os.sys.path)
        self.patch(os, "environ", dict(os.environ,
                                       TINYSCRAPY_SETTINGS_MODULE="envproject_settings"))
        settings = get_project_settings()
        self.assertEqual(settings.getfloat("DOWNLOAD_DELAY"), 1.5)
        self.assertEqual(settings.priority("BOT_NAME"), "project")

    def test_broken_config_is_one_line(self):
        """A tinyscrapy.cfg without [settings] default is a UsageError naming the file."""
        with open(os.path.join(self.tmp, "tinyscrapy.cfg"), "w") as f:
            f.write("[deploy]\nurl = x\n")
        cwd = os.getcwd()
        os.chdir(self.tmp)
        self.addCleanup(os.chdir, cwd)
        error = self.assertRaises(UsageError, get_project_settings)
        self.assertIn("tinyscrapy.cfg", str(error))

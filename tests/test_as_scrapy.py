"""
C{import scrapy} served by tinyscrapy (L{tinyscrapy.scrapyfinder}): a Scrapy project and two
plugins that import C{scrapy.*} themselves, run unchanged from the project's folder; every
Scrapy path the very tinyscrapy module, whatever the import order; the refusal beside a
Scrapy that is already imported.

The project and the plugins are in C{tests/asscrapy/}. "Scrapy installed" is a package
named C{scrapy} that is not tinyscrapy, in the test's own folder on C{PYTHONPATH}; "already
imported" is that package imported by a C{sitecustomize} there, before the command runs.
"""

import json
import os
import shutil

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tinyscrapy.exceptions import UsageError
from tinyscrapy.scrapyfinder import ScrapyFinder, switch_from_environment, wanted
from tinyscrapy.utils.misc import set_environ

from .helpers import ROOT, run_command, run_python, serve

FIXTURE = os.path.join(ROOT, "tests", "asscrapy")
PLUGINS = os.path.join(FIXTURE, "plugins")
PRODUCT = '<h1>{name}</h1><p class="price">{price}</p>'


def serve_shop(test):
    """The shop's site: a catalogue linking three products, the third without a price."""
    server = serve(test)
    server.add_page("/p/1", body=PRODUCT.format(name="Kettle", price="10"))
    server.add_page("/p/2", body=PRODUCT.format(name="Cup", price="2.5"))
    server.add_page("/p/3", body="<h1>Teapot</h1>")
    server.add_page("/", links=["/p/1", "/p/2", "/p/3"])
    return server


def copy_project(test):
    """The shop project, copied into the test's folder (its data directory goes there)."""
    folder = os.path.join(test.mktemp(), "shop")
    shutil.copytree(os.path.join(FIXTURE, "shop"), folder)
    return folder


def plugins_env(*before):
    """The child's environment: the plugins installed (on C{PYTHONPATH}), the switch's
    variable unset."""
    path = os.pathsep.join([*before, PLUGINS, ROOT, os.environ.get("PYTHONPATH", "")])
    return {"PYTHONPATH": path, "TINYSCRAPY_AS_SCRAPY": None}


def fake_scrapy(test, imported=False):
    """A folder holding a package C{scrapy} that is not tinyscrapy (and, with C{imported},
    a C{sitecustomize} that imports it at start-up). @return: the folder."""
    folder = os.path.abspath(test.mktemp())
    os.makedirs(os.path.join(folder, "scrapy"))
    with open(os.path.join(folder, "scrapy", "__init__.py"), "w", encoding="utf-8") as f:
        f.write('"""Not tinyscrapy."""\n__version__ = "2.19.0"\n')
    if imported:
        with open(os.path.join(folder, "sitecustomize.py"), "w", encoding="utf-8") as f:
            f.write("import scrapy  # noqa: F401\n")
    return folder


def read_items(path):
    with open(path, encoding="utf-8") as stream:
        return sorted((json.loads(line) for line in stream), key=lambda item: item["url"])


class SwitchTests(unittest.TestCase):
    """When a command serves scrapy: the switch, the variable, the project's file."""

    def test_switch_then_variable_then_project(self):
        """--as-scrapy wins, then TINYSCRAPY_AS_SCRAPY, then a scrapy.cfg with no Scrapy
        installed; a tinyscrapy.cfg project, or no project, is left alone."""
        self.assertTrue(wanted(True, False, None, True))
        self.assertFalse(wanted(None, False, "/p/scrapy.cfg", False))
        self.assertTrue(wanted(None, True, None, True))
        self.assertTrue(wanted(None, None, "/p/scrapy.cfg", False))
        self.assertFalse(wanted(None, None, "/p/scrapy.cfg", True))
        self.assertFalse(wanted(None, None, "/p/tinyscrapy.cfg", False))
        self.assertFalse(wanted(None, None, None, False))

    def test_variable_values(self):
        """1/true/yes/on and 0/false/no/off/empty; anything else is a usage error."""
        for value, expected in (("1", True), ("Yes", True), ("on", True), ("0", False),
                                ("off", False), ("", False)):
            with set_environ(TINYSCRAPY_AS_SCRAPY=value):
                self.assertEqual(switch_from_environment(), expected, value)
        with set_environ(TINYSCRAPY_AS_SCRAPY="maybe"):
            error = self.assertRaises(UsageError, switch_from_environment)
        self.assertIn("TINYSCRAPY_AS_SCRAPY='maybe'", str(error))

    def test_finder_answers_scrapy_names_only(self):
        """The finder leaves other names to the next finder, and finds no path tinyscrapy
        lacks (the import system then raises ModuleNotFoundError, as for any module)."""
        finder = ScrapyFinder()
        self.assertIsNone(finder.find_spec("scrapyd", None))
        self.assertIsNone(finder.find_spec("json", None))
        self.assertIsNone(finder.find_spec("scrapy.core.downloader.handlers.ftp", None))
        self.assertIsNone(finder.find_spec("scrapy.nosuch.module", None))
        spec = finder.find_spec("scrapy.utils.url", None)
        self.assertEqual((spec.name, spec.loader_state["tinyscrapy"]),
                         ("scrapy.utils.url", "tinyscrapy.utils.url"))
        self.assertIsNotNone(finder.find_spec("scrapy.http", None).submodule_search_locations)


class ProjectTests(unittest.TestCase):
    """An unmodified Scrapy project with its plugins, run with tinyscrapy's commands."""

    @defer.inlineCallbacks
    def test_crawl_from_its_folder(self):
        """`crawl pages` beside scrapy.cfg: the project's items, loader and pipeline, a
        plugin's middleware (sending the header its setting chose from scrapy.version_info)
        and a plugin's signal receiver, which writes to the project's .scrapy/ folder."""
        server = serve_shop(self)
        project = copy_project(self)
        code, out, err = yield run_command(
            reactor, ["crawl", "pages", "-a", f"base_url={server.url('/')}", "-O",
                      "items.jsonl"], cwd=project, env=plugins_env())
        self.assertEqual(code, 0, err)
        self.assertIn("catalogue: 200 OK", err)
        items = read_items(os.path.join(project, "items.jsonl"))
        self.assertEqual(items, [{"name": "Kettle", "price": 10.0, "url": server.url("/p/1")},
                                 {"name": "Cup", "price": 2.5, "url": server.url("/p/2")}])
        stamps = {request.headers.get("x-stamp") for request in server.requests}
        self.assertEqual(stamps, {"shop-1"})
        with open(os.path.join(project, ".scrapy", "closed.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f), {"spider": "pages", "reason": "finished",
                                            "items": 2})

    @defer.inlineCallbacks
    def test_run_keeps_a_plugins_state_between_runs(self):
        """`run pages` twice: the second run's items are dropped by the plugin that
        remembers them under .scrapy/ (data_path), as scrapy-deltafetch does."""
        server = serve_shop(self)
        project = copy_project(self)
        args = ["run", "pages", "-a", f"base_url={server.url('/')}", "-O", "items.jsonl"]
        for expected in (2, 0):
            code, _, err = yield run_command(reactor, args, cwd=project, env=plugins_env())
            self.assertEqual(code, 0, err)
            self.assertEqual(len(read_items(os.path.join(project, "items.jsonl"))), expected)
        self.assertTrue(os.path.isfile(os.path.join(project, ".scrapy", "seen", "urls.txt")))

    @defer.inlineCallbacks
    def test_switch_shadows_an_installed_scrapy(self):
        """With another Scrapy installed, the project imports it (no switch by itself: its
        `scrapy` lacks version_info, and the settings module fails); --as-scrapy serves
        tinyscrapy instead, and the crawl runs."""
        server = serve_shop(self)
        project = copy_project(self)
        site = fake_scrapy(self)
        args = ["crawl", "pages", "-a", f"base_url={server.url('/')}", "-O", "items.jsonl"]
        code, _, err = yield run_command(reactor, args, cwd=project, env=plugins_env(site))
        self.assertEqual(code, 2, err)
        self.assertIn("cannot import the project's settings module 'shop.settings'", err)
        code, _, err = yield run_command(reactor, ["--as-scrapy", *args], cwd=project,
                                         env=plugins_env(site))
        self.assertEqual(code, 0, err)
        self.assertEqual(len(read_items(os.path.join(project, "items.jsonl"))), 2)

    @defer.inlineCallbacks
    def test_refused_beside_an_imported_scrapy(self):
        """With Scrapy itself already imported, --as-scrapy (or the variable) stops the
        command with one line, exit 2, no traceback, before anything crawls."""
        server = serve_shop(self)
        project = copy_project(self)
        site = fake_scrapy(self, imported=True)
        args = ["crawl", "pages", "-a", f"base_url={server.url('/')}"]
        for extra, env in (([], {"TINYSCRAPY_AS_SCRAPY": "1"}), (["--as-scrapy"], {})):
            code, _, err = yield run_command(reactor, [*args, *extra], cwd=project,
                                             env={**plugins_env(site), **env})
            self.assertEqual(code, 2, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertTrue(err.startswith("tinyscrapy: error: cannot serve `import scrapy` "
                                           "from tinyscrapy: Scrapy itself is already "
                                           "imported"), err)
            self.assertIn(os.path.join(site, "scrapy", "__init__.py"), err)
        self.assertEqual(server.requests, [])


SCRIPT_SPIDER = """
import scrapy


class TitleSpider(scrapy.Spider):
    name = "titles"

    def parse(self, response):
        yield {"title": response.css("title::text").get()}
"""


class RunspiderTests(unittest.TestCase):
    """A spider file written for Scrapy, outside any project."""

    @defer.inlineCallbacks
    def test_runspider_says_to_serve_scrapy(self):
        """Without the switch the file cannot import scrapy: one line that names
        --as-scrapy (exit 2); with it, the spider runs."""
        server = serve(self)
        server.add_page("/", title="Home")
        folder = os.path.abspath(self.mktemp())
        os.makedirs(folder)
        with open(os.path.join(folder, "titles.py"), "w", encoding="utf-8") as f:
            f.write(SCRIPT_SPIDER)
        args = ["runspider", "titles.py", "-a", f"start_urls={server.url('/')}", "-o", "-"]
        code, _, err = yield run_command(reactor, args, cwd=folder,
                                         env={"TINYSCRAPY_AS_SCRAPY": None})
        self.assertEqual(code, 2, err)
        self.assertIn("No module named 'scrapy' (code written for Scrapy: run it with "
                      "--as-scrapy", err)
        code, out, err = yield run_command(reactor, [*args, "--as-scrapy", "-L", "DEBUG"],
                                           cwd=folder, env={"TINYSCRAPY_AS_SCRAPY": None})
        self.assertEqual(code, 0, err)
        self.assertIn("`import scrapy` is served by tinyscrapy", err)  # at DEBUG
        self.assertEqual(json.loads(out), {"title": "Home"})


# a child process: serve scrapy, import in the given order, then report what it sees
ORDER_SCRIPT = """
import importlib, json, sys
sys.path[:0] = {paths!r}
import tinyscrapy
tinyscrapy.install_as_scrapy()
{imports}
import scrapy, tinyscrapy
from itemadapter import ItemAdapter
from shop.items import Product
paths = [line.strip() for line in open({modules!r}) if line.strip() and line[0] != "#"]
mismatched, missing = [], []
for path in paths[1:]:
    ours = "tinyscrapy" + path[len("scrapy"):]
    try:
        theirs = importlib.import_module(path)
    except ModuleNotFoundError:
        missing.append(path)
        continue
    if theirs is not importlib.import_module(ours):
        mismatched.append(path)
files = {{}}
for name, module in list(sys.modules.items()):
    where = getattr(module, "__file__", None)
    if where and name.split(".")[0] in ("scrapy", "tinyscrapy") and name != "scrapy":
        files.setdefault(where, set()).add(id(module))
print(json.dumps({{
    "mismatched": mismatched,
    "missing": missing,
    "twice": sorted(path for path, ids in files.items() if len(ids) > 1),
    "meta": dict(ItemAdapter.get_field_meta_from_class(Product, "price")) == {{}} or
        ItemAdapter(Product(price="1")).get_field_meta("price")["serializer"] is float,
    "face": [scrapy.Spider is tinyscrapy.Spider, scrapy.signals is tinyscrapy.signals,
             scrapy.version_info, scrapy.__version__],
}}))
"""


class ImportOrderTests(unittest.TestCase):
    """Whatever is imported first, every scrapy path is the tinyscrapy module itself."""

    @defer.inlineCallbacks
    def check_order(self, *imports):
        script = ORDER_SCRIPT.format(
            paths=[PLUGINS, os.path.join(FIXTURE, "shop")], imports="\n".join(imports),
            modules=os.path.join(ROOT, "tests", "scrapy-modules.txt"))
        code, out, err = yield run_python(reactor, ["-c", script])
        self.assertEqual(code, 0, err)
        seen = json.loads(out)
        self.assertEqual(seen["mismatched"], [])
        self.assertEqual(seen["twice"], [])
        self.assertEqual(sorted(seen["missing"]), sorted([
            "scrapy.core.downloader.handlers.ftp", "scrapy.core.downloader.handlers.http2",
            "scrapy.core.downloader.handlers.s3", "scrapy.extensions.remote_control",
            "scrapy.utils.boto", "scrapy.utils.ftp", *self.planned()]))
        self.assertTrue(seen["meta"])
        self.assertEqual(seen["face"], [True, True, [2, 19, 0], "2.19.0"])

    def planned(self):
        """Paths another issue still brings (tests/test_layout.py's PLANNED)."""
        from .test_layout import PLANNED, _is_module
        return [path for path in PLANNED if not _is_module("tinyscrapy" + path[6:])]

    def test_itemadapter_first(self):
        """itemadapter imported before scrapy: its probe of scrapy.item finds
        tinyscrapy's Item (field metadata included)."""
        return self.check_order("import itemadapter")

    def test_plugin_before_the_spider(self):
        """A plugin's modules, then the project's spider and items."""
        return self.check_order("import scrapy_seen.pipelines", "import scrapy_stamp.extensions",
                                "import shop.spiders.pages")

    def test_utils_before_scrapy(self):
        """scrapy.utils.* and scrapy.item before scrapy itself."""
        return self.check_order("import scrapy.utils.url", "import scrapy.utils.misc",
                                "from scrapy.item import Item", "import scrapy.http")

    @defer.inlineCallbacks
    def test_a_plain_alias_makes_copies_and_is_refused(self):
        """sys.modules["scrapy"] = tinyscrapy runs signals.py again (a second module whose
        spider_closed is another object), and install_as_scrapy() then refuses, naming the
        alias."""
        script = ("import sys, tinyscrapy\n"
                  "from tinyscrapy.signals import spider_closed\n"
                  "sys.modules['scrapy'] = tinyscrapy\n"
                  "import scrapy.signals\n"
                  "print(sys.modules['scrapy.signals'] is sys.modules['tinyscrapy.signals'] or\n"
                  "      scrapy.signals.spider_closed is spider_closed)\n"
                  "tinyscrapy.install_as_scrapy()\n")
        code, out, err = yield run_python(reactor, ["-c", script])
        self.assertEqual((code, out.strip()), (1, "False"))
        self.assertIn("UsageError: cannot serve `import scrapy` from tinyscrapy: Scrapy "
                      "itself is already imported in this process (as a plain alias", err)

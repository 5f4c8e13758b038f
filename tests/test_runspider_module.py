"""
C{runspider FILE.py} imports the file as the module named by its stem (as Scrapy does), in
child processes: a setting naming C{"stem.Class"} gets the same module, run once.
"""

import json
import os
import sys
import textwrap

from twisted.internet import defer, reactor
from twisted.trial import unittest

from .helpers import run_command, serve

SPIDER_FILE = """
import os
import sys

from tinyscrapy import Request, Spider

with open(os.path.join(os.path.dirname(__file__), "imports.log"), "a") as log:
    log.write(__name__ + "\\n")


class Mark:
    def process_item(self, item, spider):
        item["module"] = __name__
        item["same_spider_class"] = type(spider) is StemSpider
        return item


class StemSpider(Spider):
    name = "stem"
    custom_settings = {"ITEM_PIPELINES": {"%(stem)s.Mark": 300}}

    def start_requests(self):
        yield Request(self.start)

    def parse(self, response):
        yield {"url": response.url}
"""


class RunspiderModuleTests(unittest.TestCase):
    """The module a spider file becomes under C{runspider}."""

    def setUp(self):
        self.server = serve(self)
        self.start = self.server.add_page("/", title="home")
        self.tmp = os.path.abspath(self.mktemp())
        os.makedirs(self.tmp)

    @defer.inlineCallbacks
    def runspider(self, stem):
        """Write the spider as C{stem}.py, run it; return (items, import log lines)."""
        path = os.path.join(self.tmp, stem + ".py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(SPIDER_FILE % {"stem": stem}))
        out = os.path.join(self.tmp, "out.jsonl")
        code, _, err = yield run_command(
            reactor, ["runspider", path, "-a", f"start={self.start}", "-O", out])
        self.assertEqual(code, 0, err)
        with open(out) as f:
            items = [json.loads(line) for line in f]
        with open(os.path.join(self.tmp, "imports.log")) as f:
            imports = f.read().splitlines()
        return items, imports

    @defer.inlineCallbacks
    def test_setting_names_the_same_module(self):
        """A pipeline named "stem.Mark" comes from the spider's own module, run once."""
        items, imports = yield self.runspider("stemspider")
        self.assertEqual(imports, ["stemspider"])
        self.assertEqual(items, [{"url": self.start, "module": "stemspider",
                                  "same_spider_class": True}])

    @defer.inlineCallbacks
    def test_name_of_another_module_shadows_nothing(self):
        """A file called json.py still runs, and the feed's json module is the real one."""
        path = os.path.join(self.tmp, "json.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(SPIDER_FILE % {"stem": "json"}).replace(
                'custom_settings = {"ITEM_PIPELINES": {"json.Mark": 300}}',
                'custom_settings = {"ITEM_PIPELINES": {Mark: 300}}'))
        out = os.path.join(self.tmp, "out.jsonl")
        code, _, err = yield run_command(
            reactor, ["runspider", path, "-a", f"start={self.start}", "-O", out])
        self.assertEqual(code, 0, err)
        with open(out) as f:
            items = [json.loads(line) for line in f]
        self.assertEqual(len(items), 1)
        self.assertTrue(items[0]["module"].startswith("_tinyscrapy_runspider_"), items)
        self.assertTrue(items[0]["same_spider_class"])


class SpiderFromFileTests(unittest.TestCase):
    """L{spider_class_from_file} in this process."""

    def test_second_load_reuses_the_module(self):
        """Loading the same file twice runs it once and gives the same class."""
        from tinyscrapy.spiderloader import spider_class_from_file
        folder = os.path.abspath(self.mktemp())
        os.makedirs(folder)
        path = os.path.join(folder, "reused_spider_file.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(SPIDER_FILE % {"stem": "reused_spider_file"}))
        self.addCleanup(sys.modules.pop, "reused_spider_file", None)
        self.addCleanup(_remove_from_path, folder)
        first = spider_class_from_file(path)
        second = spider_class_from_file(path)
        self.assertIs(first, second)
        self.assertEqual(first.__module__, "reused_spider_file")
        with open(os.path.join(folder, "imports.log")) as f:
            self.assertEqual(f.read().splitlines(), ["reused_spider_file"])


def _remove_from_path(folder):
    while folder in sys.path:
        sys.path.remove(folder)

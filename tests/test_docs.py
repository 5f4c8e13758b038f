"""
The docs quote the real source: each block after a "quoted from" marker must equal the
source of the function it names, so the walkthrough cannot drift from the code.
"""

import glob
import importlib
import inspect
import os
import re
import textwrap

from twisted.trial import unittest

from .helpers import ROOT

MARKER = re.compile(r"<!-- quoted from: (\S+) (\S+) -->\n```python\n(.*?)```", re.S)


def quoted_blocks():
    for path in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for match in MARKER.finditer(text):
            yield os.path.basename(path), match.group(1), match.group(2), match.group(3)


def source_of(module_path, qualname):
    module = importlib.import_module(module_path[:-3].replace("/", "."))
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    obj = inspect.unwrap(obj)
    return textwrap.dedent(inspect.getsource(obj))


class QuotedSourceTests(unittest.TestCase):
    """Every quoted block matches the code."""

    def test_walkthrough_has_quotes(self):
        """The walkthrough quotes at least the loop, the download and the crawler."""
        names = {qualname for doc, _, qualname, _ in quoted_blocks()
                 if doc == "walkthrough.md"}
        self.assertTrue({"ExecutionEngine._next_request", "ExecutionEngine._download",
                         "Crawler.crawl"} <= names, names)

    def test_quotes_match_source(self):
        """Each quoted block is, to the character, the source it names."""
        for doc, module_path, qualname, block in quoted_blocks():
            self.assertEqual(block, source_of(module_path, qualname),
                             f"{doc} quotes {module_path} {qualname}, which has changed")

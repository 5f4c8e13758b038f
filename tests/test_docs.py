"""
The docs cannot drift from the code: each block after a "quoted from" marker must equal the
source of the function it names, each "example" block the script it names, each "output
of" block what that script prints; every script under docs/ is run; every name in the
engine's hop map exists.
"""

import glob
import importlib
import inspect
import os
import re
import subprocess
import sys
import textwrap

from twisted.trial import unittest

import tinyscrapy.core.engine

from .helpers import ROOT, needs_processes, subprocess_env

MARKER = re.compile(r"<!-- quoted from: (\S+) (\S+) -->\n```python\n(.*?)```", re.S)
EXAMPLE = re.compile(r"<!-- example: (\S+) -->\n```python\n(.*?)```", re.S)
REWRITE = re.compile(r"<!-- rewrite of: (\S+) (\S+) -->\n```python\n(.*?)```", re.S)
OUTPUT = re.compile(r"<!-- output of: (\S+)((?: \S+)*) -->\n```text\n(.*?)```", re.S)
DOC_GLOBS = ("docs/*.md", "docs/twisted/*.md", "docs/tutorial/*.md")


def doc_texts():
    """C{(path relative to the root, text)} of every page that may quote the code."""
    for pattern in DOC_GLOBS:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            with open(path, encoding="utf-8") as f:
                yield os.path.relpath(path, ROOT), f.read()


def quoted_blocks():
    for doc, text in doc_texts():
        for match in MARKER.finditer(text):
            yield doc, match.group(1), match.group(2), match.group(3)


def example_scripts():
    """Every runnable script under docs/ (relative paths)."""
    paths = glob.glob(os.path.join(ROOT, "docs", "**", "*.py"), recursive=True)
    return sorted(os.path.relpath(path, ROOT) for path in paths)


def source_of(module_path, qualname):
    module = importlib.import_module(module_path[:-3].replace("/", "."))
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    obj = inspect.unwrap(obj)
    return textwrap.dedent(inspect.getsource(obj))


def run_script(path, *args):
    """Run a docs script as a reader would. @return: C{(status, stdout, stderr)}."""
    needs_processes("a docs script")
    done = subprocess.run([sys.executable, path, *args], cwd=ROOT, env=subprocess_env(),
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def resolve(dotted):
    """The object a dotted name in the hop map names (module path, then attributes)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(dotted)


class QuotedSourceTests(unittest.TestCase):
    """Every quoted block matches the code."""

    def test_walkthrough_has_quotes(self):
        """The walkthrough quotes at least the loop, the download and the crawler."""
        names = {qualname for doc, _, qualname, _ in quoted_blocks()
                 if doc == os.path.join("docs", "walkthrough.md")}
        self.assertTrue({"ExecutionEngine._next_request", "ExecutionEngine._download",
                         "Crawler._crawl"} <= names, names)

    def test_twisted_pages_quote_the_code(self):
        """Each page of docs/twisted/ (but the index) quotes tinyscrapy's own lines."""
        quoting = {doc for doc, _, _, _ in quoted_blocks()}
        pages = [doc for doc, _ in doc_texts()
                 if doc.startswith(os.path.join("docs", "twisted", ""))
                 and not doc.endswith("README.md")]
        self.assertGreaterEqual(len(pages), 12)
        self.assertEqual([page for page in pages if page not in quoting], [])

    def test_quotes_match_source(self):
        """Each quoted block is, to the character, the source it names."""
        for doc, module_path, qualname, block in quoted_blocks():
            self.assertEqual(block, source_of(module_path, qualname),
                             f"{doc} quotes {module_path} {qualname}, which has changed")


class RewriteTests(unittest.TestCase):
    """A hand-written rewrite of a function (marked "rewrite of") makes the calls it does."""

    def test_rewrites_make_every_call_of_the_source(self):
        """Each method called on self or self.X in the source is called in its rewrite."""
        call = re.compile(r"\bself(?:\.\w+)*\.(\w+)\(")
        rewrites = [(doc,) + match for doc, text in doc_texts()
                    for match in REWRITE.findall(text)]
        self.assertIn("Crawler._crawl", [qualname for _, _, qualname, _ in rewrites])
        for doc, module_path, qualname, block in rewrites:
            source = source_of(module_path, qualname)
            body = source[source.index('"""', source.index('"""') + 3):]
            missing = sorted(set(call.findall(body)) - set(call.findall(block)))
            self.assertEqual(missing, [], f"{doc}'s rewrite of {qualname} has drifted")
            for name in re.findall(r"\b(\w+)\(", body):
                self.assertIn(name + "(", block, f"{doc}'s rewrite of {qualname}")


class HopMapTests(unittest.TestCase):
    """The engine's map of Deferred hops names only what exists."""

    def test_every_named_function_exists(self):
        """Each L{...} of engine.py's docstring resolves (engine names in the module)."""
        names = re.findall(r"L\{([\w.]+)\}", tinyscrapy.core.engine.__doc__)
        self.assertGreater(len(names), 20)
        for name in names:
            if name.startswith("tinyscrapy."):
                obj = resolve(name)
            else:
                obj = resolve("tinyscrapy.core.engine." + name)
            self.assertTrue(callable(obj), name)

    def test_walkthrough_reproduces_the_map(self):
        """docs/walkthrough.md holds the hop map as the engine's docstring has it."""
        with open(os.path.join(ROOT, "docs", "walkthrough.md"), encoding="utf-8") as f:
            text = f.read()
        start = tinyscrapy.core.engine.__doc__.index("    0. ")
        hop_map = textwrap.dedent(tinyscrapy.core.engine.__doc__[start:]).strip()
        self.assertIn(hop_map, text)


class ExampleTests(unittest.TestCase):
    """Every script under docs/ is shown, runs, and prints what its page says."""

    def test_examples_shown_as_they_are(self):
        """Each "example" block is the script it names; every docs/twisted/ script is shown
        whole (the tutorial's steps are quoted function by function)."""
        shown = set()
        for doc, text in doc_texts():
            for path, block in EXAMPLE.findall(text):
                with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                    self.assertEqual(block, f.read(), f"{doc} shows {path}, which changed")
                shown.add(path)
        twisted_examples = [p for p in example_scripts()
                            if p.startswith(os.path.join("docs", "twisted", ""))]
        self.assertEqual([p for p in twisted_examples if p not in shown], [])

    def test_every_script_runs_and_prints_its_documented_output(self):
        """Each script's stdout is its "output of" block; every script has one."""
        checked = set()
        for doc, text in doc_texts():
            for path, args, expected in OUTPUT.findall(text):
                status, out, err = run_script(path, *args.split())
                self.assertEqual((status, out), (0, expected), f"{doc}: {path}{args}\n{err}")
                checked.add(path)
        self.assertEqual([p for p in example_scripts() if p not in checked], [])


TRACE_LINE = re.compile(r" *(\d+\.\d{3}) (start|done|retry|closing) +in flight (\d+)  (\S+)")


class TutorialTraceTests(unittest.TestCase):
    """Each tutorial step's C{--trace} lists its events in order."""

    def test_trace_in_causal_order(self):
        """Times never go back; each URL starts before it is done; never more than 4."""
        steps = [p for p in example_scripts() if p.startswith(os.path.join("docs", "tutorial"))]
        self.assertEqual(len(steps), 6)
        for step in steps:
            status, out, err = run_script(step, "--trace")
            self.assertEqual(status, 0, err)
            events = [TRACE_LINE.fullmatch(line) for line in err.splitlines()]
            self.assertNotIn(None, events, step)
            times = [float(event.group(1)) for event in events]
            self.assertEqual(times, sorted(times), step)
            started = set()
            for event in events:
                kind, in_flight, url = event.group(2), int(event.group(3)), event.group(4)
                self.assertLessEqual(in_flight, 4, step)
                if kind == "start":
                    started.add(url)
                elif kind in ("done", "retry"):
                    self.assertIn(url, started, f"{step}: {kind} before start")


def refresh():
    """
    Rewrite every checked block of the docs from the code (after a change the tests
    caught: read the diff before committing it): C{python -m tests.test_docs}.
    """
    import tinyscrapy.core.engine as engine
    start = engine.__doc__.index("    0. ")
    hop_map = textwrap.dedent(engine.__doc__[start:]).strip()
    for doc, text in doc_texts():
        new = MARKER.sub(lambda m: (f"<!-- quoted from: {m.group(1)} {m.group(2)} -->\n"
                                    f"```python\n{source_of(m.group(1), m.group(2))}```"), text)
        new = EXAMPLE.sub(lambda m: (f"<!-- example: {m.group(1)} -->\n```python\n"
                                     f"{open(os.path.join(ROOT, m.group(1))).read()}```"), new)
        new = OUTPUT.sub(lambda m: (f"<!-- output of: {m.group(1)}{m.group(2)} -->\n```text\n"
                                    f"{run_script(m.group(1), *m.group(2).split())[1]}```"), new)
        if doc == os.path.join("docs", "walkthrough.md"):
            new = re.sub(r"```text\n0\. .*?```", lambda _: f"```text\n{hop_map}\n```", new,
                         count=1, flags=re.S)
        if new != text:
            with open(os.path.join(ROOT, doc), "w", encoding="utf-8") as f:
                f.write(new)
            print("refreshed", doc)


if __name__ == "__main__":
    refresh()

"""
The docs cannot drift from the code: each block after a "quoted from" marker must equal the
source of the function it names, each "example" block the script it names, each "output
of" block what that script prints; every script under docs/ is run; every name in the
engine's hop map exists; and every setting, signal, stats key, exception class and module
path a page names (in backticks, outside code blocks) exists (L{DocNamesTests}).
"""

import ast
import builtins
import functools
import glob
import importlib
import inspect
import os
import re
import subprocess
import sys
import textwrap

from twisted.internet import defer
from twisted.trial import unittest

import tinyscrapy
import tinyscrapy.core.engine
from tinyscrapy import signals as signals_module
from tinyscrapy.settings import default_settings

from .helpers import ROOT, crawl, needs_processes, serve, subprocess_env

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


NAMED_GLOBS = DOC_GLOBS + ("README.md",)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")
SETTING = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
EXCEPTION = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning)\b")
STATS_KEY = re.compile(r"[a-z][a-z0-9_]*(?:/(?:[A-Za-z0-9_.\-]+|\.\.\.))+")
# a part of a key the docs leave open: CLASS, STATUS, ItsClass (not a log level)
PLACEHOLDER = re.compile(r"(?!(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)$)[A-Z]{3,}(?:\.[A-Z]{3,})*"
                         r"|(?:Its|Your)[A-Z][A-Za-z]*")
DOTTED = re.compile(r"tinyscrapy(?:\.\w+)+")
FILE_PATH = re.compile(r"(?:tinyscrapy/)?[a-z_]+/[\w/.\-]*(?:\.py|/)")
ANY = "([^/]+)"  # what the code formats into a key: one segment, checked in _fits
STATS_CALLS = ("inc_value", "set_value", "max_value", "min_value", "get_value", "_count",
               "_set")
# Names the docs give that are no setting, signal, key or class of tinyscrapy's, each with
# why it may stay: they are named in contrast, or belong to another library.
NOT_OURS = {
    "ADAPTER_CLASSES": "itemadapter's ItemAdapter.ADAPTER_CLASSES, which items.md extends",
    "MY_API_URL": "a setting a user's own spider reads, in an example",
    "MYPIPELINE_FILES_EXPIRES": "the prefixed form media pipelines read (a class name)",
    "PR_SET_PDEATHSIG": "Linux's prctl option, which processes.md names",
    "SIGCHLD": "a POSIX signal, which processes.md names",
    "SCRAPY_SETTINGS_MODULE": "Scrapy's environment variable, named in contrast",
    "SETTINGS_PRIORITIES": "the priorities' table of tinyscrapy.settings (not a setting)",
    "SomeError": "a placeholder: flushLoggedErrors(SomeError) in error-path.md",
    "TINYSCRAPY_W_CMD": "the shared yardstick's environment variable (performance.md)",
}


def doc_spans():
    """C{(page, span)}: every backticked span outside code blocks, of every page and the
    README, but the first column of a table of old names (package.md's moves)."""
    for pattern in NAMED_GLOBS:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            with open(path, encoding="utf-8") as f:
                text = FENCE.sub("", f.read())
            page, old_table = os.path.relpath(path, ROOT), False
            for line in text.splitlines():
                if not line.startswith("|"):
                    old_table = False
                    yield from ((page, span) for span in SPAN.findall(line))
                    continue
                cells = line.split("|")[1:]
                if cells and cells[0].strip().lower().startswith("old "):
                    old_table = True
                for index, cell in enumerate(cells):
                    if not (old_table and index == 0):
                        yield from ((page, span) for span in SPAN.findall(cell))


def source_trees():
    """The parsed modules of the package."""
    for path in sorted(glob.glob(os.path.join(ROOT, "tinyscrapy", "**", "*.py"),
                                 recursive=True)):
        with open(path, encoding="utf-8") as f:
            yield ast.parse(f.read())


def _pattern(node):
    """A regular expression for a string the code builds (a literal, an f-string, a
    literal + a variable), or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.escape(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(re.escape(part.value) if isinstance(part, ast.Constant) else ANY
                       for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pattern(node.left), _pattern(node.right)
        return (left or ANY) + (right or ANY) if left or right else None
    return None


@functools.cache
def _names_facts():
    """C{(spans, literals, classes, stats_patterns, sent)}: the docs' spans; the strings,
    assigned names and keyword names of the package's source; its class and function names; the
    patterns of the stats keys it builds; the keyword arguments each signal is sent with."""
    spans = list(doc_spans())
    literals, classes, stats_patterns, sent = set(), set(), set(), {}
    for tree in source_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                literals.add(node.value)
            elif isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                classes.add(node.name)
            elif isinstance(node, ast.keyword) and node.arg:  # set_environ(SCRAPY_CHECK=...)
                literals.add(node.arg)
            elif isinstance(node, ast.Assign):
                literals.update(t.id for t in node.targets if isinstance(t, ast.Name))
                literals.update(t.attr for t in node.targets if isinstance(t, ast.Attribute))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                _note_call(node, stats_patterns, sent)
    return spans, literals, classes, stats_patterns, sent


def _note_call(node, stats_patterns, sent):
    if node.func.attr in STATS_CALLS and node.args:
        pattern = _pattern(node.args[0])
        if pattern is not None:
            stats_patterns.add(pattern)
    if node.func.attr.startswith("send") and node.args:
        signal = node.args[0]
        if isinstance(signal, ast.Attribute) and isinstance(signal.value, ast.Name) \
                and signal.value.id == "signals":
            sent.setdefault(signal.attr, set()).update(
                keyword.arg for keyword in node.keywords if keyword.arg)


class DocNamesTests(unittest.TestCase):
    """What a page names exists: a generated check, so a rename cannot leave the docs
    behind."""

    def setUp(self):
        (self.spans, self.literals, self.classes, self.stats_patterns,
         self.sent) = _names_facts()

    def _named(self, pattern):
        for page, span in self.spans:
            for match in pattern.finditer(span):
                yield page, span, match.group(0)

    def test_settings_exist(self):
        """A setting a page names is a default, a setting refused or obsolete (with its
        message), or one a component reads."""
        known = (set(default_settings.DEFAULTS) | set(default_settings.UNSUPPORTED)
                 | set(default_settings.OBSOLETE) | self.literals | set(NOT_OURS))
        missing = sorted({(page, name) for page, _, name in self._named(SETTING)
                          if name not in known})
        self.assertEqual(missing, [])

    def test_exception_classes_exist(self):
        """An exception class a page names is tinyscrapy's, Python's or Twisted's."""
        elsewhere = set(dir(builtins))
        for module in ("twisted.internet.error", "twisted.internet.defer",
                       "twisted.web._newclient", "twisted.web.error", "twisted.python.failure",
                       "twisted.names.error"):
            elsewhere |= set(dir(importlib.import_module(module)))
        missing = sorted({(page, name) for page, _, name in self._named(EXCEPTION)
                          if name not in self.classes | elsewhere | set(NOT_OURS)})
        self.assertEqual(missing, [])

    def test_module_paths_exist(self):
        """A dotted tinyscrapy name resolves; a file or folder of the package exists."""
        missing = []
        for page, _, dotted in self._named(DOTTED):
            if dotted.endswith(".cfg") or re.search(r"\.[A-Z]\b", dotted):
                continue  # tinyscrapy.cfg is a file; tinyscrapy.X.Y a placeholder
            try:
                resolve(dotted.rstrip("."))
            except (ImportError, AttributeError):
                missing.append((page, dotted))
        packages = set(os.listdir(os.path.join(ROOT, "tinyscrapy")))
        for page, span, path in self._named(FILE_PATH):
            if span != path or re.search(r"\bX\b", path):
                continue  # a part of a longer span, or a placeholder
            first = path.split("/")[0]
            if first not in packages | {"tinyscrapy", "docs", "tests", "benchmarks"}:
                continue
            inside = os.path.join(ROOT, "tinyscrapy", path)
            if not (os.path.exists(os.path.join(ROOT, path)) or os.path.exists(inside)):
                missing.append((page, path))
        self.assertEqual(missing, [])

    def test_signals_exist_with_their_arguments(self):
        """items.md's table lists every signal, and for each one every argument the code
        sends it with."""
        with open(os.path.join(ROOT, "docs", "items.md"), encoding="utf-8") as f:
            rows = re.findall(r"^\| `(\w+)` \| (.*?) \|", f.read(), re.M)
        documented = {name: set(re.findall(r"`(\w+)`", args)) for name, args in rows
                      if isinstance(getattr(signals_module, name, None), signals_module.Signal)}
        declared = {name for name, value in vars(signals_module).items()
                    if isinstance(value, signals_module.Signal)}
        self.assertEqual(sorted(declared - set(documented)), [])
        undocumented = {name: sorted(sent - documented[name])
                        for name, sent in self.sent.items()
                        if name in documented and sent - documented[name]}
        self.assertEqual(undocumented, {})

    @defer.inlineCallbacks
    def test_stats_keys_exist(self):
        """A stats key a page names is one a test crawl produces, or matches a key the
        code builds (C{ledger/failed/CLASS} matches C{f"ledger/{state}/{reason}"}; a
        trailing C{...} a prefix of one)."""
        server = serve(self)
        server.add_page("/", links=["/a", "/missing"])
        server.add_page("/a")
        crawler = yield crawl(_StatsSpider, {"ROBOTSTXT_OBEY": True},
                              start=server.url("/"))
        produced = set(crawler.stats.get_stats())
        self.segments = {part for k in produced for part in k.split("/")}
        patterns = [re.compile(pattern + "$") for pattern in self.stats_patterns]
        namespaces = {key.split("/")[0] for key in produced if "/" in key} | {
            pattern.split("/")[0] for pattern in self.stats_patterns
            if "/" in pattern and not pattern.startswith(ANY)}
        missing = []
        for page, span, key in self._named(STATS_KEY):
            if span != key or key.split("/")[0] not in namespaces or FILE_PATH.fullmatch(key):
                continue  # a path (frontier/worker.py), a MIME type, a part of a longer span
            if key.endswith("/..."):
                prefix = key[:-3]
                found = any(k.startswith(prefix) for k in produced) or any(
                    p.replace("\\", "").startswith(prefix) for p in self.stats_patterns)
            else:
                found = key in produced or any(self._fits(p.match(key)) for p in patterns)
            if not found:
                missing.append((page, key))
        self.assertEqual(sorted(set(missing)), [])


    def _fits(self, match):
        """A key matched a pattern of the code, and each part the code formats in is a
        placeholder (C{CLASS}), a number, a name the code has (a state, a class) or one a
        crawl produced: C{ledger/bogus} does not fit C{"ledger/" + state}."""
        if match is None:
            return False
        return all(PLACEHOLDER.fullmatch(part) or part.isdigit() or part in self.literals
                   or part in self.classes or hasattr(builtins, part) or part in self.segments
                   for part in match.groups())


class _StatsSpider(tinyscrapy.Spider):
    """Follows every link from C{start} (a spider argument)."""

    name = "stats"

    def start_requests(self):
        yield tinyscrapy.Request(self.start)

    def parse(self, response):
        yield {"url": response.url}
        yield from response.follow_all(css="a")


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

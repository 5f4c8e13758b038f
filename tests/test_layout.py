"""
The package's layout holds what docs/package.md promises: Scrapy's module tree is the
house (every Scrapy path tinyscrapy has is a real module at that path, no alias), no import
cycle (lazy imports included), and a kernel in C{core/} that loads without the layers.
"""

import ast
import importlib
import os
import re
import subprocess
import sys

from twisted.trial import unittest

from .helpers import ROOT, needs_processes, subprocess_env

PACKAGE = os.path.join(ROOT, "tinyscrapy")

# Scrapy 2.19's public module paths (tests/scrapy-modules.txt): each is a real module here,
# comes with the issue named, or has a row in docs/differences.md
PLANNED = {}

# modules that only re-export, where Scrapy's own module at that path re-exports too
FACES = {"tinyscrapy", "tinyscrapy.http", "tinyscrapy.selector", "tinyscrapy.linkextractors",
         "tinyscrapy.loader.processors", "tinyscrapy.core.downloader.handlers.http",
         # and two of tinyscrapy's own: the entry point, and the demo site's front door
         "tinyscrapy.__main__", "tinyscrapy.demo"}

# what the kernel (core/) may import at module level: itself, the objects of a crawl, the
# vocabulary (the log's words included), the helpers, and the base of its two middleware
# chains (as Scrapy's core imports scrapy.middleware)
KERNEL_MAY_IMPORT = ("tinyscrapy.core", "tinyscrapy.http", "tinyscrapy.signals",
                     "tinyscrapy.exceptions", "tinyscrapy.settings", "tinyscrapy.utils",
                     "tinyscrapy.middleware", "tinyscrapy.logformatter")

# the one sys.modules assignment: importlib's recipe for running a file as a module
# (runspider FILE.py), not an alias of one module under another name
MODULE_LOADER = ("spiderloader.py", "_import_file")


def scrapy_paths():
    with open(os.path.join(ROOT, "tests", "scrapy-modules.txt"), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def modules():
    """(dotted name, path) of every module of the package."""
    for folder, _, files in os.walk(PACKAGE):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                yield rel.removesuffix(".__init__"), path


def _is_module(dotted):
    path = os.path.join(ROOT, *dotted.split("."))
    return os.path.isfile(path + ".py") or os.path.isfile(os.path.join(path, "__init__.py"))


def imports_of(path, dotted, lazy=True):
    """The tinyscrapy modules C{path} imports: at module level, and with C{lazy} inside
    functions too (an import anywhere is an edge)."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    package = dotted if path.endswith("__init__.py") else dotted.rpartition(".")[0]
    nodes = ast.walk(tree) if lazy else tree.body
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("tinyscrapy")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            if base == "tinyscrapy" or base.startswith("tinyscrapy."):
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    found.add(sub if _is_module(sub) else base)
    found.discard(dotted)
    return found


def cycle_in(graph):
    """One import cycle of C{graph} as a list of modules, or None."""
    state = {}

    def visit(node, trail):
        if state.get(node) == "done":
            return None
        if state.get(node) == "open":
            return trail[trail.index(node):] + [node]
        state[node] = "open"
        for dep in sorted(graph.get(node, ())):
            found = visit(dep, trail + [node])
            if found:
                return found
        state[node] = "done"
        return None

    for node in sorted(graph):
        found = visit(node, [])
        if found:
            return found
    return None


class ScrapyTreeTests(unittest.TestCase):
    """Scrapy's module tree is the house."""

    def test_every_scrapy_path_is_a_real_module_or_planned(self):
        """Each of Scrapy's public paths is a module file at that path here (not an alias
        of another), comes with a named issue, or has a row in docs/differences.md."""
        with open(os.path.join(ROOT, "docs", "differences.md"), encoding="utf-8") as f:
            differences = f.read()
        unaccounted = []
        for path in scrapy_paths():
            ours = "tinyscrapy" + path[len("scrapy"):]
            if _is_module(ours):
                module = importlib.import_module(ours)
                self.assertEqual(module.__name__, ours)
                expected = os.path.join(ROOT, *ours.split("."))
                self.assertTrue(module.__file__ in (expected + ".py",
                                                    os.path.join(expected, "__init__.py")),
                                f"{ours} is {module.__file__}")
                self.assertNotIn(path, PLANNED, f"{path} exists now: take it off PLANNED")
            elif path not in PLANNED and f"`{path}`" not in differences:
                unaccounted.append(path)
        self.assertEqual(unaccounted, [])

    def test_no_module_aliases(self):
        """No module is put in C{sys.modules} under another module's name."""
        found = []
        for dotted, path in modules():
            tree = ast.parse(open(path, encoding="utf-8").read())
            for function in [tree, *ast.walk(tree)]:
                body = getattr(function, "body", None)
                if not isinstance(body, list):
                    continue
                for node in body:
                    if isinstance(node, ast.Assign) and any(
                            ast.unparse(t).startswith("sys.modules[") for t in node.targets):
                        where = (os.path.basename(path), getattr(function, "name", ""))
                        if where != MODULE_LOADER:
                            found.append(f"{dotted}: {ast.unparse(node)}")
        self.assertEqual(found, [])

    def test_faces_are_only_where_scrapy_has_them(self):
        """A module that defines nothing (only imports and re-exports) is one of Scrapy's
        own re-exporting modules; every other module holds real code."""
        found = []
        for dotted, path in modules():
            tree = ast.parse(open(path, encoding="utf-8").read())
            defines = [node for node in tree.body if isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and node.name != "__getattr__"]
            imports = [node for node in tree.body if isinstance(node, ast.ImportFrom)
                       and (node.module or "").startswith("tinyscrapy")]
            if imports and not defines and dotted not in FACES:
                found.append(dotted)
        self.assertEqual(found, [])


class ImportGraphTests(unittest.TestCase):
    """Which way imports go."""

    def test_no_import_cycle(self):
        """No two modules import each other, directly or through others, at any level
        (an import inside a function is an edge too)."""
        graph = {dotted: imports_of(path, dotted) for dotted, path in modules()}
        self.assertIsNone(cycle_in(graph))

    def test_a_cycle_is_found(self):
        """The cycle finder finds a cycle made of lazy imports."""
        self.assertEqual(cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(cycle_in({"a": {"b"}, "b": set()}))

    def test_core_imports_no_layer_at_module_level(self):
        """core/ (but its download handlers) imports at module level only itself, http/, the
        vocabulary, utils/ and the middleware base; pqueues, dupefilters, handlers, middlewares,
        pipelines and extensions reach it through their settings."""
        found = []
        for dotted, path in modules():
            # the download handlers are the first layer under the kernel, named by
            # DOWNLOAD_HANDLERS
            if not dotted.startswith("tinyscrapy.core") or \
                    dotted.startswith("tinyscrapy.core.downloader.handlers"):
                continue
            for target in imports_of(path, dotted, lazy=False):
                if not any(target == allowed or target.startswith(allowed + ".")
                           for allowed in KERNEL_MAY_IMPORT):
                    found.append(f"{dotted} -> {target}")
        self.assertEqual(found, [])

    def test_kernel_loads_alone(self):
        """C{import tinyscrapy.core.engine} loads at most 20 tinyscrapy modules, and no
        spider kind, middleware, extension, pipeline or frontier module, nor parsel, lxml,
        itemadapter or treq."""
        needs_processes("python")
        code = ("import sys; import tinyscrapy.core.engine; "
                "print(' '.join(sorted(m for m in sys.modules)))")
        loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                env=subprocess_env(), cwd=ROOT, check=True,
                                timeout=60).stdout.split()
        ours = [m for m in loaded if m == "tinyscrapy" or m.startswith("tinyscrapy.")]
        self.assertLessEqual(len(ours), 20, ours)
        layers = re.compile(r"tinyscrapy\.(spiders\.|downloadermiddlewares|spidermiddlewares|"
                            r"extensions|pipelines|frontier|exporters|trace|ledger)")
        self.assertEqual([m for m in ours if layers.match(m)], [])
        libraries = {m.split(".")[0] for m in loaded} & {"parsel", "lxml", "itemadapter",
                                                         "treq", "protego"}
        self.assertEqual(libraries, set())


class ScrapyNamesTests(unittest.TestCase):
    """The names ports import are where Scrapy keeps them."""

    NAMES = {
        "tinyscrapy": ["Spider", "Request", "FormRequest", "Selector", "signals", "Item",
                       "Field", "__version__", "version_info", "install_as_scrapy"],
        "tinyscrapy.http": ["Request", "HttpResponse", "FormRequest", "JsonRequest", "Headers",
                            "XmlRpcRequest", "HtmlResponse", "TextResponse", "Response",
                            "XmlResponse"],
        "tinyscrapy.spiders": ["Spider", "CrawlSpider", "Rule", "SitemapSpider",
                               "XMLFeedSpider", "CSVFeedSpider"],
        "tinyscrapy.spiders.feed": ["XMLFeedSpider", "CSVFeedSpider"],
        "tinyscrapy.spiders.crawl": ["CrawlSpider", "Rule"],
        "tinyscrapy.spiders.sitemap": ["SitemapSpider"],
        "tinyscrapy.linkextractors": ["LinkExtractor"],
        "tinyscrapy.linkextractors.lxmlhtml": ["LxmlLinkExtractor"],
        "tinyscrapy.link": ["Link"],
        "tinyscrapy.exceptions": ["DropItem", "IgnoreRequest", "CloseSpider", "NotConfigured",
                                  "DontCloseSpider", "ContractFail", "ScrapyDeprecationWarning",
                                  "CannotResolveHostError", "DownloadTimeoutError",
                                  "DownloadConnectionRefusedError"],
        "tinyscrapy.selector": ["Selector", "SelectorList"],
        "tinyscrapy.crawler": ["CrawlerProcess", "Crawler", "CrawlerRunner",
                               "AsyncCrawlerProcess", "AsyncCrawlerRunner"],
        "tinyscrapy.settings": ["Settings"],
        "tinyscrapy.settings.default_settings": ["RETRY_EXCEPTIONS", "DOWNLOAD_TIMEOUT"],
        "tinyscrapy.item": ["Item", "Field"],
        "tinyscrapy.loader": ["ItemLoader"],
        "tinyscrapy.signals": ["spider_opened", "spider_closed", "item_scraped"],
        "tinyscrapy.utils.defer": ["deferred_to_future", "maybe_deferred_to_future",
                                   "deferred_from_coro"],
        "tinyscrapy.utils.reactor": ["install_reactor", "is_asyncio_reactor_installed",
                                     "is_reactor_installed", "_asyncio_reactor_path"],
        "tinyscrapy.utils.sitemap": ["Sitemap", "sitemap_urls_from_robots"],
        "tinyscrapy.utils.request": ["fingerprint", "RequestFingerprinter", "request_to_curl",
                                     "request_httprepr", "request_from_dict"],
        "tinyscrapy.utils.url": ["url_is_from_any_domain", "url_is_from_spider",
                                 "add_http_if_no_scheme", "guess_scheme", "strip_url",
                                 "parse_url", "url_has_any_extension"],
        "tinyscrapy.utils.iterators": ["xmliter_lxml", "csviter"],
        "tinyscrapy.utils.serialize": ["ScrapyJSONEncoder"],
        "tinyscrapy.utils.misc": ["build_from_crawler", "load_object", "set_environ",
                                  "arg_to_iter", "walk_modules"],
        "tinyscrapy.utils.python": ["to_bytes", "to_unicode"],
        "tinyscrapy.utils.httpobj": ["urlparse_cached"],
        "tinyscrapy.utils.spider": ["DefaultSpider", "iterate_spider_output",
                                    "iter_spider_classes"],
        "tinyscrapy.utils.project": ["get_project_settings", "data_path", "inside_project",
                                     "project_data_dir"],
        "tinyscrapy.utils.response": ["open_in_browser", "get_base_url", "get_meta_refresh",
                                      "response_status_message"],
        "tinyscrapy.utils.log": ["configure_logging", "LogCounterHandler", "SpiderLoggerAdapter",
                                 "failure_to_exc_info", "logformatter_adapter"],
        "tinyscrapy.utils.test": ["get_crawler", "get_reactor_settings", "get_testenv",
                                  "get_from_asyncio_queue"],
        "tinyscrapy.http.request": ["Request", "CallbackT"],
        "tinyscrapy.spiderloader": ["SpiderLoader", "get_spider_loader"],
        "tinyscrapy.downloadermiddlewares.redirect": ["RedirectMiddleware",
                                                      "MetaRefreshMiddleware",
                                                      "BaseRedirectMiddleware"],
        "tinyscrapy.downloadermiddlewares.retry": ["RetryMiddleware", "get_retry_request"],
        "tinyscrapy.downloadermiddlewares.offsite": ["OffsiteMiddleware"],
        "tinyscrapy.downloadermiddlewares.robotstxt": ["RobotsTxtMiddleware"],
        "tinyscrapy.downloadermiddlewares.httpcompression": ["HttpCompressionMiddleware"],
        "tinyscrapy.downloadermiddlewares.downloadtimeout": ["DownloadTimeoutMiddleware"],
        "tinyscrapy.downloadermiddlewares.stats": ["DownloaderStats"],
        "tinyscrapy.spidermiddlewares.httperror": ["HttpError", "HttpErrorMiddleware"],
        "tinyscrapy.spidermiddlewares.referer": ["RefererMiddleware", "POLICY_NO_REFERRER",
                                                 "NoReferrerPolicy", "DefaultReferrerPolicy"],
        "tinyscrapy.spidermiddlewares.depth": ["DepthMiddleware"],
        "tinyscrapy.spidermiddlewares.urllength": ["UrlLengthMiddleware"],
        "tinyscrapy.extensions.corestats": ["CoreStats"],
        "tinyscrapy.extensions.throttle": ["AutoThrottle"],
        "tinyscrapy.core.engine": ["ExecutionEngine"],
        "tinyscrapy.core.scheduler": ["Scheduler"],
        "tinyscrapy.core.downloader": ["Downloader"],
        "tinyscrapy.dupefilters": ["BaseDupeFilter", "RFPDupeFilter"],
        "tinyscrapy.pipelines": ["ItemPipelineManager"],
        "tinyscrapy.robotstxt": ["RobotParser", "ProtegoRobotParser"],
        "tinyscrapy.cmdline": ["Command", "execute"],
        "tinyscrapy.commands": ["ScrapyCommand", "ScrapyHelpFormatter", "BaseRunSpiderCommand"],
        "tinyscrapy.commands.check": ["Command", "TextTestResult"],
        "tinyscrapy.contracts": ["Contract", "ContractsManager"],
        "tinyscrapy.shell": ["Shell", "inspect_response"],
        # what the conftest.py of Scrapy's own test suite imports and patches: without one
        # of them not a single test of that suite runs
        "tinyscrapy.utils.reactor#conftest": ["set_asyncio_event_loop_policy",
                                              "set_asyncio_event_loop", "listen_tcp"],
        "tinyscrapy.utils.reactorless": ["install_reactor_import_hook", "is_reactorless"],
        "tinyscrapy.core.downloader.tls": ["_TWISTED_VERSION_MAP"],
        "tinyscrapy.utils.ssl": ["_get_cert_options_version_kwargs"],
    }

    def test_scrapy_test_suite_patches_the_heartbeat(self):
        """Scrapy's test suite shortens ExecutionEngine._SLOT_HEARTBEAT_INTERVAL on the
        class: the engine's heartbeat follows it unless ENGINE_HEARTBEAT is set."""
        from twisted.internet import reactor

        from tinyscrapy.core.engine import ExecutionEngine
        from tinyscrapy.crawler import Crawler
        from tinyscrapy.settings import Settings
        from tinyscrapy.spiders import Spider
        self.assertEqual(ExecutionEngine._SLOT_HEARTBEAT_INTERVAL, 5.0)
        self.patch(ExecutionEngine, "_SLOT_HEARTBEAT_INTERVAL", 0.1)
        engine = ExecutionEngine(Crawler(Spider, Settings(), reactor))
        self.assertEqual(engine._heartbeat_interval, 0.1)
        engine = ExecutionEngine(Crawler(Spider, Settings({"ENGINE_HEARTBEAT": 2}), reactor))
        self.assertEqual(engine._heartbeat_interval, 2.0)

    def test_names_at_their_paths(self):
        """Each path offers the names Scrapy keeps there."""
        missing = []
        for path, names in self.NAMES.items():
            module = importlib.import_module(path.partition("#")[0])
            missing += [f"{path}.{name}" for name in names if not hasattr(module, name)]
        self.assertEqual(missing, [])

"""
The package's layout holds what docs/package.md promises: layers as folders, Scrapy's
public import paths, module names that say which, and no import cycles.
"""

import ast
import importlib
import os
from collections import defaultdict

from twisted.trial import unittest

from .helpers import ROOT

PACKAGE = os.path.join(ROOT, "tinyscrapy")

# Scrapy's public paths a port imports from, and a name each must offer
SCRAPY_PATHS = {
    "tinyscrapy": ["Spider", "Request", "FormRequest", "Selector", "signals", "Item", "Field"],
    "tinyscrapy.http": ["Request", "HttpResponse", "FormRequest", "JsonRequest", "Headers",
                        "XmlRpcRequest"],
    "tinyscrapy.spiders": ["Spider", "CrawlSpider", "Rule", "SitemapSpider", "XMLFeedSpider",
                           "CSVFeedSpider"],
    "tinyscrapy.spiders.feed": ["XMLFeedSpider", "CSVFeedSpider"],
    "tinyscrapy.spiders.crawl": ["CrawlSpider", "Rule"],
    "tinyscrapy.spiders.sitemap": ["SitemapSpider"],
    "tinyscrapy.linkextractors": ["LinkExtractor"],
    "tinyscrapy.exceptions": ["DropItem", "IgnoreRequest", "CloseSpider", "NotConfigured",
                              "ContractFail",
                              "ScrapyDeprecationWarning", "CannotResolveHostError",
                              "DownloadTimeoutError", "DownloadConnectionRefusedError"],
    "tinyscrapy.selector": ["Selector", "SelectorList"],
    "tinyscrapy.crawler": ["CrawlerProcess", "Crawler", "CrawlerRunner", "AsyncCrawlerProcess",
                           "AsyncCrawlerRunner"],
    "tinyscrapy.utils.log": ["configure_logging", "LogCounterHandler"],
    "tinyscrapy.utils.defer": ["deferred_to_future", "maybe_deferred_to_future"],
    "tinyscrapy.utils.reactor": ["install_reactor", "is_asyncio_reactor_installed",
                                 "is_reactor_installed"],
    "tinyscrapy.utils.sitemap": ["Sitemap", "sitemap_urls_from_robots"],
    "tinyscrapy.signals": ["spider_closed", "item_scraped"],
    "tinyscrapy.settings": ["Settings"],
    "tinyscrapy.utils.request": ["fingerprint", "RequestFingerprinter", "request_to_curl"],
    "tinyscrapy.utils.test": ["get_crawler", "get_reactor_settings"],
    "tinyscrapy.utils.misc": ["build_from_crawler", "load_object", "set_environ"],
    "tinyscrapy.utils.python": ["to_bytes", "to_unicode"],
    "tinyscrapy.utils.httpobj": ["urlparse_cached"],
    "tinyscrapy.utils.spider": ["DefaultSpider"],
    "tinyscrapy.link": ["Link"],
    "tinyscrapy.linkextractors.lxmlhtml": ["LxmlLinkExtractor"],
    "tinyscrapy.downloadermiddlewares.redirect": ["RedirectMiddleware", "MetaRefreshMiddleware",
                                                  "BaseRedirectMiddleware"],
    "tinyscrapy.downloadermiddlewares.retry": ["RetryMiddleware", "get_retry_request"],
    "tinyscrapy.downloadermiddlewares.cookies": ["CookiesMiddleware"],
    "tinyscrapy.downloadermiddlewares.defaultheaders": ["DefaultHeadersMiddleware"],
    "tinyscrapy.downloadermiddlewares.useragent": ["UserAgentMiddleware"],
    "tinyscrapy.downloadermiddlewares.httpproxy": ["HttpProxyMiddleware"],
    "tinyscrapy.downloadermiddlewares.httpauth": ["HttpAuthMiddleware"],
    "tinyscrapy.downloadermiddlewares.httpcache": ["HttpCacheMiddleware"],
    "tinyscrapy.downloadermiddlewares.robotstxt": ["RobotsTxtMiddleware"],
    "tinyscrapy.spidermiddlewares.referer": ["RefererMiddleware", "POLICY_NO_REFERRER",
                                             "NoReferrerPolicy", "DefaultReferrerPolicy"],
    "tinyscrapy.settings.default_settings": ["RETRY_EXCEPTIONS", "DOWNLOAD_TIMEOUT"],
    "tinyscrapy.item": ["Item", "Field"],
    "tinyscrapy.loader": ["ItemLoader"],
    "tinyscrapy.loader.processors": ["TakeFirst", "MapCompose", "Join"],
    "tinyscrapy.spidermiddlewares.httperror": ["HttpError"],
    "tinyscrapy.utils.response": ["open_in_browser", "get_base_url"],
}

# modules that only re-export: their bodies hold imports, __all__ and docstrings
FACES = ["__init__.py", "exceptions.py", "http/__init__.py", "spiders/__init__.py",
         "linkextractors/__init__.py", "selector/__init__.py", "item.py",
         "loader/__init__.py", "loader/processors.py", "utils/__init__.py",
         "utils/log.py", "utils/defer.py", "utils/reactor.py", "utils/sitemap.py",
         "utils/project.py", "spidermiddlewares/__init__.py", "spidermiddlewares/httperror.py",
         "downloadermiddlewares/__init__.py", "link/__init__.py", "linkextractors/lxmlhtml.py",
         "utils/requestutils.py", "utils/test.py", "utils/misc.py", "utils/python.py",
         "utils/httpobj.py", "utils/spiderutils.py"]


def modules():
    """(dotted name, path) of every module of the package."""
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                yield rel.removesuffix(".__init__"), path


def top_level_imports(path, dotted):
    """The tinyscrapy modules C{path} imports when it is imported (not in functions)."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    package = dotted if path.endswith("__init__.py") else dotted.rpartition(".")[0]
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("tinyscrapy")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            if base.startswith("tinyscrapy"):
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    found.add(sub if importlib.util.find_spec(base) and _is_module(sub)
                              else base)
    return found


def _is_module(dotted):
    path = os.path.join(ROOT, *dotted.split("."))
    return os.path.isfile(path + ".py") or os.path.isdir(path)


class LayoutTests(unittest.TestCase):
    """The house shows its layers."""

    def test_scrapy_paths_import(self):
        """Each of Scrapy's public paths imports and offers its names."""
        for path, names in SCRAPY_PATHS.items():
            module = importlib.import_module(path)
            for name in names:
                self.assertTrue(hasattr(module, name), f"{path} has no {name}")

    def test_top_level_is_small(self):
        """The top level holds the core, the shared modules and the faces: about 15."""
        top = [n for n in os.listdir(PACKAGE)
               if n.endswith(".py") and n not in ("__init__.py", "__main__.py")]
        self.assertLessEqual(len(top), 15, sorted(top))

    def test_module_names_say_which(self):
        """No module name is used twice, except by commands named after their command."""
        seen = defaultdict(list)
        for dotted, path in modules():
            if not path.endswith("__init__.py") and ".commands." not in dotted:
                seen[os.path.basename(path)].append(dotted)
        self.assertEqual({k: v for k, v in seen.items() if len(v) > 1}, {})

    def test_faces_only_reexport(self):
        """The re-exporting faces define nothing but C{__all__} (and one lazy lookup)."""
        for face in FACES:
            tree = ast.parse(open(os.path.join(PACKAGE, face), encoding="utf-8").read())
            for node in tree.body:
                allowed = (ast.Import, ast.ImportFrom, ast.Expr, ast.Assign)
                if isinstance(node, ast.FunctionDef):
                    self.assertEqual(node.name, "__getattr__", face)
                else:
                    self.assertIsInstance(node, allowed, f"{face}: {ast.dump(node)[:80]}")

    def test_no_import_cycles(self):
        """Module-level imports between tinyscrapy's modules form no cycle."""
        graph = {dotted: top_level_imports(path, dotted) for dotted, path in modules()}
        state = {}

        def visit(node, trail):
            if state.get(node) == "done":
                return
            self.assertNotEqual(state.get(node), "open",
                                "import cycle: " + " -> ".join(trail + [node]))
            state[node] = "open"
            for dep in sorted(graph.get(node, ())):
                if dep != node and not node.startswith(dep + "."):
                    visit(dep, trail + [node])
            state[node] = "done"

        for node in sorted(graph):
            visit(node, [])

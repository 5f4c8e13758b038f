"""
L{Command}: C{python -m tinyscrapy COMMAND ...}.

Usage errors (an unknown command or option, a spider that does not import, a bad setting)
print one line on stderr and exit with status 2, without a traceback. A crawl that ran to
its end exits 0, whatever pages failed on the way (they are in the stats).
"""

import argparse
import importlib.util
import inspect
import logging
import os
import sys

import tinyscrapy
from tinyscrapy.components import load_object
from tinyscrapy.errors import UsageError
from tinyscrapy.settings import Settings, parse_value

DEFAULT_SPIDERS = ("spiders.books.BooksSpider", "spiders.quotes.QuotesSpider")


class _Parser(argparse.ArgumentParser):
    """argparse that raises L{UsageError} instead of printing usage and exiting."""

    def error(self, message):
        raise UsageError(message)


def _add_common_options(parser):
    parser.add_argument("-o", dest="append", action="append", default=[], metavar="FILE",
                        help="append items to FILE (.jsonl .json .csv; - for stdout)")
    parser.add_argument("-O", dest="overwrite", action="append", default=[], metavar="FILE",
                        help="write items to FILE, replacing it")
    parser.add_argument("-s", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE", help="set a setting (repeatable)")
    parser.add_argument("-a", dest="spargs", action="append", default=[],
                        metavar="NAME=VALUE", help="set a spider argument (repeatable)")
    parser.add_argument("-L", dest="loglevel", metavar="LEVEL",
                        help="log level (DEBUG, INFO, WARNING, ERROR)")
    parser.add_argument("--jobdir", metavar="DIR", help="persistent frontier: pause with "
                        "Ctrl-C, resume by running again; each spider keeps its own in "
                        "DIR/<spider name> (the JOBDIR setting)")
    parser.add_argument("--scheduler", metavar="URL", help="shared frontier, e.g. "
                        "redis://127.0.0.1:6379/0 (the SCHEDULER_URL setting)")
    parser.add_argument("--trace", metavar="FILE",
                        help="write the engine timeline as HTML (the TRACE_FILE setting)")


def build_parser():
    parser = _Parser(prog="python -m tinyscrapy",
                     description="Scrapy's model, TinyScrapy's size, Twisted underneath.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    run = commands.add_parser("run", help="run spider classes (default: the demo spiders)")
    run.add_argument("spiders", nargs="*", metavar="SPIDER",
                     help="dotted class path, e.g. spiders.books.BooksSpider")
    _add_common_options(run)
    runspider = commands.add_parser("runspider", help="run the spider defined in a file")
    runspider.add_argument("file", metavar="FILE.py")
    _add_common_options(runspider)
    crawl = commands.add_parser("crawl", help="follow same-host links from URLs, no code")
    crawl.add_argument("urls", nargs="+", metavar="URL")
    _add_common_options(crawl)
    demo = commands.add_parser("demo", help="serve the embedded demo site")
    demo.add_argument("--port", type=int, default=8800)
    bench = commands.add_parser("bench", help="a quick speed check on a generated site")
    bench.add_argument("--pages", type=int, default=2000)
    bench.add_argument("-s", dest="settings", action="append", default=[],
                       metavar="NAME=VALUE", help="set a setting (repeatable)")
    bench.add_argument("-L", dest="loglevel", metavar="LEVEL", help="log level")
    commands.add_parser("settings", help="every setting and its default (Markdown)")
    commands.add_parser("version", help="print the version")
    commands.add_parser("list", help="list the spiders `run` can find")
    return parser


class Command:
    """
    One invocation of the command line.

    @ivar args: the parsed arguments.
    @ivar settings: the L{Settings} built from C{-s} and C{-o}.
    """

    def __init__(self, argv):
        self.args = build_parser().parse_args(argv)
        if self.args.command is None:
            raise UsageError("no command given (try: run, runspider, crawl, demo, list, "
                             "version; -h for help)")
        self.settings = Settings()

    def run(self):
        """Dispatch to C{cmd_<name>}. @return: the exit status."""
        return getattr(self, "cmd_" + self.args.command)()

    # commands

    def cmd_version(self):
        print(f"tinyscrapy {tinyscrapy.__version__}")
        return 0

    def cmd_settings(self):
        from tinyscrapy.settings import defaults_table
        print(defaults_table())
        return 0

    def cmd_list(self):
        for path in self._find_spiders():
            print(path)
        return 0

    def cmd_run(self):
        paths = self.args.spiders or list(DEFAULT_SPIDERS)
        if not self.args.spiders:
            self._require_spiders_folder()
        else:
            sys.path.insert(0, os.getcwd())
        return self._crawl([load_spider_class(path) for path in paths])

    def cmd_runspider(self):
        return self._crawl([spider_class_from_file(self.args.file)])

    def cmd_crawl(self):
        from tinyscrapy.sitecrawl import SiteCrawler
        self.settings.update(SiteCrawler.command_settings, "project")
        return self._crawl([SiteCrawler], extra_args={"start_urls": list(self.args.urls)})

    def cmd_demo(self):
        from twisted.internet import reactor

        from tinyscrapy.demo import listen
        port = listen(self.args.port, reactor=reactor)
        address = port.getHost()
        print(f"demo site on http://{address.host}:{address.port}/ (Ctrl-C stops)", flush=True)
        reactor.run()
        return 0

    def cmd_bench(self):
        from tinyscrapy.bench import run_bench
        self.args.append, self.args.overwrite = [], []
        self.settings.set("FEEDS", {}, "project")
        if not self.args.loglevel:
            self.settings.set("LOG_LEVEL", "WARNING", "project")
        self._apply_options()
        return run_bench(self.args.pages, self.settings)

    # shared by run, runspider and crawl

    def _crawl(self, spider_classes, extra_args=None):
        from tinyscrapy.crawler import CrawlerProcess
        self._apply_options()
        spargs = dict(_pairs(self.args.spargs, "-a"))
        spargs.update(extra_args or {})
        demo_url = self._serve_demo_if_needed(spider_classes, spargs)
        process = CrawlerProcess(self.settings)
        for spidercls in spider_classes:
            kwargs = dict(spargs)
            if demo_url and getattr(spidercls, "uses_demo_site", False):
                kwargs["base_url"] = demo_url
            process.crawl(spidercls, **kwargs)
        process.start()
        if process.usage_error is not None:  # e.g. a shared frontier that cannot connect
            raise process.usage_error
        return 1 if process.failed or process.forced else 0

    def _apply_options(self):
        args = self.args
        level = args.loglevel or "INFO"
        for name, value in _pairs(args.settings, "-s"):
            self.settings.set(name, parse_value(value, name), "cmdline")
        if args.loglevel:
            self.settings.set("LOG_LEVEL", args.loglevel.upper(), "cmdline")
        for name, option in (("JOBDIR", "jobdir"), ("SCHEDULER_URL", "scheduler"),
                             ("TRACE_FILE", "trace")):
            value = getattr(args, option, None)  # `bench` has none of these
            if value is not None:
                self.settings.set(name, value, "cmdline")
        level = self.settings.get("LOG_LEVEL")
        configure_logging(level, self.settings.get("LOG_FORMAT"))
        feeds = {}
        for path, overwrite in [(p, False) for p in args.append] + \
                [(p, True) for p in args.overwrite]:
            feeds[path] = {"format": feed_format(path), "overwrite": overwrite}
        if feeds:
            self.settings.set("FEEDS", feeds, "cmdline")
        elif "FEEDS" not in self.settings.overridden():
            # items go to stdout unless a feed is configured somewhere (even as {}); set as
            # a default, so a spider's custom_settings FEEDS still wins
            self.settings.set("FEEDS", {"-": {"format": "jsonlines"}}, "default")

    def _serve_demo_if_needed(self, spider_classes, spargs):
        """Serve the demo site in this reactor for spiders that use it, unless the user
        gave C{-a base_url=...}. With C{JOBDIR}, on the port it had when the job started
        (kept in C{JOBDIR/demo_port}), so that saved requests point at it on a resume.
        @return: the site's URL, or None. @raise UsageError: that port is taken."""
        if "base_url" in spargs or not any(getattr(cls, "uses_demo_site", False)
                                           for cls in spider_classes):
            return None
        from twisted.internet.error import CannotListenError

        from tinyscrapy.demo import listen
        from tinyscrapy.frontier.jobdir import save_demo_port, saved_demo_port
        jobdir = self.settings.get("JOBDIR")
        port = saved_demo_port(jobdir) if jobdir else 0
        try:
            address = listen(port).getHost()
        except CannotListenError as e:
            raise UsageError(f"--jobdir {jobdir}: the demo site must listen on port {port} "
                             f"again, where the saved requests point, but cannot "
                             f"({e.socketError}; another crawl with this directory?): free "
                             f"the port, or give -a base_url=URL") from None
        if jobdir and not port:
            save_demo_port(jobdir, address.port)
        url = f"http://{address.host}:{address.port}"
        logging.getLogger("tinyscrapy.demo").info("serving the demo site on %s", url)
        return url

    def _require_spiders_folder(self):
        folder = os.path.join(os.getcwd(), "spiders")
        if not os.path.isfile(os.path.join(folder, "__init__.py")):
            raise UsageError(f"no spiders/ package in {os.getcwd()}: run from the repository "
                             "root, or name spider classes (run package.module.Class)")
        sys.path.insert(0, os.getcwd())

    def _find_spiders(self):
        """Dotted paths of the Spider classes in ./spiders/*.py."""
        self._require_spiders_folder()
        from tinyscrapy.spider import Spider
        found = []
        for filename in sorted(os.listdir("spiders")):
            if filename.endswith(".py") and not filename.startswith("_"):
                module = importlib.import_module("spiders." + filename[:-3])
                found += [f"{module.__name__}.{cls.__name__}"
                          for cls in _spider_classes(module, Spider)]
        return found


def _pairs(items, flag):
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"{flag} expects NAME=VALUE, got {item!r}")
        yield name.strip(), value


def feed_format(path):
    """The feed format for a file name, from its extension."""
    from tinyscrapy.items.feeds import format_for_path
    return format_for_path(path)


def load_spider_class(path):
    """Import a Spider subclass from its dotted path. @raise UsageError: it is not one."""
    from tinyscrapy.spider import Spider
    obj = load_object(path)
    if not (inspect.isclass(obj) and issubclass(obj, Spider)):
        raise UsageError(f"{path!r} is not a Spider subclass")
    return obj


def spider_class_from_file(filename):
    """
    The Spider subclass defined in a Python file (the last one, as in Scrapy).

    @raise UsageError: the file is missing, does not import, or defines no spider.
    """
    from tinyscrapy.spider import Spider
    if not os.path.isfile(filename):
        raise UsageError(f"no such file: {filename}")
    name = "_tinyscrapy_runspider_" + os.path.splitext(os.path.basename(filename))[0]
    spec = importlib.util.spec_from_file_location(name, filename)
    if spec is None:
        raise UsageError(f"cannot load {filename}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(filename)))
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise UsageError(f"cannot import {filename}: {type(e).__name__}: {e}") from None
    classes = _spider_classes(module, Spider)
    if not classes:
        raise UsageError(f"no Spider subclass defined in {filename}")
    return classes[-1]


def _spider_classes(module, base):
    """Spider subclasses defined in C{module} itself, in definition order."""
    return [obj for obj in vars(module).values()
            if inspect.isclass(obj) and issubclass(obj, base) and obj is not base
            and obj.__module__ == module.__name__]


def configure_logging(level, fmt):
    """Log to stderr at C{level}; Twisted's own log goes through the same handler."""
    level_value = logging.getLevelName(str(level).upper())
    if not isinstance(level_value, int):
        raise UsageError(f"unknown log level {level!r}")
    logging.basicConfig(level=level_value, format=fmt, stream=sys.stderr, force=True)
    # Twisted announces every connection factory at INFO; keep that for DEBUG runs
    logging.getLogger("twisted").setLevel(max(level_value, logging.WARNING)
                                          if level_value > logging.DEBUG else level_value)
    from twisted.python import log
    log.PythonLoggingObserver().start()


def main(argv=None):
    """Run the command line; exit with its status."""
    try:
        status = Command(sys.argv[1:] if argv is None else argv).run()
    except UsageError as e:
        print(f"tinyscrapy: error: {e}", file=sys.stderr)
        status = 2
    except KeyboardInterrupt:
        status = 130
    sys.exit(status)

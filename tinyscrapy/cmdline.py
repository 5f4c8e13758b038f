"""
L{Command}: C{python -m tinyscrapy COMMAND ...}.

Each command is a module of L{tinyscrapy.commands}; this module parses the command line,
dispatches to the command, and keeps what the crawling commands share (L{Command.crawl}).

C{--as-scrapy} (or C{TINYSCRAPY_AS_SCRAPY=1}) serves C{import scrapy} from tinyscrapy for
the command (L{tinyscrapy.scrapyfinder}), which happens by itself inside a Scrapy project
(a C{scrapy.cfg}) where Scrapy is not installed; it is done before the project's settings
or spiders are imported.

Usage errors (an unknown command or option, a spider that does not import, a bad setting,
a start URL that cannot be fetched) print one line on stderr and exit with status 2,
without a traceback. A crawl that ran to its end exits 0, whatever pages failed on the way
(they are in the stats), unless nothing at all was fetched: when every start request was
refused, timed out or forbidden by robots.txt, it ends with one line saying so and exits 1.
"""

import argparse
import importlib
import logging
import sys

from tinyscrapy.commands import NAMES
from tinyscrapy.exceptions import UsageError
from tinyscrapy.settings import Settings, parse_value


class _Parser(argparse.ArgumentParser):
    """argparse that raises L{UsageError} instead of printing usage and exiting."""

    def error(self, message):
        raise UsageError(message)

    def add_common_options(self):
        """The options of every crawling command (C{run}, C{runspider}, C{crawl})."""
        self.add_argument("-o", dest="append", action="append", default=[], metavar="FILE",
                          help="append items to FILE (.jsonl .json .csv; - for stdout)")
        self.add_argument("-O", dest="overwrite", action="append", default=[],
                          metavar="FILE", help="write items to FILE, replacing it")
        self.add_argument("-s", dest="settings", action="append", default=[],
                          metavar="NAME=VALUE", help="set a setting (repeatable)")
        self.add_argument("-a", dest="spargs", action="append", default=[],
                          metavar="NAME=VALUE", help="set a spider argument (repeatable)")
        self.add_argument("--nolog", action="store_true",
                          help="log nothing (the LOG_ENABLED setting)")
        self.add_argument("--logfile", metavar="FILE",
                          help="log to FILE instead of stderr (the LOG_FILE setting)")
        self.add_argument("-L", dest="loglevel", metavar="LEVEL",
                          help="log level (DEBUG, INFO, WARNING, ERROR)")
        self.add_argument("--jobdir", metavar="DIR", help="persistent frontier: pause with "
                          "Ctrl-C, resume by running again; each spider keeps its own in "
                          "DIR/<spider name> (the JOBDIR setting)")
        self.add_argument("--scheduler", metavar="URL", help="shared frontier, e.g. "
                          "redis://127.0.0.1:6379/0 (the SCHEDULER_URL setting)")
        self.add_argument("--trace", metavar="FILE",
                          help="write the engine timeline as HTML (the TRACE_FILE setting); "
                          "- prints one line per event on stderr instead")


def command_module(name):
    """The module of L{tinyscrapy.commands} that runs command C{name}."""
    return importlib.import_module("tinyscrapy.commands." + name)


AS_SCRAPY_HELP = ("serve `import scrapy` from tinyscrapy, so that a Scrapy project and its "
                  "plugins run unchanged (also TINYSCRAPY_AS_SCRAPY=1; on by itself beside a "
                  "scrapy.cfg when Scrapy is not installed)")


def build_parser():
    parser = _Parser(prog="python -m tinyscrapy",
                     description="Scrapy's model, TinyScrapy's size, Twisted underneath. "
                     "`python -m tinyscrapy COMMAND -h` tells what a command does.")
    parser.add_argument("--as-scrapy", action="store_true", default=None,
                        help=AS_SCRAPY_HELP)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in NAMES:
        module = command_module(name)
        command = commands.add_parser(
            name, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP))
        # after the command too; SUPPRESS, or the command's default would hide the one
        # given before it
        command.add_argument("--as-scrapy", action="store_true", default=argparse.SUPPRESS,
                             help=AS_SCRAPY_HELP)
        module.add_arguments(command)
    return parser


def check_command_name(argv):
    """
    @raise UsageError: the first argument is not an option and names no command (with
        the closest command, for a typo).
    """
    if not argv or argv[0].startswith("-") or argv[0] in NAMES:
        return
    import difflib
    word = argv[0]
    guesses = difflib.get_close_matches(word, NAMES, n=1, cutoff=0.6)
    hint = f": did you mean `{guesses[0]}`?" if guesses else ""
    raise UsageError(f"unknown command {word!r}{hint} (commands: {', '.join(NAMES)}; "
                     f"-h for help)")


class Command:
    """
    One invocation of the command line.

    @ivar args: the parsed arguments.
    @ivar settings: the L{Settings} built from C{-s} and C{-o}.
    """

    def __init__(self, argv):
        check_command_name(argv)
        self.args = build_parser().parse_args(_attach_dash_values(argv))
        if self.args.command is None:
            raise UsageError("no command given (try: run, runspider, crawl, demo, list, "
                             "version; -h for help)")
        from tinyscrapy.scrapyfinder import install_for_command
        # before the project's settings module and spiders import (they may import scrapy)
        self.as_scrapy = install_for_command(self.args.as_scrapy)
        from tinyscrapy.utils.project import project_values
        # inside a project (tinyscrapy.cfg), its settings module is the "project" layer
        self.settings = Settings(project_values(), "project")
        if self.settings["ADDONS"]:  # where the spiders are may be an add-on's to say
            from tinyscrapy.addons import AddonManager
            AddonManager.load_pre_crawler_settings(self.settings)

    def run(self):
        """Dispatch to the command's module. @return: the exit status."""
        return command_module(self.args.command).run(self)

    # shared by run, runspider and crawl

    def crawl(self, spider_classes, extra_args=None):
        """Run C{spider_classes} in one L{CrawlerProcess}. @return: the exit status."""
        from tinyscrapy.crawler import CrawlerProcess
        from tinyscrapy.extensions.feedexport import check_shared_feeds
        self.apply_options()
        check_shared_feeds(self.settings, len(spider_classes))
        spargs = dict(setting_pairs(self.args.spargs, "-a"))
        spargs.update(extra_args or {})
        from tinyscrapy.utils.reactor import install_for
        install_for(self.settings, spider_classes)  # TWISTED_REACTOR, before the demo site
        demo_url = self._serve_demo_if_needed(spider_classes, spargs)
        process = CrawlerProcess(self.settings)
        crawlers = []
        for spidercls in spider_classes:
            kwargs = dict(spargs)
            if demo_url and getattr(spidercls, "uses_demo_site", False):
                kwargs["base_url"] = demo_url
            crawlers.append(process.create_crawler(spidercls))
            d = process.crawl(crawlers[-1], **kwargs)
            d.addErrback(_told)  # logged once by the process, which records the status
        process.start()
        if process.usage_error is not None:  # e.g. a shared frontier that cannot connect
            raise process.usage_error
        status = 1 if process.failed or process.forced else 0
        from tinyscrapy.utils.log import nothing_fetched
        from tinyscrapy.utils.reactor import asyncio_needed
        for crawler in crawlers:
            # every start request was refused, timed out, ...; or asyncio code failed
            message = nothing_fetched(crawler) or asyncio_needed(crawler)
            if message is not None:
                logging.getLogger("tinyscrapy.crawler").error("%s", message)
                status = 1
        return status

    def apply_options(self):
        """Turn C{-s}, C{-L}, C{--jobdir}, C{--scheduler}, C{--trace}, C{-o} and C{-O} into
        settings, and set up logging."""
        args = self.args
        for name, value in setting_pairs(args.settings, "-s"):
            self.settings.set(name, parse_value(value, name), "cmdline")
        if args.loglevel:
            self.settings.set("LOG_LEVEL", args.loglevel.upper(), "cmdline")
        for name, option in (("JOBDIR", "jobdir"), ("SCHEDULER_URL", "scheduler"),
                             ("TRACE_FILE", "trace")):
            value = getattr(args, option, None)  # `bench` has none of these
            if value is not None:
                self.settings.set(name, value, "cmdline")
        if getattr(args, "nolog", False):
            self.settings.set("LOG_ENABLED", False, "cmdline")
        if getattr(args, "logfile", None):
            self.settings.set("LOG_FILE", args.logfile, "cmdline")
        configure_logging(self.settings)
        if getattr(self, "as_scrapy", False):
            logging.getLogger("tinyscrapy.scrapyfinder").debug(
                "`import scrapy` is served by tinyscrapy (docs/porting.md)")
        feeds = {}
        for value, overwrite in [(p, False) for p in args.append] + \
                [(p, True) for p in args.overwrite]:
            path, fmt = feed_path_and_format(value, self.settings)
            feeds[path] = {"overwrite": overwrite} if fmt is None else \
                {"format": fmt, "overwrite": overwrite}
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


def _told(_failure):
    """A crawl's failure, logged by the process already (never "Unhandled error")."""
    return None


def setting_pairs(items, flag):
    """C{(name, value)} of each C{NAME=VALUE} of option C{flag}.
    @raise UsageError: one is not C{NAME=VALUE}."""
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"{flag} expects NAME=VALUE, got {item!r}")
        yield name.strip(), value


def _attach_dash_values(argv):
    """C{-o -:json} as argparse can read it (C{-o-:json}): a value that starts with a dash
    would be taken for an option."""
    out = []
    for arg in argv:
        if out and out[-1] in ("-o", "-O") and arg.startswith("-:"):
            out[-1] += arg
        else:
            out.append(arg)
    return out


def feed_path_and_format(value, settings):
    """
    C{-o}'s value as Scrapy reads it: C{URI}, or C{URI:FORMAT} (C{items.txt:jsonlines},
    C{-:json} for stdout) when what follows the last colon is a format of
    C{FEED_EXPORTERS}.

    @return: C{(uri, format)}; the format is None when the feed exporter tells it from
        the extension (with the spider's settings too: its C{FEED_EXPORTERS}).
    """
    formats = {**settings.getdict("FEED_EXPORTERS_BASE"), **settings.getdict("FEED_EXPORTERS")}
    uri, colon, fmt = value.rpartition(":")
    if colon and uri and formats.get(fmt) is not None:
        return uri, fmt
    return value, None


def configure_logging(settings):
    """Log to stderr (or C{LOG_FILE}) at C{LOG_LEVEL}; Twisted's own log goes through the
    same handler (L{tinyscrapy.utils.log.configure_logging}, Scrapy's way)."""
    from tinyscrapy.utils.log import configure_logging as configure
    configure(settings)


def main(argv=None):
    """Run the command line; exit with its status."""
    try:
        status = Command(sys.argv[1:] if argv is None else argv).run()
    except UsageError as e:
        print(f"tinyscrapy: error: {e}", file=sys.stderr)
        status = 2
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:  # `... | head`: the reader left; no traceback for that
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 1
    sys.exit(status)
